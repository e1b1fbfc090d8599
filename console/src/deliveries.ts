// An endpoint's delivery log in a modal dialog (GET .../deliveries): newest first, a page at a
// time, optionally one status: each event's type and webhook-id, its status, attempts (and how
// many were interrupted), the last answer or why it failed or was interrupted, its duration and
// the next retry; one delivery replayed, or everything since a time (POST .../replay).
import { ConsoleError, type Method, type Page, type WebhookDelivery, type WebhookEndpoint } from './api.js';
import { open, restoreFocus } from './dialogs.js';
import { byId, el, say, timeCell } from './format.js';
import { endpointPath, REPLAY_DAYS } from './webhook-dialogs.js';

export interface DeliveryServices {
  request<T>(method: Method, path: string, body?: unknown): Promise<T>;
}

const PAGE_SIZE = 20;
const DAY_MS = 86_400_000;
const STATUS_LABEL: Record<WebhookDelivery['status'], string> = { pending: 'Pending', succeeded: 'Succeeded', failed: 'Failed' };
/** A failed connection's code, in words. */
const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EHOSTUNREACH: 'host unreachable',
};

let services: DeliveryServices;
/** the endpoint whose log is loading or shown: an answer for another one is dropped */
let showing: { endpoint: WebhookEndpoint; page: number; status: string } | null = null;

function lastAnswer(delivery: WebhookDelivery) {
  const last = delivery.last_attempt;
  if (!last) return el('span', { class: 'muted' }, delivery.attempts > 0 ? 'Under way' : 'Not tried yet');
  if (last.outcome === 'interrupted')
    return el(
      'span',
      {},
      el('strong', {}, 'Interrupted'),
      el('br'),
      el('span', { class: 'attempt-error' }, 'the sender stopped before the answer was recorded: the endpoint may have received it'),
      el('br'),
      timeCell(last.at, '', true),
    );
  const answer = last.status_code === null ? 'No answer' : `HTTP ${last.status_code}`;
  const error = last.error && last.error !== `answered ${last.status_code}` ? (CONNECTION_ERRORS[last.error] ?? last.error) : null;
  return el(
    'span',
    {},
    el('strong', {}, answer),
    error && el('br'),
    error && el('span', { class: 'attempt-error' }, error),
    el('br'),
    timeCell(last.at, '', true),
  );
}

function row(delivery: WebhookDelivery, replay: (delivery: WebhookDelivery, from: HTMLElement) => void) {
  const again = el('button', { type: 'button', class: 'quiet', 'aria-label': `Replay ${delivery.message_id}` }, 'Replay');
  again.addEventListener('click', () => replay(delivery, again));
  const next =
    delivery.next_attempt_at === null
      ? el('span', { class: 'muted' }, '—')
      : delivery.attempts === 0
        ? el('span', {}, 'First attempt due ', timeCell(delivery.next_attempt_at, ''))
        : timeCell(delivery.next_attempt_at, '');
  return el(
    'tr',
    { 'data-delivery-id': String(delivery.id), 'data-message-id': delivery.message_id },
    el('th', { scope: 'row' }, el('code', {}, delivery.event_type), el('br'), timeCell(delivery.occurred_at, '', true)),
    el('td', {}, el('code', { class: 'message-id' }, delivery.message_id)),
    el('td', {}, el('span', { class: `state ${delivery.status}` }, STATUS_LABEL[delivery.status])),
    el(
      'td',
      {},
      String(delivery.attempts),
      // attempts cut short (a process killed mid-attempt): the endpoint may have had the event more often
      delivery.interrupted_attempts > 0 && el('br'),
      delivery.interrupted_attempts > 0 && el('span', { class: 'muted' }, `${delivery.interrupted_attempts} interrupted`),
    ),
    el('td', {}, lastAnswer(delivery)),
    el(
      'td',
      {},
      delivery.last_attempt && delivery.last_attempt.outcome !== 'interrupted' ? `${delivery.last_attempt.duration_ms} ms` : '—',
    ),
    el('td', {}, next),
    el('td', {}, again),
  );
}

/** Shows the current page of the log, or says why it cannot. */
async function load() {
  const current = showing;
  if (!current) return;
  const query = new URLSearchParams({ page: String(current.page), page_size: String(PAGE_SIZE) });
  if (current.status) query.set('status', current.status);
  try {
    const page = await services.request<Page<WebhookDelivery>>('GET', `${endpointPath(current.endpoint)}/deliveries?${query}`);
    if (showing !== current) return;
    const rows = page.data.map((delivery) => row(delivery, replayOne));
    if (rows.length === 0) {
      const empty = current.status ? `No ${current.status} deliveries.` : 'Nothing sent to this endpoint yet: send a test event.';
      rows.push(el('tr', {}, el('td', { colspan: '8', class: 'muted' }, empty)));
    }
    byId('delivery-rows').replaceChildren(...rows);
    const { pagination } = page.meta;
    const count = pagination.total_count;
    byId('deliveries-summary').textContent =
      `${count} ${count === 1 ? 'delivery' : 'deliveries'}${current.status ? ` ${current.status}` : ''}, newest first`;
    byId('deliveries-page').textContent = `Page ${pagination.page} of ${Math.max(1, pagination.total_pages)}`;
    byId<HTMLButtonElement>('newer-deliveries').disabled = !pagination.has_previous;
    byId<HTMLButtonElement>('older-deliveries').disabled = !pagination.has_next;
  } catch (error) {
    if (showing !== current) return;
    if (error instanceof ConsoleError && error.signedOut) return; // the session has ended: the dialog is closed
    byId('deliveries-summary').textContent = 'The delivery log could not be loaded.';
    say(byId('deliveries-error'), (error as Error).message);
  }
}

/** Reloads the log after an action, and says the action's outcome before the log's summary. */
async function reload(outcome: string) {
  say(byId('deliveries-error'), '');
  await load();
  byId('deliveries-summary').textContent = `${outcome} ${byId('deliveries-summary').textContent}`;
}

async function replayOne(delivery: WebhookDelivery, button: HTMLElement) {
  const current = showing!;
  (button as HTMLButtonElement).disabled = true;
  try {
    await services.request('POST', `${endpointPath(current.endpoint)}/deliveries/${delivery.id}/replay`);
    await reload(`${delivery.event_type} ${delivery.message_id} is queued again from its first attempt.`);
    byId('refresh-deliveries').focus();
  } catch (error) {
    if (!(error instanceof ConsoleError && error.signedOut)) say(byId('deliveries-error'), (error as Error).message);
    (button as HTMLButtonElement).disabled = false;
  }
}

/** datetime-local's value (no zone) read as UTC, as the log's times are shown. */
const fromUtcField = (value: string) => (value ? new Date(`${value}Z`) : null);

async function replaySince(event: SubmitEvent) {
  event.preventDefault();
  const current = showing!;
  const field = byId<HTMLInputElement>('replay-since');
  field.removeAttribute('aria-invalid');
  const since = fromUtcField(field.value);
  const refuse = (message: string) => {
    say(byId('deliveries-error'), message);
    field.setAttribute('aria-invalid', 'true');
    field.focus();
  };
  if (!since || Number.isNaN(since.getTime())) return refuse('Choose the time to replay from.');
  if (since.getTime() > Date.now()) return refuse('Choose a time in the past.');
  if (since.getTime() < Date.now() - REPLAY_DAYS * DAY_MS)
    return refuse(`A replay reaches ${REPLAY_DAYS} days back at most: choose a later time.`);
  const submit = byId<HTMLButtonElement>('replay-since-submit');
  submit.disabled = true;
  try {
    const { replayed } = await services.request<{ replayed: number }>('POST', `${endpointPath(current.endpoint)}/replay`, {
      since: since.toISOString(),
    });
    current.page = 1;
    await reload(
      `${replayed} ${replayed === 1 ? 'event' : 'events'} since ${since.toISOString().slice(0, 16).replace('T', ' ')} UTC queued again.`,
    );
  } catch (error) {
    if (!(error instanceof ConsoleError && error.signedOut)) say(byId('deliveries-error'), (error as Error).message);
  } finally {
    submit.disabled = false;
  }
}

/** Opens the log of an endpoint, its first page. */
export async function showDeliveries(endpoint: WebhookEndpoint, from: HTMLElement) {
  showing = { endpoint, page: 1, status: '' };
  byId('deliveries-title').textContent = `Deliveries to ${endpoint.url}`;
  byId<HTMLSelectElement>('deliveries-status').value = '';
  // an hour back, or when it was disabled: where a replay most often starts
  const since = endpoint.disabled_at ?? new Date(Date.now() - 3_600_000).toISOString();
  byId<HTMLInputElement>('replay-since').value = since.slice(0, 16);
  byId('replay-since').removeAttribute('aria-invalid');
  byId('delivery-rows').replaceChildren();
  byId('deliveries-summary').textContent = 'Loading the delivery log…';
  say(byId('deliveries-error'), '');
  open(byId<HTMLDialogElement>('deliveries-dialog'), from);
  byId('close-deliveries').focus();
  await load();
}

export function setUpDeliveries(given: DeliveryServices) {
  services = given;
  const dialog = byId<HTMLDialogElement>('deliveries-dialog');
  const turnTo = (page: (current: number) => number) => {
    if (!showing) return;
    showing.page = Math.max(1, page(showing.page));
    say(byId('deliveries-error'), '');
    void load();
  };
  byId('newer-deliveries').addEventListener('click', () => turnTo((page) => page - 1));
  byId('older-deliveries').addEventListener('click', () => turnTo((page) => page + 1));
  byId('refresh-deliveries').addEventListener('click', () => turnTo((page) => page));
  byId('deliveries-status').addEventListener('change', (event) => {
    if (showing) showing.status = (event.target as HTMLSelectElement).value;
    turnTo(() => 1);
  });
  byId('replay-since-form').addEventListener('submit', (event) => void replaySince(event as SubmitEvent));
  byId('close-deliveries').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    showing = null;
    restoreFocus('webhooks-title');
  });
}
