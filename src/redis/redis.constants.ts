/** Injection token of the service's own ioredis connection. */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
