// A TCP proxy a test puts between the service and a real server (PostgreSQL, Redis), to play the
// outages an SRE sees: `open` passes traffic, `refuse` cuts every connection and refuses new ones
// (the host is down), `blackHole` cuts every connection and accepts new ones that never answer,
// `swallow` keeps every open connection and stops passing bytes either way (a hung server or a
// network path that drops packets: the client's open connections just go silent). While open,
// `replyDelayMs` holds every reply back that long (a slow link or a busy server).
import net from 'node:net';
import { freePort } from '../../src/free-port.js';

export type ProxyMode = 'open' | 'refusing' | 'black-hole' | 'swallowing';

export class TcpProxy {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  mode: ProxyMode = 'refusing';
  replyDelayMs = 0;

  constructor(
    readonly port: number,
    private readonly upstream: { host: string; port: number },
  ) {}

  /** Sockets open now on both sides (client and upstream). */
  get openSockets() {
    return this.sockets.size;
  }

  private track(socket: net.Socket) {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  async open() {
    this.mode = 'open';
    if (this.server) return;
    const server = net.createServer((client) => {
      this.track(client);
      if (this.mode !== 'open') return; // accepted, never answered
      const upstream = net.connect(this.upstream.port, this.upstream.host);
      this.track(upstream);
      // bytes pass only while the proxy is open: swallowing keeps both sockets and drops them
      client.on('data', (chunk) => this.mode === 'open' && upstream.write(chunk));
      const reply = (chunk: Buffer) => this.mode === 'open' && client.write(chunk);
      // timers of one delay fire in order, so the replies stay in sequence
      upstream.on('data', (chunk: Buffer) => (this.replyDelayMs ? setTimeout(reply, this.replyDelayMs, chunk) : reply(chunk)));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  private dropConnections() {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  async refuse() {
    this.mode = 'refusing';
    this.dropConnections();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async blackHole() {
    await this.open();
    this.mode = 'black-hole';
    this.dropConnections();
  }

  async swallow() {
    await this.open();
    this.mode = 'swallowing';
  }

  /**
   * Traffic passes again. Connections that were swallowed stay broken (their protocol state is
   * lost), so they are cut: the client notices and reconnects, as after a real network outage.
   */
  async resume() {
    if (this.mode === 'swallowing') this.dropConnections();
    await this.open();
  }
}

/**
 * An open proxy in front of the server `url` names (PostgreSQL when it names no port, else
 * `defaultPort`), refusing again when the test ends, and `url` with the proxy's port: what the
 * service is pointed at to be cut off from that server.
 */
export async function proxyInFrontOf(
  t: { teardown(fn: () => unknown): void },
  url: string,
  defaultPort = 5432,
): Promise<{ proxy: TcpProxy; url: string }> {
  const upstream = new URL(url);
  const proxy = new TcpProxy(await freePort(), { host: upstream.hostname, port: Number(upstream.port || defaultPort) });
  await proxy.open();
  t.teardown(() => proxy.refuse());
  const proxied = new URL(url);
  proxied.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: proxied.toString() };
}
