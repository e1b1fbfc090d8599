// The three dialogs of the token actions: the new secret (shown once, forgotten on close), the
// revoke confirmation and the rotation with its grace period (a token's history is history.ts).
// Each is a modal <dialog> (the page behind is inert while it is open); focus goes into it and
// back to what opened it.
import { ConsoleError, type ApiToken, type CoolingUnit, type NewToken, type Scope } from './api.js';
import { absoluteTime, byId, el, relativeTime, say } from './format.js';
import { unitNames } from './tokens-view.js';

export interface DialogServices {
  post<T>(path: string, body?: unknown): Promise<T>;
  /** After a change: the list reloads and `notice` is announced. */
  changed(notice: string): void;
}

const EXAMPLE_PATH: Record<Scope, string> = {
  users: '/api/v1/analytics/users',
  utilization: '/api/v1/analytics/utilization',
  revenue: '/api/v1/analytics/revenue',
  impact: '/api/v1/analytics/impact',
  sensor_data: '/api/v1/sensor-data?aggregation=daily',
};

let opener: HTMLElement | null = null;
let pending: ApiToken | null = null;

/** Back to the element that opened the dialog; if a reload replaced it, to the list's heading. */
export function restoreFocus(heading = 'tokens-title') {
  const target = opener?.isConnected ? opener : byId(heading);
  opener = null;
  target.focus();
}

/** What opened the dialog, handed on to the next one (a rotation's secret dialog returns focus, not it). */
export function takeOpener() {
  const from = opener;
  opener = null;
  return from;
}

/** Opens a modal dialog; restoreFocus() later goes back to `from`. */
export function open(dialog: HTMLDialogElement, from: HTMLElement | null) {
  opener = from;
  dialog.showModal();
}

export function showSecret(created: NewToken, from: HTMLElement | null) {
  byId<HTMLInputElement>('secret-value').value = created.token;
  const path = EXAMPLE_PATH[created.scopes[0] ?? 'users'];
  byId<HTMLTextAreaElement>('secret-curl').value = `curl -s '${location.origin}${path}' -H 'Authorization: Bearer ${created.token}'`;
  say(byId('copy-status'), '');
  open(byId<HTMLDialogElement>('secret-dialog'), from);
  byId('copy-secret').focus();
}

function setUpSecretDialog() {
  const dialog = byId<HTMLDialogElement>('secret-dialog');
  const value = byId<HTMLInputElement>('secret-value');
  byId('copy-secret').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value.value);
      say(byId('copy-status'), 'Copied.');
    } catch {
      value.select();
      say(byId('copy-status'), 'Copying is not allowed here: the token is selected, press Ctrl+C (or ⌘C).');
    }
  });
  // the secret leaves the page at once (the close event comes a task later), then focus goes back
  const forget = () => {
    value.value = '';
    byId<HTMLTextAreaElement>('secret-curl').value = '';
    say(byId('copy-status'), '');
  };
  byId('close-secret').addEventListener('click', () => {
    forget();
    dialog.close();
  });
  // closed by the button or by Escape
  dialog.addEventListener('close', () => {
    forget();
    restoreFocus();
  });
}

/** Runs the dialog's action once; a failure is shown in the dialog (a 401 ends the session). */
export async function act(dialog: HTMLDialogElement, button: HTMLButtonElement, errorRegion: HTMLElement, action: () => Promise<void>) {
  button.disabled = true;
  say(errorRegion, '');
  try {
    await action();
  } catch (error) {
    if (error instanceof ConsoleError && error.signedOut) dialog.close();
    else say(errorRegion, error instanceof Error ? error.message : String(error));
  } finally {
    button.disabled = false;
  }
}

export function confirmRevoke(token: ApiToken, from: HTMLElement) {
  pending = token;
  byId('revoke-text').textContent =
    `Requests with “${token.name}” (ID ${token.id.slice(0, 8)}) are refused as soon as you confirm. This cannot be undone.`;
  say(byId('revoke-error'), '');
  open(byId<HTMLDialogElement>('revoke-dialog'), from);
  byId('cancel-revoke').focus();
}

/** What a rotation's replacement keeps of the token: all of it but the secret (and the id). */
function kept(token: ApiToken, units: Map<number, CoolingUnit>): Array<[string, string]> {
  return [
    ['Scopes', token.scopes.join(', ')],
    ['Units', unitNames(token, units)?.join(', ') ?? 'All units'],
    ['Allowed from', token.allowed_ips.length === 0 ? 'Any address' : token.allowed_ips.join(', ')],
    ['Expires', token.expires_at ? `${relativeTime(token.expires_at)} (${absoluteTime(token.expires_at)})` : 'Never'],
  ];
}

export function confirmRotate(token: ApiToken, from: HTMLElement, units: Map<number, CoolingUnit>) {
  pending = token;
  byId('rotate-text').textContent = `A new token replaces “${token.name}”, with the same:`;
  byId('rotate-keeps').replaceChildren(...kept(token, units).flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)]));
  say(byId('rotate-error'), '');
  open(byId<HTMLDialogElement>('rotate-dialog'), from);
  byId('rotate-dialog').querySelector<HTMLInputElement>('input[name="grace"]:checked')?.focus();
}

function setUpRevokeDialog(services: DialogServices) {
  const dialog = byId<HTMLDialogElement>('revoke-dialog');
  const confirm = byId<HTMLButtonElement>('confirm-revoke');
  byId('cancel-revoke').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    pending = null;
    restoreFocus();
  });
  confirm.addEventListener('click', () =>
    act(dialog, confirm, byId('revoke-error'), async () => {
      const token = pending!;
      await services.post<ApiToken>(`/api/v1/api-tokens/${token.id}/revoke`);
      dialog.close();
      services.changed(`“${token.name}” is revoked: requests with it are refused from now on.`);
    }),
  );
}

function setUpRotateDialog(services: DialogServices) {
  const dialog = byId<HTMLDialogElement>('rotate-dialog');
  const confirm = byId<HTMLButtonElement>('confirm-rotate');
  byId('cancel-rotate').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    pending = null;
    if (!byId<HTMLDialogElement>('secret-dialog').open) restoreFocus();
  });
  confirm.addEventListener('click', () =>
    act(dialog, confirm, byId('rotate-error'), async () => {
      const token = pending!;
      const grace = Number(dialog.querySelector<HTMLInputElement>('input[name="grace"]:checked')!.value);
      const replacement = await services.post<NewToken>(`/api/v1/api-tokens/${token.id}/rotate`, { grace_period_seconds: grace });
      const from = takeOpener(); // the secret dialog returns focus, not this one
      dialog.close();
      const end = new Date(Date.now() + grace * 1000).toISOString();
      const expires = token.expires_at && token.expires_at < end ? token.expires_at : end;
      services.changed(
        grace === 0
          ? `“${token.name}” is rotated: the old token stopped working; use the new one.`
          : `“${token.name}” is rotated: the old token stops working ${relativeTime(expires)} (${absoluteTime(expires)}).`,
      );
      showSecret(replacement, from);
    }),
  );
}

export function setUpDialogs(services: DialogServices) {
  setUpSecretDialog();
  setUpRevokeDialog(services);
  setUpRotateDialog(services);
}
