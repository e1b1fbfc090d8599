// A loopback port nobody listens on right now: for the embedded PostgreSQL, and for tests and
// benchmarks that start a cluster (every worker must be given the same number).
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
