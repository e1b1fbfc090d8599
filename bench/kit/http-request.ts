// One HTTP request to a server under test, answered as status, body and headers (for readiness
// probes, the revocation rounds and the event-loop reads; the load itself goes through autocannon).
import http from 'node:http';

export interface HttpAnswer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request; `agent: false` opens a fresh connection (the cluster hands it to the next worker). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: http.Agent | false; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false, timeout: options.timeoutMs ?? 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${options.timeoutMs ?? 30_000} ms: ${url}`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
