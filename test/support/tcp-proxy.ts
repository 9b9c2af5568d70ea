import { once } from 'node:events';
import {
  createConnection,
  createServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';

/**
 * A TCP proxy between the service and a dependency (PostgreSQL), which a test
 * can cut: every open connection is dropped and new ones are refused until
 * the link is restored, as when the network or the server goes away.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private cut = false;
  /** Connections still let through while cut (admit()). */
  private admitted = 0;
  private server: Server;
  port: number;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    proxy.server = createServer((client) => proxy.accept(client));
    proxy.server.listen(0, '127.0.0.1');
    await once(proxy.server, 'listening');
    proxy.port = (proxy.server.address() as AddressInfo).port;
    return proxy;
  }

  /** Drops every connection, and refuses new ones until restore(). */
  cutOff(): void {
    this.cut = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.cut = false;
  }

  /** While cut: lets the next `count` new connections through (then refuses again). */
  admit(count: number): void {
    this.admitted = count;
  }

  async stop(): Promise<void> {
    this.cutOff();
    this.server.close();
    await once(this.server, 'close');
  }

  private accept(client: Socket): void {
    if (this.cut && this.admitted === 0) {
      client.destroy();
      return;
    }
    if (this.cut) this.admitted--;
    const upstream = createConnection(this.targetPort, this.targetHost);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
