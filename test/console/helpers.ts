// The console in real Chromium against the real service: an app on a fresh database listening on
// a port, a company, a browser page whose clock follows the app's ManualClock (so "in 59 minutes"
// and a token's state read the same on both sides), and the checks every browser test shares:
// no console error (a CSP violation is one), axe with no serious or critical violation,
// screenshots under .tap/console-screenshots/.
import { mkdirSync, readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { Test } from 'tap';
import { createTestApp, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { createCompany, type CompanyFixture } from '../helpers/fixtures.js';

export const SCREENSHOTS = '.tap/console-screenshots';
const AXE_SOURCE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8');

export interface ConsoleWorld {
  ctx: TestApp;
  company: CompanyFixture;
  address: string;
  page: Page;
  /** A Registered Employee JWT valid for a week of the app's clock. */
  jwt: string;
  /** Console errors and page errors so far (CSP violations are console errors). */
  problems: string[];
  /** Every URL the page requested. */
  requests: string[];
  /** Moves the app's clock and the page's together. */
  setTime(date: Date): Promise<void>;
  /** A management API call from the test, as the employee. */
  api<T = unknown>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** The status a data request with this raw token gets. */
  dataStatus(token: string): Promise<number>;
}

export async function startConsole(t: Test, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<ConsoleWorld> {
  const ctx = await createTestApp(t, env, options);
  const company = await createCompany(ctx.db.pool, 'Console Cold');
  const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const jwt = await ctx.jwtFor(company.employeeId, { ttlSeconds: 7 * 24 * 3600 });
  const browser = await launchBrowser(t);
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: address });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
  page.on('pageerror', (error) => problems.push(error.message));
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.clock.setFixedTime(ctx.clock.now());

  const api: ConsoleWorld['api'] = async (method, path, body) => {
    const response = await fetch(new URL(path, address), {
      method,
      headers: { authorization: `Bearer ${jwt}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // a deletion's 204 has no body
    return { status: response.status, body: (response.status === 204 ? null : await response.json()) as never };
  };
  return {
    ctx,
    company,
    address,
    page,
    jwt,
    problems,
    requests,
    async setTime(date) {
      ctx.clock.set(date);
      await page.clock.setFixedTime(date);
    },
    api,
    dataStatus: async (token) =>
      (await fetch(new URL('/api/v1/analytics/users', address), { headers: { authorization: `Bearer ${token}` } })).status,
  };
}

/**
 * axe-core on the page as it is now: no serious or critical violation. axe is evaluated through
 * the DevTools protocol, not added as a <script>: the page's CSP (script-src 'self') rightly
 * refuses an inline script tag, and the test must not weaken it to look.
 */
export async function checkAccessibility(t: Test, page: Page, label: string) {
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<{
    violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
  }>('axe.run(document, { resultTypes: ["violations"] })');
  const blocking = result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  t.strictSame(
    blocking.map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
    ),
    [],
    `${label}: no serious or critical accessibility violation (${result.violations.length} minor)`,
  );
}

export async function screenshot(page: Page, name: string, path = `${SCREENSHOTS}/${name}.png`) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path, fullPage: true });
}

/** The id of the focused element, or its tag when it has none; `dialog:<id>` inside a dialog. */
export const focused = (page: Page) =>
  page.evaluate<string>(`(() => {
    const element = document.activeElement;
    if (!element || element === document.body) return 'body';
    const dialog = element.closest('dialog');
    return (dialog ? 'dialog:' + dialog.id + ' ' : '') + (element.id || element.tagName.toLowerCase());
  })()`);

/**
 * The focused element (as `focused`) once it is `expected`, or as it is after `timeoutMs`: a
 * dialog hands focus back to its opener after it has closed, which a busy machine may not have
 * done by the time the close click resolves.
 */
export async function focusSettles(page: Page, expected: string, timeoutMs = 2000): Promise<string> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const now = await focused(page);
    if (now === expected || performance.now() > until) return now;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether `text` is anywhere in the page: its markup or the value of any form field. */
export const pageHolds = (page: Page, text: string) =>
  page.evaluate<boolean, string>((needle) => {
    const doc = (
      globalThis as unknown as {
        document: { documentElement: { outerHTML: string }; querySelectorAll(s: string): Iterable<{ value: string }> };
      }
    ).document;
    if (doc.documentElement.outerHTML.includes(needle)) return true;
    return [...doc.querySelectorAll('input, textarea')].some((field) => field.value.includes(needle));
  }, text);
