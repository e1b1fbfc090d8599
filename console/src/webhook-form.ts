// The endpoint form, to register one or edit it: its URL, a description, the event types (each
// with when it is sent) and all units or chosen ones. It checks what it can before sending; the
// service checks everything again (the URL's addresses too), and its refusal is what decides.
import type { CoolingUnit, WebhookEndpoint, WebhookEventType } from './api.js';
import { byId, el, say } from './format.js';

/** Every event type an endpoint can ask for, in the order the form offers them, with when it is sent. */
const EVENT_HELP: Record<WebhookEventType, string> = {
  'api_token.created': 'a token was created',
  'api_token.rotated': 'a token was rotated (with its replacement and grace period)',
  'api_token.revoked': 'a token was revoked by an employee',
  'api_token.leaked': 'a leak report named a live token, which was revoked at once',
  'api_token.expiring': 'a token expires in 30, 7 or 1 days (each reminder once)',
  'api_token.expired': 'a token has expired',
  'sensor_data.changed': 'readings of its units landed (at most once a minute, with the change feed cursors that read them)',
  'webhook_endpoint.disabled': 'another endpoint of the company was disabled after its deliveries failed for a day',
};
const EVENT_TYPES = Object.keys(EVENT_HELP) as WebhookEventType[];

export interface EndpointRequest {
  url: string;
  description: string;
  event_types: WebhookEventType[];
  cooling_unit_ids: number[];
}

const form = () => byId<HTMLFormElement>('webhook-form');
const checked = (name: string) =>
  [...form().querySelectorAll<HTMLInputElement>(`input[name="${name}"]:checked`)].map((input) => input.value);
/** the endpoint being edited; null while registering one */
let editing: WebhookEndpoint | null = null;

export const editedEndpoint = () => editing;

function syncUnitBoxes() {
  const someUnits = checked('webhook-units')[0] === 'some';
  for (const box of form().querySelectorAll<HTMLInputElement>('input[name="webhook-unit"]')) box.disabled = !someUnits;
}

/** Builds the event type boxes once. */
export function setUpWebhookForm() {
  byId('webhook-event-options').replaceChildren(
    ...EVENT_TYPES.map((type) =>
      el(
        'div',
        { class: 'option' },
        el('input', {
          type: 'checkbox',
          name: 'webhook-event',
          value: type,
          id: `event-${type}`,
          'aria-describedby': `event-${type}-help`,
        }),
        el('label', { for: `event-${type}` }, type),
        el('small', { id: `event-${type}-help`, class: 'help' }, EVENT_HELP[type]),
      ),
    ),
  );
  form().addEventListener('change', syncUnitBoxes);
}

/**
 * Opens the form empty (register) or filled in from an endpoint (edit). The unit boxes are built
 * now, from the units known, and dropped on close: the token form has boxes with the same unit
 * names, and only the form on screen should answer to them.
 */
export function openWebhookForm(units: CoolingUnit[], endpoint: WebhookEndpoint | null) {
  editing = endpoint;
  form().reset();
  for (const field of form().querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
  say(byId('webhook-form-error'), '');
  const chosen = new Set(endpoint?.cooling_unit_ids ?? []);
  // a unit deleted since the endpoint chose it still shows, to be unticked
  const gone = [...chosen].filter((id) => !units.some((unit) => unit.id === id));
  const boxes = [
    ...units.map((unit) => [unit.id, `${unit.name} (${unit.location.name})`] as const),
    ...gone.map((id) => [id, `Unit ${id} (deleted)`] as const),
  ].map(([id, label]) =>
    el(
      'div',
      { class: 'option' },
      el('input', { type: 'checkbox', name: 'webhook-unit', value: String(id), id: `webhook-unit-${id}` }),
      el('label', { for: `webhook-unit-${id}` }, label),
    ),
  );
  byId('webhook-unit-options').replaceChildren(
    ...(boxes.length > 0 ? boxes : [el('p', { class: 'muted' }, 'Your company has no live cooling units.')]),
  );
  for (const box of form().querySelectorAll<HTMLInputElement>('input[name="webhook-unit"]')) box.checked = chosen.has(Number(box.value));
  if (endpoint) {
    byId<HTMLInputElement>('webhook-url').value = endpoint.url;
    byId<HTMLInputElement>('webhook-description').value = endpoint.description;
    for (const box of form().querySelectorAll<HTMLInputElement>('input[name="webhook-event"]')) {
      box.checked = endpoint.event_types.includes(box.value as WebhookEventType);
    }
    form().querySelector<HTMLInputElement>(`input[name="webhook-units"][value="${chosen.size > 0 ? 'some' : 'all'}"]`)!.checked = true;
  }
  byId('webhook-form-title').textContent = endpoint ? `Edit the endpoint ${endpoint.url}` : 'Register an endpoint';
  byId('save-webhook').textContent = endpoint ? 'Save changes' : 'Register endpoint';
  syncUnitBoxes();
}

export function closeWebhookForm() {
  editing = null;
  form().reset();
  byId('webhook-unit-options').replaceChildren();
  say(byId('webhook-form-error'), '');
}

/** A refusal names the field at fault and moves focus to it. */
function refuse(message: string, field: HTMLElement | null): null {
  say(byId('webhook-form-error'), message);
  field?.setAttribute('aria-invalid', 'true');
  field?.focus();
  return null;
}

/** The endpoint the form describes, or null after saying what to fix. */
export function readWebhookForm(): EndpointRequest | null {
  for (const field of form().querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
  const urlField = byId<HTMLInputElement>('webhook-url');
  const url = urlField.value.trim();
  if (!url) return refuse('Give the URL the events are sent to.', urlField);
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    return refuse('The URL must be a full https address, e.g. https://hooks.example.com/coldtrack.', urlField);
  }
  const description = byId<HTMLInputElement>('webhook-description').value.trim();
  const eventTypes = checked('webhook-event') as WebhookEventType[];
  if (eventTypes.length === 0) return refuse('Choose at least one event type.', form().querySelector('input[name="webhook-event"]'));
  const some = checked('webhook-units')[0] === 'some';
  const units = some ? checked('webhook-unit').map(Number) : [];
  if (some && units.length === 0) {
    return refuse(
      'Choose at least one unit, or every unit.',
      form().querySelector('input[name="webhook-unit"]') ?? form().querySelector('input[name="webhook-units"]'),
    );
  }
  say(byId('webhook-form-error'), '');
  return { url, description, event_types: eventTypes, cooling_unit_ids: units };
}

const sameSet = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((value) => b.includes(value));

/** What an edit changes of the endpoint: only those fields are sent (and audited). */
export function changesOf(endpoint: WebhookEndpoint, request: EndpointRequest): Partial<EndpointRequest> {
  const changes: Partial<EndpointRequest> = {};
  if (request.url !== endpoint.url) changes.url = request.url;
  if (request.description !== endpoint.description) changes.description = request.description;
  if (!sameSet(request.event_types, endpoint.event_types)) changes.event_types = request.event_types;
  if (!sameSet(request.cooling_unit_ids, endpoint.cooling_unit_ids)) changes.cooling_unit_ids = request.cooling_unit_ids;
  return changes;
}

export const refuseUnchanged = () => refuse('Nothing is changed: change a field, or cancel.', null);
