// The creation form: a name, scopes (each with what it opens), all units or chosen ones, the IP
// addresses it may be used from, and an expiry preset. It checks what it can before sending; the
// service checks everything again, and its refusal (naming the entry at fault) is what decides.
import { SCOPES, type CoolingUnit, type Scope } from './api.js';
import { byId, el, say } from './format.js';

const SCOPE_HELP: Record<Scope, string> = {
  users: 'GET /api/v1/analytics/users: registered, active and new farmers per period and unit',
  utilization: 'GET /api/v1/analytics/utilization: occupancy, check-ins and check-outs, crates and kg stored',
  revenue: 'GET /api/v1/analytics/revenue: amounts by currency and payment method, paid and pending',
  impact: 'GET /api/v1/analytics/impact: CO2 avoided, farmers served and market survey results',
  sensor_data: 'GET /api/v1/sensor-data: temperature and humidity readings, raw or hourly/daily',
};

export interface TokenRequest {
  name: string;
  scopes: Scope[];
  cooling_unit_ids: number[];
  allowed_ips: string[];
  expires_at: string | null;
}

const form = () => byId<HTMLFormElement>('create-form');
const checked = (name: string) =>
  [...form().querySelectorAll<HTMLInputElement>(`input[name="${name}"]:checked`)].map((input) => input.value);
const DAY_MS = 86_400_000;
const MAX_ALLOWED_IPS = 50;
// a hint only: what could be an IPv4/IPv6 address with an optional prefix; the service parses it
const LOOKS_LIKE_IP = /^[0-9a-f:.]{2,45}(?:\/\d{1,3})?$/i;

/** The allow-list field's entries: one per line or comma separated, blanks ignored. */
export const allowedIpEntries = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** Builds the scope boxes once, and keeps the dependent fields in step with the radios. */
export function setUpCreateForm() {
  byId('scope-options').replaceChildren(
    ...SCOPES.map((scope) =>
      el(
        'div',
        { class: 'option' },
        el('input', { type: 'checkbox', name: 'scope', value: scope, id: `scope-${scope}`, 'aria-describedby': `scope-${scope}-help` }),
        el('label', { for: `scope-${scope}` }, scope),
        el('small', { id: `scope-${scope}-help`, class: 'help' }, SCOPE_HELP[scope]),
      ),
    ),
  );
  form().addEventListener('change', syncDependentFields);
  syncDependentFields();
}

function syncDependentFields() {
  const someUnits = checked('units')[0] === 'some';
  for (const box of form().querySelectorAll<HTMLInputElement>('input[name="unit"]')) box.disabled = !someUnits;
  const expiry = checked('expiry')[0];
  const date = byId<HTMLInputElement>('expiry-date');
  date.disabled = expiry !== 'custom';
  date.required = expiry === 'custom';
  byId('never-warning').hidden = expiry !== 'never';
}

export function showUnits(units: CoolingUnit[]) {
  const boxes = units.map((unit) =>
    el(
      'div',
      { class: 'option' },
      el('input', { type: 'checkbox', name: 'unit', value: String(unit.id), id: `unit-${unit.id}` }),
      el('label', { for: `unit-${unit.id}` }, `${unit.name} (${unit.location.name})`),
    ),
  );
  byId('unit-options').replaceChildren(
    ...(boxes.length > 0 ? boxes : [el('p', { class: 'muted' }, 'Your company has no live cooling units.')]),
  );
  syncDependentFields();
}

export function resetCreateForm() {
  form().reset();
  for (const field of form().querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
  say(byId('create-error'), '');
  syncDependentFields();
}

/** A refusal names the field at fault and moves focus to it. */
function refuse(message: string, field: HTMLElement | null): null {
  say(byId('create-error'), message);
  field?.setAttribute('aria-invalid', 'true');
  field?.focus();
  return null;
}

/** The request the form describes, or null after saying what to fix. */
export function readCreateForm(now = Date.now()): TokenRequest | null {
  for (const field of form().querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
  const name = byId<HTMLInputElement>('token-name').value.trim();
  if (!name) return refuse('Give the token a name.', byId('token-name'));
  const scopes = checked('scope') as Scope[];
  if (scopes.length === 0) return refuse('Choose at least one scope.', form().querySelector('input[name="scope"]'));
  const units = checked('units')[0] === 'some' ? checked('unit').map(Number) : [];
  if (checked('units')[0] === 'some' && units.length === 0) {
    return refuse(
      'Choose at least one unit, or allow all units.',
      form().querySelector('input[name="unit"]') ?? form().querySelector('input[name="units"]'),
    );
  }
  const ipField = byId<HTMLTextAreaElement>('allowed-ips');
  const allowedIps = allowedIpEntries(ipField.value);
  const unlikely = allowedIps.find((entry) => !LOOKS_LIKE_IP.test(entry));
  if (unlikely) return refuse(`“${unlikely}” is not an IP address or network (e.g. 203.0.113.7 or 198.51.100.0/24).`, ipField);
  if (allowedIps.length > MAX_ALLOWED_IPS) {
    return refuse(`List at most ${MAX_ALLOWED_IPS} addresses or networks (${allowedIps.length} given).`, ipField);
  }
  const expiry = checked('expiry')[0];
  let expiresAt: string | null = null;
  if (expiry === 'custom') {
    const date = byId<HTMLInputElement>('expiry-date');
    const [year, month, day] = date.value.split('-').map(Number);
    // the end of the chosen day, in the employee's time zone
    const end = year ? new Date(year, month! - 1, day, 23, 59, 59) : null;
    if (!end || end.getTime() <= now) return refuse('Choose an expiry date in the future.', date);
    expiresAt = end.toISOString();
  } else if (expiry !== 'never') {
    expiresAt = new Date(now + Number(expiry) * DAY_MS).toISOString();
  }
  say(byId('create-error'), '');
  return { name, scopes, cooling_unit_ids: units, allowed_ips: allowedIps, expires_at: expiresAt };
}
