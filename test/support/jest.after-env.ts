import { clearRedisPrefixes } from './redis-prefixes.js';

afterAll(() => clearRedisPrefixes());
