import { enableCompileCache } from 'node:module';

// The compiled code of the service's modules is kept on disk (NODE_COMPILE_CACHE,
// else the OS temp directory) and reused by the next start: a worker comes back
// after a restart, or a new replica after a scale-out, about 100 ms sooner. The
// rest is imported only now, so that it loads through the cache.
enableCompileCache();
await import('./server.js');
