// GET /api/v1/api-tokens/{token_id}/usage: a token's requests per UTC day, by route and answer
// class, and the client it was last used from. Counted in memory by every worker and written by
// the last_used flush (src/tokens/usage.ts): today's figures trail by up to LAST_USED_FLUSH_SECONDS.
import { z } from 'zod';
import { dateParam, DEFAULT_WINDOW_DAYS, formatDay, resolveWindow } from '../../data-surface/window.js';
import { notFound } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';
import { DAY_MS } from '../../time.js';
import { readTokenUsage, TOKEN_USAGE_RETENTION_DAYS, USAGE_CLASSES, type UsageClass } from '../../tokens/usage.js';
import type { App } from '../../types.js';
import { isTokenId, tokenIdParams } from './schema.js';

/** The longest window one request may ask for, in days. */
export const MAX_USAGE_WINDOW_DAYS = 90;

const querystring = z.strictObject({
  from: dateParam.optional().describe(`First UTC day (YYYY-MM-DD); default: ${DEFAULT_WINDOW_DAYS - 1} days before \`to\``),
  to: dateParam.optional().describe('Last UTC day, included (YYYY-MM-DD); default: today. A to before from is refused (400)'),
});

const byClass = z
  .object(Object.fromEntries(USAGE_CLASSES.map((name) => [name, z.number().int()])) as Record<UsageClass, z.ZodNumber>)
  .describe('Requests by answer class: 2xx, 304 (not modified: a conditional request), 4xx (429 apart), 429 (rate limited), 5xx');

const byEndpoint = z
  .array(z.object({ endpoint: z.string().describe('The route, as its URL pattern'), requests: z.number().int(), by_class: byClass }))
  .describe('Routes with at least one request, most requested first');

const usageDay = z.object({
  date: z.string().describe('UTC day, YYYY-MM-DD'),
  requests: z.number().int(),
  by_class: byClass,
  by_endpoint: byEndpoint,
});

const tokenUsage = z
  .object({
    token_id: z.uuid(),
    from: z.string(),
    to: z.string(),
    requests: z.number().int().describe('All requests of the window'),
    by_class: byClass,
    by_endpoint: byEndpoint,
    days: z.array(usageDay).describe('Every day of the window, oldest first, days without requests included'),
    last_used_at: z
      .string()
      .nullable()
      .describe('The last request made with the token, refused ones (a 429) included; accurate to within a minute; null before first use'),
    last_ip: z.string().nullable().describe('Client IP of the last request counted (as TRUST_PROXY resolves it); null before first use'),
    last_user_agent: z
      .string()
      .nullable()
      .describe('User-Agent of the last request counted, cut to 512 characters; null when none was sent'),
  })
  .meta({ id: 'ApiTokenUsage' });

type Counts = Record<UsageClass, number>;
const noCounts = (): Counts => ({ '2xx': 0, '304': 0, '4xx': 0, '429': 0, '5xx': 0 });
const sum = (counts: Counts) => USAGE_CLASSES.reduce((total, name) => total + counts[name], 0);

/** Route -> counts, as the response lists them: most requested first, then by route. */
function endpointList(endpoints: Map<string, Counts>) {
  return [...endpoints]
    .map(([endpoint, counts]) => ({ endpoint, requests: sum(counts), by_class: counts }))
    .sort((a, b) => b.requests - a.requests || (a.endpoint < b.endpoint ? -1 : 1));
}

export default async function apiTokenUsage(app: App) {
  app.get('/:token_id/usage', {
    schema: {
      operationId: 'getApiTokenUsage',
      summary: "Read an API token's usage",
      description:
        'Requests per UTC day with their answer classes and routes, for a window of up to ' +
        `${MAX_USAGE_WINDOW_DAYS} days (default: the last ${DEFAULT_WINDOW_DAYS}), and the client the token was last used from. ` +
        'Every request the token was recognised on counts, refused ones included (403, 404, 429) and 304s (a conditional ' +
        'request whose answer had not changed, which the rate limit does not count); one refused for its ' +
        'credentials (401) does not. Figures are written every LAST_USED_FLUSH_SECONDS, so the last minute may be missing; ' +
        `days older than ${TOKEN_USAGE_RETENTION_DAYS} are not kept.`,
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      params: tokenIdParams,
      querystring,
      response: { 200: tokenUsage, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request) => {
      const { token_id: tokenId } = request.params;
      const window = resolveWindow(request.query, app.clock.now(), MAX_USAGE_WINDOW_DAYS, { start: 'from', end: 'to' });
      // the company check first: another company's token is 404 exactly like an unknown one
      const token = isTokenId(tokenId) ? await app.tokenRepository.findToken(request.employee.companyId, tokenId) : null;
      if (!token) throw notFound('No API token with this id');
      const { rows, lastClient } = await readTokenUsage(app.db, token.id, formatDay(window.start), formatDay(window.end));

      const perDay = new Map<string, Map<string, Counts>>();
      const total = noCounts();
      const totalByEndpoint = new Map<string, Counts>();
      for (const row of rows) {
        let endpoints = perDay.get(row.day);
        if (!endpoints) perDay.set(row.day, (endpoints = new Map()));
        if (!endpoints.has(row.endpoint)) endpoints.set(row.endpoint, noCounts());
        if (!totalByEndpoint.has(row.endpoint)) totalByEndpoint.set(row.endpoint, noCounts());
        endpoints.get(row.endpoint)![row.class] += row.requests;
        totalByEndpoint.get(row.endpoint)![row.class] += row.requests;
        total[row.class] += row.requests;
      }
      const days = [];
      for (let day = window.start; day <= window.end; day += DAY_MS) {
        const date = formatDay(day);
        const endpoints = perDay.get(date) ?? new Map<string, Counts>();
        const byClassOfDay = noCounts();
        for (const counts of endpoints.values()) for (const name of USAGE_CLASSES) byClassOfDay[name] += counts[name];
        days.push({ date, requests: sum(byClassOfDay), by_class: byClassOfDay, by_endpoint: endpointList(endpoints) });
      }
      return {
        token_id: token.id,
        from: formatDay(window.start),
        to: formatDay(window.end),
        requests: sum(total),
        by_class: total,
        by_endpoint: endpointList(totalByEndpoint),
        days,
        last_used_at: token.last_used_at,
        last_ip: lastClient?.ip ?? null,
        last_user_agent: lastClient?.user_agent ?? null,
      };
    },
  });
}
