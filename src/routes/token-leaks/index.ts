// /api/v1/token-leaks: leak reports from GitHub's secret scanning partner program. Off (404, like
// an unknown route) unless LEAK_REPORT_PUBLIC_KEYS names the keys reports are signed with. The
// signature covers the raw body bytes, so this folder parses JSON itself: the bytes are checked
// first (401 before anything is read from them), then parsed as strictly as every other body.
import { ApiError, notFound } from '../../http/errors.js';
import { strictJsonRefusal } from '../../http/strict-json.js';
import { verifiedSigner } from '../../tokens/leak-report-keys.js';
import type { App } from '../../types.js';
import reportTokenLeaks from './report.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once a leak report's signature verified: the identifier of the key that signed it. */
    leakReportSigner?: string;
  }
}

export const KEY_IDENTIFIER_HEADER = 'github-public-key-identifier';
export const SIGNATURE_HEADER = 'github-public-key-signature';

const unsignedReport = () =>
  new ApiError(
    401,
    'unauthorized',
    'The report must be signed by a configured key (Github-Public-Key-Identifier, Github-Public-Key-Signature)',
    undefined,
    { 'www-authenticate': 'Signature realm="coldtrack-leak-reports"' },
  );

export default async function tokenLeakRoutes(app: App) {
  const keys = app.config.leakReportKeys;
  const signerOf = (headers: Record<string, string | string[] | undefined>, body: Buffer) =>
    keys ? verifiedSigner(keys, headers[KEY_IDENTIFIER_HEADER], headers[SIGNATURE_HEADER], body) : null;

  // turned off: the answer an unknown route gives (src/plugins/error-handler.ts), after the same
  // per-IP public limit an unknown path counts against
  app.addHook('onRequest', (request, reply, done) => {
    if (keys) return done();
    const path = request.url.split('?')[0]!;
    void reply.code(404).send(notFound(`No route for ${request.method} ${path.slice(0, 200)}`).toBody());
  });

  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    const signer = signerOf(request.headers, raw as Buffer);
    if (!signer) return done(unsignedReport(), undefined);
    request.leakReportSigner = signer;
    const text = (raw as Buffer).toString('utf8');
    parseJson(request, text, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      const refusal = strictJsonRefusal(text, value);
      return refusal ? done(refusal, undefined) : done(null, value);
    });
  });
  // a request without a body never reaches the parser: its (empty) body must be signed all the same
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.leakReportSigner) return done();
    const signer = signerOf(request.headers, Buffer.alloc(0));
    if (!signer) return done(unsignedReport());
    request.leakReportSigner = signer;
    done();
  });

  await app.register(reportTokenLeaks);
}
