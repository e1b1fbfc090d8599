// A token's history: its audit events, newest first (GET /api/v1/audit-events?token_id=), in a
// modal dialog: what happened, when, who did it and from where. A rotation shows on both tokens:
// the old one "replaced by", the new one "created by rotating".
import { ConsoleError, type ApiToken, type AuditEvent, type AuditEventPage } from './api.js';
import { open, restoreFocus } from './dialogs.js';
import { absoluteTime, byId, el, say, timeCell } from './format.js';
import { shortId } from './tokens-view.js';

/** The latest events shown; an older one is still in the API. */
const LATEST = 100;

export interface HistoryServices {
  get<T>(path: string): Promise<T>;
  /** the signed-in employee's user id: their own actions read "You" */
  me(): number | null;
}

let services: HistoryServices;
/** the token whose history is loading or shown: an answer for another one is dropped */
let showing: string | null = null;

function what(event: AuditEvent, tokenId: string): string {
  switch (event.action) {
    case 'token.created':
      return 'Created';
    case 'token.rotated': {
      if (event.token_id !== tokenId) return `Created by rotating ${shortId(event.token_id)}`;
      const ends = event.details.old_token_expires_at;
      return (
        `Rotated: replaced by ${shortId(event.related_token_id ?? '')}` +
        (typeof ends === 'string' ? `; this token ends ${absoluteTime(ends)}` : '')
      );
    }
    case 'token.revoked':
      return 'Revoked';
    case 'token.leak_reported':
      return 'Reported as leaked';
    case 'token.revoked_leaked':
      return 'Revoked: reported as leaked';
    // a webhook endpoint's changes are in the same trail, under the endpoint's id, never a token's
    case 'webhook_endpoint.created':
      return 'Webhook endpoint registered';
    case 'webhook_endpoint.updated':
      return 'Webhook endpoint changed';
    case 'webhook_endpoint.deleted':
      return 'Webhook endpoint deleted';
    case 'webhook_endpoint.secret_rotated':
      return "Webhook endpoint's signing secret rotated";
  }
}

/**
 * Where a reported leak was found: the reporter's URL (and its word for the place: commit, npm...),
 * as text to copy, never a link (it comes from outside the company).
 */
function sighting(event: AuditEvent) {
  if (event.action !== 'token.leak_reported' && event.action !== 'token.revoked_leaked') return null;
  const { url, source } = event.details;
  const where = typeof url === 'string' && url !== '' ? `Found at ${url}` : 'Found at an address the report did not give';
  return el('small', { class: 'leak-url' }, typeof source === 'string' ? `${where} (${source})` : where);
}

function who(event: AuditEvent): string {
  const { actor } = event;
  if (actor.type === 'employee') return actor.id === String(services.me()) ? 'You' : `${actor.name ?? 'An employee'} (user ${actor.id})`;
  if (actor.type === 'leak_reporter') return `Leak report from ${actor.id}`;
  return `The service (${actor.id})`;
}

function row(event: AuditEvent, tokenId: string) {
  const agent = event.user_agent ?? '';
  return el(
    'tr',
    { 'data-sequence': String(event.sequence) },
    el('td', {}, timeCell(event.occurred_at, '', true)),
    el('th', { scope: 'row' }, what(event, tokenId), sighting(event) && el('br'), sighting(event)),
    el('td', {}, who(event)),
    el(
      'td',
      {},
      el('span', {}, event.client_ip ?? 'Unknown address'),
      agent && el('br'),
      agent && el('small', { class: 'agent', title: agent }, agent.length > 60 ? `${agent.slice(0, 59)}…` : agent),
    ),
  );
}

export async function showHistory(token: ApiToken, from: HTMLElement) {
  showing = token.id;
  byId('history-title').textContent = `History of “${token.name}”`;
  byId('history-rows').replaceChildren();
  byId('history-summary').textContent = 'Loading the history…';
  say(byId('history-error'), '');
  open(byId<HTMLDialogElement>('history-dialog'), from);
  byId('close-history').focus();
  try {
    const page = await services.get<AuditEventPage>(`/api/v1/audit-events?token_id=${encodeURIComponent(token.id)}&page_size=${LATEST}`);
    if (showing !== token.id) return;
    byId('history-rows').replaceChildren(...page.data.map((event) => row(event, token.id)));
    const total = page.meta.pagination.total_count;
    byId('history-summary').textContent =
      total === 0
        ? 'No events recorded for this token.'
        : total > page.data.length
          ? `The latest ${page.data.length} of ${total} events, newest first`
          : `${total} ${total === 1 ? 'event' : 'events'}, newest first`;
  } catch (error) {
    if (showing !== token.id) return;
    if (error instanceof ConsoleError && error.signedOut) return; // the session has ended: the dialog is closed
    byId('history-summary').textContent = 'The history could not be loaded.';
    say(byId('history-error'), (error as Error).message);
  }
}

export function setUpHistory(given: HistoryServices) {
  services = given;
  const dialog = byId<HTMLDialogElement>('history-dialog');
  byId('close-history').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    showing = null;
    restoreFocus();
  });
}
