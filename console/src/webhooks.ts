// The Webhooks section: the company's endpoints (webhooks-view.ts) and what an employee does with
// them: register and edit (webhook-form.ts), send a test event, disable and enable, rotate the
// secret, delete (webhook-dialogs.ts), and read the delivery log (deliveries.ts). The header's
// Webhooks button counts the endpoints disabled after failing, whichever section is open.
import { ConsoleError, type CoolingUnit, type Method, type Page, type WebhookEndpoint, type WebhookEndpointWithSecret } from './api.js';
import { setUpDeliveries, showDeliveries } from './deliveries.js';
import { byId, say } from './format.js';
import {
  closeWebhookForm,
  changesOf,
  editedEndpoint,
  openWebhookForm,
  readWebhookForm,
  refuseUnchanged,
  setUpWebhookForm,
} from './webhook-form.js';
import {
  confirmDelete,
  confirmEnable,
  confirmRotateSecret,
  endpointPath,
  setUpWebhookDialogs,
  showWebhookSecret,
} from './webhook-dialogs.js';
import { renderEndpoints, type EndpointActions } from './webhooks-view.js';

export interface WebhookServices {
  request<T>(method: Method, path: string, body?: unknown): Promise<T>;
  units(): Map<number, CoolingUnit>;
  /** the signed-in employee's user id: their endpoints read "by you" */
  me(): number | null;
  show(section: 'webhooks' | 'webhook-form'): void;
}

const BASE = '/api/v1/webhook-endpoints';
/** A company has at most 20 endpoints (docs/webhooks.md): one page holds them all. */
const LIST = `${BASE}?page_size=20`;

let services: WebhookServices;
/** the element that opened the form, to go back to */
let formOpener: HTMLElement | null = null;

/** An error to say where the employee is looking: any but a 401, which has already ended the session. */
const worthSaying = (error: unknown) => !(error instanceof ConsoleError && error.signedOut);

function showFailing(page: Page<WebhookEndpoint>) {
  const failing = page.data.filter((endpoint) => endpoint.disabled_reason === 'failing').length;
  const badge = byId('failing-badge');
  badge.textContent = failing > 0 ? `${failing} failing` : '';
  badge.hidden = failing === 0;
}

/** Reads the endpoints; renders them when the section is open, and the header's count always. */
async function refresh() {
  try {
    const page = await services.request<Page<WebhookEndpoint>>('GET', LIST);
    showFailing(page);
    renderEndpoints(page, services.units(), services.me(), actions);
    say(byId('webhook-list-error'), '');
  } catch (error) {
    if (worthSaying(error)) say(byId('webhook-list-error'), (error as Error).message);
  }
}

/**
 * After sign-in: the header says if an endpoint was disabled after failing. A failure here is
 * not the tokens' concern: the section says it when it opens.
 */
export async function countFailing() {
  try {
    showFailing(await services.request<Page<WebhookEndpoint>>('GET', LIST));
  } catch {
    // said when the section opens (a 401 has ended the session)
  }
}

function changed(notice: string) {
  say(byId('webhook-notice'), notice);
  void refresh();
}

/** A row's action that needs no dialog; its failure is said above the list. */
async function quietly(button: HTMLElement, action: () => Promise<void>) {
  (button as HTMLButtonElement).disabled = true;
  say(byId('webhook-list-error'), '');
  try {
    await action();
  } catch (error) {
    if (worthSaying(error)) say(byId('webhook-list-error'), (error as Error).message);
  } finally {
    (button as HTMLButtonElement).disabled = false;
  }
}

const actions: EndpointActions = {
  deliveries: (endpoint, opener) => void showDeliveries(endpoint, opener),
  test: (endpoint, opener) =>
    void quietly(opener, async () => {
      const { message_id: id } = await services.request<{ message_id: string }>('POST', `${endpointPath(endpoint)}/test`);
      changed(
        endpoint.enabled
          ? `A test event (webhook-id ${id}) is on its way to ${endpoint.url}: its deliveries show how it went.`
          : `A test event (webhook-id ${id}) waits for ${endpoint.url} to be enabled.`,
      );
    }),
  edit: (endpoint, opener) => openForm(endpoint, opener),
  disable: (endpoint, opener) =>
    void quietly(opener, async () => {
      await services.request('PATCH', endpointPath(endpoint), { enabled: false });
      changed(`${endpoint.url} is disabled: nothing is sent to it, and events are not queued for it until it is enabled.`);
    }),
  enable: (endpoint, opener) => confirmEnable(endpoint, opener),
  rotate: (endpoint, opener) => confirmRotateSecret(endpoint, opener),
  remove: (endpoint, opener) => confirmDelete(endpoint, opener),
};

function openForm(endpoint: WebhookEndpoint | null, opener: HTMLElement) {
  formOpener = opener;
  const units = [...services.units().values()];
  openWebhookForm(units, endpoint);
  services.show('webhook-form');
  byId('webhook-form-title').focus();
}

function backToList(focus: HTMLElement | null) {
  closeWebhookForm();
  services.show('webhooks');
  (focus?.isConnected ? focus : byId('webhooks-title')).focus();
}

async function save(event: SubmitEvent) {
  event.preventDefault();
  const request = readWebhookForm();
  if (!request) return;
  const editing = editedEndpoint();
  const changes = editing ? changesOf(editing, request) : request;
  if (Object.keys(changes).length === 0) return refuseUnchanged();
  const submit = byId<HTMLButtonElement>('save-webhook');
  submit.disabled = true;
  try {
    if (editing) {
      const saved = await services.request<WebhookEndpoint>('PATCH', endpointPath(editing), changes);
      backToList(formOpener);
      changed(`${saved.url} is saved.`);
    } else {
      const created = await services.request<WebhookEndpointWithSecret>('POST', BASE, request);
      backToList(byId('new-webhook'));
      changed(`${created.url} is registered: events are sent to it from now on.`);
      showWebhookSecret(created, byId('new-webhook'));
    }
  } catch (error) {
    if (worthSaying(error)) say(byId('webhook-form-error'), (error as Error).message);
  } finally {
    submit.disabled = false;
  }
}

/** Opens the section: the list is read afresh each time. */
export async function showWebhooks() {
  services.show('webhooks');
  say(byId('webhook-notice'), '');
  byId('webhooks-title').focus();
  await refresh();
}

/** Signed out: nothing of the company's endpoints stays on the page. */
export function forgetWebhooks() {
  closeWebhookForm();
  byId('webhook-rows').replaceChildren();
  byId('webhook-summary').textContent = 'Loading the endpoints…';
  byId('failing-badge').hidden = true;
  say(byId('webhook-notice'), '');
  say(byId('webhook-list-error'), '');
}

export function setUpWebhooks(given: WebhookServices) {
  services = given;
  setUpWebhookForm();
  setUpWebhookDialogs({ request: (method, path, body) => services.request(method, path, body), changed });
  setUpDeliveries({ request: (method, path, body) => services.request(method, path, body) });
  byId('new-webhook').addEventListener('click', (event) => openForm(null, event.currentTarget as HTMLElement));
  byId('cancel-webhook').addEventListener('click', () => backToList(formOpener));
  byId('webhook-form').addEventListener('submit', (event) => void save(event as SubmitEvent));
}
