// /console: the employee token console (console/), served by the service itself from the build
// committed in console/build/ (dist/console/build/ after `npm run build`). A handful of small
// files, read once at start-up and served from memory: no file system access per request, so no
// path a request names can reach anything but these files. Strict headers on every answer: the
// page runs only its own script and style, talks only to this origin, and cannot be framed.
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { ApiError, notFound } from '../http/errors.js';
import type { App } from '../types.js';

export const CONSOLE_BUILD_DIR = fileURLToPath(new URL('../../console/build/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

// the page may hold a secret (the JWT typed in, a new token on screen): never stored by a cache;
// assets are named by their content hash, so a name never changes meaning
const PAGE_CACHE = 'no-store';
const ASSET_CACHE = 'public, max-age=31536000, immutable';

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

interface Asset {
  body: Buffer;
  type: string;
}

/** index.html and the hashed assets; null when the build is missing (a broken checkout or image). */
function readBuild(dir: string): { page: Buffer; assets: Map<string, Asset> } | null {
  try {
    const page = readFileSync(`${dir}index.html`);
    const assets = new Map<string, Asset>();
    for (const name of readdirSync(`${dir}assets`)) {
      const type = CONTENT_TYPES[extname(name)];
      if (type) assets.set(name, { body: readFileSync(`${dir}assets/${name}`), type });
    }
    return { page, assets };
  } catch {
    return null;
  }
}

export interface ConsoleOptions {
  /** Tests serve another build; by default console/build/. */
  buildDir?: string;
}

export default async function consoleRoutes(app: App, options: ConsoleOptions) {
  const build = readBuild(options.buildDir ?? CONSOLE_BUILD_DIR);
  if (!build) app.log.warn(`the token console is not built (no ${options.buildDir ?? CONSOLE_BUILD_DIR}): run npm run build:console`);

  // every answer under /console, errors included
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', PAGE_CACHE);
    return payload;
  });

  const page = async (_request: unknown, reply: FastifyReply) => {
    if (!build) throw new ApiError(503, 'unavailable', 'The token console is not built on this server (npm run build:console)');
    return reply.type('text/html; charset=utf-8').header('cache-control', PAGE_CACHE).send(build.page);
  };
  app.get('/console', { schema: { hide: true } }, page);
  app.get('/console/', { schema: { hide: true } }, page);

  app.get<{ Params: { file: string } }>('/console/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const asset = build?.assets.get(request.params.file);
    if (!asset) throw notFound('No such console asset');
    return reply.type(asset.type).header('cache-control', ASSET_CACHE).send(asset.body);
  });
}
