import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';

/** A local port with nothing listening on it (for a process to take, or to fail against). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}
