// The dialogs of the endpoint actions: the signing secret (shown once, forgotten on close), the
// delete confirmation, the secret's rotation with its grace period, and enabling a disabled
// endpoint with the replay of what it missed. Modal, focus in and back, as the token dialogs.
import { ConsoleError, type Method, type WebhookEndpoint, type WebhookEndpointWithSecret } from './api.js';
import { act, open, restoreFocus, takeOpener } from './dialogs.js';
import { absoluteTime, byId, relativeTime, say } from './format.js';

export interface WebhookDialogServices {
  request<T>(method: Method, path: string, body?: unknown): Promise<T>;
  /** After a change: the list reloads and `notice` is announced. */
  changed(notice: string): void;
}

/** How far back a replay reaches (the events kept, docs/webhooks.md). */
export const REPLAY_DAYS = 30;
const DAY_MS = 86_400_000;

let services: WebhookDialogServices;
let pending: WebhookEndpoint | null = null;
const HEADING = 'webhooks-title';
export const endpointPath = (endpoint: WebhookEndpoint) => `/api/v1/webhook-endpoints/${encodeURIComponent(endpoint.id)}`;

export function showWebhookSecret(endpoint: WebhookEndpointWithSecret, from: HTMLElement | null) {
  byId<HTMLInputElement>('webhook-secret-value').value = endpoint.secret;
  const until = endpoint.previous_secret_expires_at;
  const grace = byId('webhook-secret-grace');
  grace.textContent = until
    ? `The previous secret also signs every delivery until ${absoluteTime(until)} (${relativeTime(until)}): ` +
      'switch the receiver to this one before then.'
    : '';
  grace.hidden = !until;
  say(byId('webhook-copy-status'), '');
  open(byId<HTMLDialogElement>('webhook-secret-dialog'), from);
  byId('copy-webhook-secret').focus();
}

function setUpSecretDialog() {
  const dialog = byId<HTMLDialogElement>('webhook-secret-dialog');
  const value = byId<HTMLInputElement>('webhook-secret-value');
  byId('copy-webhook-secret').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value.value);
      say(byId('webhook-copy-status'), 'Copied.');
    } catch {
      value.select();
      say(byId('webhook-copy-status'), 'Copying is not allowed here: the secret is selected, press Ctrl+C (or ⌘C).');
    }
  });
  // the secret leaves the page at once (the close event comes a task later), then focus goes back
  const forget = () => {
    value.value = '';
    say(byId('webhook-copy-status'), '');
  };
  byId('close-webhook-secret').addEventListener('click', () => {
    forget();
    dialog.close();
  });
  dialog.addEventListener('close', () => {
    forget();
    restoreFocus(HEADING);
  });
}

/** Wires a confirmation dialog: Cancel and Escape close it; `confirm` runs once per click. */
function confirmation(name: string, confirm: (dialog: HTMLDialogElement, endpoint: WebhookEndpoint) => Promise<void>) {
  const dialog = byId<HTMLDialogElement>(`webhook-${name}-dialog`);
  const button = byId<HTMLButtonElement>(`confirm-webhook-${name}`);
  byId(`cancel-webhook-${name}`).addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    pending = null;
    if (!byId<HTMLDialogElement>('webhook-secret-dialog').open) restoreFocus(HEADING);
  });
  button.addEventListener('click', () => act(dialog, button, byId(`webhook-${name}-error`), () => confirm(dialog, pending!)));
}

function opening(name: string, endpoint: WebhookEndpoint, from: HTMLElement, text: string) {
  pending = endpoint;
  byId(`webhook-${name}-text`).textContent = text;
  say(byId(`webhook-${name}-error`), '');
  open(byId<HTMLDialogElement>(`webhook-${name}-dialog`), from);
}

export function confirmDelete(endpoint: WebhookEndpoint, from: HTMLElement) {
  opening('delete', endpoint, from, `Nothing more is sent to ${endpoint.url}, and its delivery log is removed. This cannot be undone.`);
  byId('cancel-webhook-delete').focus();
}

export function confirmRotateSecret(endpoint: WebhookEndpoint, from: HTMLElement) {
  opening('rotate', endpoint, from, `A new signing secret signs every delivery to ${endpoint.url}.`);
  byId('webhook-rotate-dialog').querySelector<HTMLInputElement>('input[name="webhook-grace"]:checked')?.focus();
}

/** The time a replay starts from: when it was disabled, or as far back as a replay reaches. */
function replayFrom(endpoint: WebhookEndpoint, now = Date.now()): string {
  const earliest = now - REPLAY_DAYS * DAY_MS + 60_000;
  return new Date(Math.max(Date.parse(endpoint.disabled_at!), earliest)).toISOString();
}

export function confirmEnable(endpoint: WebhookEndpoint, from: HTMLElement) {
  const failing = endpoint.disabled_reason === 'failing';
  opening(
    'enable',
    endpoint,
    from,
    `Deliveries to ${endpoint.url} resume: those that waited are sent now.` +
      (failing ? ' Check first that the receiver answers 2xx: it was disabled after failing for a day.' : ''),
  );
  const since = replayFrom(endpoint);
  byId('webhook-enable-replay-label').textContent = `Also replay everything since it was disabled (${absoluteTime(since)})`;
  // after a failure the company surely wants what it missed; after an employee's pause, perhaps not
  byId<HTMLInputElement>('webhook-enable-replay').checked = failing;
  byId('confirm-webhook-enable').focus();
}

export function setUpWebhookDialogs(given: WebhookDialogServices) {
  services = given;
  setUpSecretDialog();
  confirmation('delete', async (dialog, endpoint) => {
    await services.request('DELETE', endpointPath(endpoint));
    dialog.close();
    services.changed(`${endpoint.url} is deleted: nothing more is sent to it.`);
  });
  confirmation('rotate', async (dialog, endpoint) => {
    const grace = Number(dialog.querySelector<HTMLInputElement>('input[name="webhook-grace"]:checked')!.value);
    const rotated = await services.request<WebhookEndpointWithSecret>('POST', `${endpointPath(endpoint)}/rotate-secret`, {
      grace_period_seconds: grace,
    });
    const from = takeOpener(); // the secret dialog returns focus, not this one
    dialog.close();
    const until = rotated.previous_secret_expires_at;
    services.changed(
      until
        ? `The signing secret of ${endpoint.url} is rotated: the previous one also signs until ${absoluteTime(until)}.`
        : `The signing secret of ${endpoint.url} is rotated: the previous one no longer signs.`,
    );
    showWebhookSecret(rotated, from);
  });
  confirmation('enable', async (dialog, endpoint) => {
    const replay = byId<HTMLInputElement>('webhook-enable-replay').checked;
    const since = replayFrom(endpoint);
    await services.request('PATCH', endpointPath(endpoint), { enabled: true });
    let notice = `${endpoint.url} is enabled: deliveries resume.`;
    if (replay) {
      try {
        const { replayed } = await services.request<{ replayed: number }>('POST', `${endpointPath(endpoint)}/replay`, { since });
        notice += ` ${replayed} ${replayed === 1 ? 'event' : 'events'} since ${absoluteTime(since)} queued again.`;
      } catch (error) {
        if (error instanceof ConsoleError && error.signedOut) throw error;
        notice += ` The replay failed (${(error as Error).message}): replay from its deliveries.`;
      }
    }
    dialog.close();
    services.changed(notice);
  });
}
