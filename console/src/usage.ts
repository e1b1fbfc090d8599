// A token's usage over the last 30 days (GET /api/v1/api-tokens/{id}/usage) in a modal dialog: the
// chart of requests per day by answer class (usage-chart.ts), the same figures as a table, the
// routes it called, and the client it was last used from.
import { ConsoleError, type ApiToken, type ApiTokenUsage } from './api.js';
import { open, restoreFocus } from './dialogs.js';
import { byId, el, say, timeCell } from './format.js';
import { CLASS_LABEL, CLASSES, usageChart, usageLegend } from './usage-chart.js';

export interface UsageServices {
  get<T>(path: string): Promise<T>;
}

let services: UsageServices;
/** the token whose usage is loading or shown: an answer for another one is dropped */
let showing: string | null = null;

function dayRows(usage: ApiTokenUsage) {
  // newest first, as people scan a table; days without requests are left out of the table only
  return usage.days
    .filter((day) => day.requests > 0)
    .reverse()
    .map((day) =>
      el(
        'tr',
        { 'data-date': day.date },
        el('th', { scope: 'row' }, day.date),
        el('td', {}, String(day.requests)),
        ...CLASSES.map((name) => el('td', {}, String(day.by_class[name]))),
        el('td', {}, day.by_endpoint[0]?.endpoint ?? ''),
      ),
    );
}

function endpointRows(usage: ApiTokenUsage) {
  return usage.by_endpoint.map((entry) =>
    el(
      'tr',
      {},
      el('th', { scope: 'row' }, el('code', {}, entry.endpoint)),
      el('td', {}, String(entry.requests)),
      ...CLASSES.map((name) => el('td', {}, String(entry.by_class[name]))),
    ),
  );
}

function lastClient(usage: ApiTokenUsage) {
  if (!usage.last_used_at) return el('span', {}, 'Never used.');
  return el(
    'span',
    {},
    'Last used ',
    timeCell(usage.last_used_at, '', true),
    el('br'),
    `from ${usage.last_ip ?? 'an unknown address'}`,
    usage.last_user_agent
      ? `, ${usage.last_user_agent.length > 80 ? `${usage.last_user_agent.slice(0, 79)}…` : usage.last_user_agent}`
      : '',
  );
}

function render(usage: ApiTokenUsage) {
  const { by_class: counts } = usage;
  const parts = CLASSES.filter((name) => counts[name] > 0).map((name) => `${counts[name]} ${CLASS_LABEL[name].toLowerCase()}`);
  byId('usage-summary').textContent =
    usage.requests === 0
      ? `No requests from ${usage.from} to ${usage.to} (UTC).`
      : `${usage.requests} ${usage.requests === 1 ? 'request' : 'requests'} from ${usage.from} to ${usage.to} (UTC): ${parts.join(', ')}.`;
  byId('usage-chart').replaceChildren(usageChart(usage.days), usageLegend());
  byId('usage-client').replaceChildren(lastClient(usage));
  const days = dayRows(usage);
  byId('usage-rows').replaceChildren(...(days.length ? days : [el('tr', {}, el('td', { colspan: '7', class: 'muted' }, 'No requests.'))]));
  byId('usage-endpoint-rows').replaceChildren(...endpointRows(usage));
  byId('usage-endpoints').hidden = usage.by_endpoint.length === 0;
}

export async function showUsage(token: ApiToken, from: HTMLElement) {
  showing = token.id;
  byId('usage-title').textContent = `Usage of “${token.name}”`;
  for (const id of ['usage-chart', 'usage-client', 'usage-rows', 'usage-endpoint-rows']) byId(id).replaceChildren();
  byId('usage-summary').textContent = 'Loading the usage…';
  say(byId('usage-error'), '');
  open(byId<HTMLDialogElement>('usage-dialog'), from);
  byId('close-usage').focus();
  try {
    const usage = await services.get<ApiTokenUsage>(`/api/v1/api-tokens/${encodeURIComponent(token.id)}/usage`);
    if (showing !== token.id) return;
    render(usage);
  } catch (error) {
    if (showing !== token.id) return;
    if (error instanceof ConsoleError && error.signedOut) return; // the session has ended: the dialog is closed
    byId('usage-summary').textContent = 'The usage could not be loaded.';
    say(byId('usage-error'), (error as Error).message);
  }
}

export function setUpUsage(given: UsageServices) {
  services = given;
  const dialog = byId<HTMLDialogElement>('usage-dialog');
  byId('close-usage').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    showing = null;
    restoreFocus();
  });
}
