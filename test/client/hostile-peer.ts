// A real HTTP server on a loopback port that answers what a test scripts: hostile headers (a
// Retry-After no timer can hold, a rate-limit window ending in centuries), bodies that are not
// JSON, error messages that echo the request's Authorization header. The client speaks real HTTP
// to it; nothing of the client is replaced.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  /** a string is sent as is; anything else as JSON */
  body?: unknown;
  /** never answer (the client's timeout ends the request) */
  hang?: boolean;
}

export interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  at: number;
}

export interface HostilePeer {
  url: string;
  readonly seen: readonly SeenRequest[];
  close(): Promise<void>;
}

export const EMPTY_PAGE = {
  data: [],
  meta: {
    company_id: 1,
    filters: {},
    pagination: { page: 1, page_size: 1000, total_count: 0, total_pages: 0, has_next: false, has_previous: false },
  },
};

/** `answer(n, request)`: the n-th request's answer (n from 1). */
export async function hostilePeer(answer: (n: number, request: SeenRequest) => Answer): Promise<HostilePeer> {
  const seen: SeenRequest[] = [];
  const server = http.createServer((request, response) => {
    const entry = { method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization, at: Date.now() };
    seen.push(entry);
    const { status = 200, headers = {}, body = EMPTY_PAGE, hang = false } = answer(seen.length, entry);
    if (hang) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    response.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json', ...headers });
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
