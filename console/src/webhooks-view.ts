// The company's webhook endpoints as a table: the URL and description, the events asked for, the
// units, whether it is enabled (an endpoint disabled after failing stands out, with what to do),
// the secret's rotation, who registered it when, and each endpoint's actions.
import type { CoolingUnit, Page, WebhookEndpoint } from './api.js';
import { absoluteTime, byId, el, relativeTime, timeCell } from './format.js';

export interface EndpointActions {
  deliveries(endpoint: WebhookEndpoint, opener: HTMLElement): void;
  test(endpoint: WebhookEndpoint, opener: HTMLElement): void;
  edit(endpoint: WebhookEndpoint, opener: HTMLElement): void;
  disable(endpoint: WebhookEndpoint, opener: HTMLElement): void;
  enable(endpoint: WebhookEndpoint, opener: HTMLElement): void;
  rotate(endpoint: WebhookEndpoint, opener: HTMLElement): void;
  remove(endpoint: WebhookEndpoint, opener: HTMLElement): void;
}

const COLUMNS = 7;

function unitsCell(endpoint: WebhookEndpoint, units: Map<number, CoolingUnit>) {
  if (endpoint.cooling_unit_ids.length === 0) return el('span', {}, 'All units');
  return el(
    'ul',
    { class: 'plain' },
    ...endpoint.cooling_unit_ids.map((id) => {
      const unit = units.get(id);
      return el('li', {}, unit ? `${unit.name} (${unit.location.name})` : `Unit ${id} (deleted)`);
    }),
  );
}

function stateCell(endpoint: WebhookEndpoint) {
  if (endpoint.enabled) return el('span', { class: 'state enabled' }, 'Enabled');
  const since = timeCell(endpoint.disabled_at, '', true);
  if (endpoint.disabled_reason === 'failing') {
    return el('span', {}, el('span', { class: 'state failing' }, 'Disabled: failing'), el('br'), since);
  }
  return el('span', {}, el('span', { class: 'state disabled' }, 'Disabled'), el('br'), el('small', {}, 'by an employee'), el('br'), since);
}

function secretCell(endpoint: WebhookEndpoint) {
  if (!endpoint.previous_secret_expires_at) return el('span', {}, 'One secret');
  return el('span', {}, 'Rotated: the previous secret also signs until ', timeCell(endpoint.previous_secret_expires_at, ''));
}

/** An endpoint disabled after failing: what happened, and what to do, under its row. */
function failingHelp(endpoint: WebhookEndpoint) {
  const at = endpoint.disabled_at!;
  return el(
    'tr',
    { class: 'failing-help', 'data-failing-endpoint-id': endpoint.id },
    el(
      'td',
      { colspan: String(COLUMNS) },
      el(
        'div',
        { class: 'warning' },
        el(
          'p',
          {},
          el('strong', {}, `Nothing is sent to ${endpoint.url}: `),
          `its deliveries failed for over a day, so it was disabled ${relativeTime(at, Date.now(), true)} (${absoluteTime(at)}). ` +
            'Events since then are not queued for it.',
        ),
        el(
          'ol',
          {},
          el('li', {}, 'Check the receiver: it must answer 2xx within 10 seconds. Deliveries shows its last answer or error.'),
          el('li', {}, 'Enable it once the receiver works.'),
          el('li', {}, `Replay everything since it was disabled, so the events it missed are sent: Enable offers it.`),
        ),
      ),
    ),
  );
}

function button(label: string, name: string, action: () => void, extra = '') {
  const element = el('button', { type: 'button', class: `quiet ${extra}`.trim(), 'aria-label': `${label} ${name}` }, label);
  element.addEventListener('click', action);
  return element;
}

function rows(endpoint: WebhookEndpoint, units: Map<number, CoolingUnit>, me: number | null, actions: EndpointActions) {
  const name = endpoint.url;
  const buttons: HTMLButtonElement[] = [];
  const add = (label: string, action: keyof EndpointActions, extra = '') => {
    const made = button(label, name, () => actions[action](endpoint, made), extra);
    buttons.push(made);
  };
  add('Deliveries', 'deliveries');
  add('Send test', 'test');
  add('Edit', 'edit');
  if (endpoint.enabled) add('Disable', 'disable');
  else add('Enable', 'enable');
  add('Rotate secret', 'rotate');
  add('Delete', 'remove', 'danger');
  const creator = endpoint.created_by === me ? 'by you' : `by user ${endpoint.created_by}`;
  const row = el(
    'tr',
    { 'data-endpoint-id': endpoint.id, class: endpoint.disabled_reason === 'failing' ? 'failing' : '' },
    el(
      'th',
      { scope: 'row' },
      el('code', { class: 'url' }, endpoint.url),
      endpoint.description && el('br'),
      endpoint.description && el('span', { class: 'description' }, endpoint.description),
      el('br'),
      el('small', { title: endpoint.id }, `ID ${endpoint.id.slice(0, 8)}`),
    ),
    el('td', {}, el('ul', { class: 'plain' }, ...endpoint.event_types.map((type) => el('li', {}, type)))),
    el('td', {}, unitsCell(endpoint, units)),
    el('td', {}, stateCell(endpoint)),
    el('td', {}, secretCell(endpoint)),
    el('td', {}, timeCell(endpoint.created_at, '', true), el('br'), el('small', {}, creator)),
    el('td', {}, el('div', { class: 'endpoint-actions' }, ...buttons)),
  );
  return endpoint.disabled_reason === 'failing' ? [row, failingHelp(endpoint)] : [row];
}

export function renderEndpoints(page: Page<WebhookEndpoint>, units: Map<number, CoolingUnit>, me: number | null, actions: EndpointActions) {
  const all = page.data.flatMap((endpoint) => rows(endpoint, units, me, actions));
  if (all.length === 0) {
    all.push(el('tr', {}, el('td', { colspan: String(COLUMNS), class: 'muted' }, 'No endpoints yet: register one.')));
  }
  byId('webhook-rows').replaceChildren(...all);
  const count = page.meta.pagination.total_count;
  const failing = page.data.filter((endpoint) => endpoint.disabled_reason === 'failing').length;
  byId('webhook-summary').textContent =
    `${count} ${count === 1 ? 'endpoint' : 'endpoints'}` + (failing > 0 ? `, ${failing} disabled after failing` : '');
}
