import { clearRedisPrefixes, letClosingConnectionsEnd } from './redis-prefixes.js';

afterAll(async () => {
  await clearRedisPrefixes();
  await letClosingConnectionsEnd();
}, 10_000);
