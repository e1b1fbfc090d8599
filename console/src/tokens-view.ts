// The token list: one page of the company's tokens (state filter, pagination), with what an
// The token list: one page of the company's tokens (state filter, pagination), with what an
// employee decides on: scopes, units, allowed addresses, who created it when, expiry, last use and
// rotation links, and each token's history and usage.
import type { ApiToken, CoolingUnit, Page } from './api.js';
import { byId, el, timeCell } from './format.js';

export interface RowActions {
  rotate(token: ApiToken, opener: HTMLElement): void;
  revoke(token: ApiToken, opener: HTMLElement): void;
  history(token: ApiToken, opener: HTMLElement): void;
  usage(token: ApiToken, opener: HTMLElement): void;
}

export type TokenState = 'active' | 'expired' | 'revoked';

/** The service's definition (api_token_state), at the browser's clock. */
export function stateOf(token: ApiToken, now = Date.now()): TokenState {
  if (token.revoked) return 'revoked';
  return token.expires_at && Date.parse(token.expires_at) <= now ? 'expired' : 'active';
}

const STATE_LABEL: Record<TokenState, string> = { active: 'Active', expired: 'Expired', revoked: 'Revoked' };
const FILTER_LABEL: Record<string, string> = {
  '': 'tokens',
  active: 'active tokens',
  expired: 'expired tokens',
  revoked: 'revoked tokens',
};
export const shortId = (id: string) => id.slice(0, 8);

function unitsCell(token: ApiToken, units: Map<number, CoolingUnit>) {
  if (token.cooling_unit_ids.length === 0) return el('span', {}, 'All units');
  const names = token.cooling_unit_ids.map((id) => {
    const unit = units.get(id);
    return unit ? `${unit.name} (${unit.location.name})` : `Unit ${id} (deleted)`;
  });
  return el('ul', { class: 'plain' }, ...names.map((name) => el('li', {}, name)));
}

function allowedIpsCell(token: ApiToken) {
  if (token.allowed_ips.length === 0) return el('span', {}, 'Any address');
  return el('ul', { class: 'plain' }, ...token.allowed_ips.map((cidr) => el('li', {}, cidr)));
}

function rotationCell(token: ApiToken) {
  const links = [
    token.rotated_from && el('span', { title: token.rotated_from }, `Rotated from ${shortId(token.rotated_from)}`),
    token.replaced_by && el('span', { title: token.replaced_by }, `Replaced by ${shortId(token.replaced_by)}`),
  ].filter((link): link is HTMLSpanElement => Boolean(link));
  if (links.length === 0) return el('span', { class: 'muted' }, '—');
  return el('ul', { class: 'plain' }, ...links.map((link) => el('li', {}, link)));
}

function row(token: ApiToken, units: Map<number, CoolingUnit>, me: number | null, actions: RowActions) {
  const state = stateOf(token);
  const history = el('button', { type: 'button', class: 'quiet', 'aria-label': `History of “${token.name}”` }, 'History');
  history.addEventListener('click', () => actions.history(token, history));
  const usage = el('button', { type: 'button', class: 'quiet', 'aria-label': `Usage of “${token.name}”` }, 'Usage');
  usage.addEventListener('click', () => actions.usage(token, usage));
  const buttons: HTMLButtonElement[] = [history, usage];
  if (state === 'active' && !token.replaced_by) {
    const rotate = el('button', { type: 'button', class: 'quiet', 'aria-label': `Rotate “${token.name}”` }, 'Rotate');
    rotate.addEventListener('click', () => actions.rotate(token, rotate));
    buttons.push(rotate);
  }
  if (state !== 'revoked') {
    const revoke = el('button', { type: 'button', class: 'quiet danger', 'aria-label': `Revoke “${token.name}”` }, 'Revoke');
    revoke.addEventListener('click', () => actions.revoke(token, revoke));
    buttons.push(revoke);
  }
  const creator = token.created_by === me ? 'by you' : `by user ${token.created_by}`;
  return el(
    'tr',
    { 'data-token-id': token.id },
    el(
      'th',
      { scope: 'row' },
      el('span', { class: 'name' }, token.name),
      el('br'),
      el('small', { title: token.id }, `ID ${shortId(token.id)}`),
    ),
    el(
      'td',
      {},
      el('span', { class: `state ${state}` }, STATE_LABEL[state]),
      token.revoked_at && el('br'),
      token.revoked_at && timeCell(token.revoked_at, '', true),
    ),
    el('td', {}, el('ul', { class: 'plain' }, ...token.scopes.map((scope) => el('li', {}, scope)))),
    el('td', {}, unitsCell(token, units)),
    el('td', { class: 'addresses' }, allowedIpsCell(token)),
    el('td', {}, timeCell(token.created_at, '', true), el('br'), el('small', {}, creator)),
    el('td', {}, timeCell(token.expires_at, 'Never')),
    el('td', {}, timeCell(token.last_used_at, 'Never', true)),
    el('td', {}, rotationCell(token)),
    el('td', { class: 'row-actions' }, ...buttons),
  );
}

export function renderTokens(
  page: Page<ApiToken>,
  filter: string,
  units: Map<number, CoolingUnit>,
  me: number | null,
  actions: RowActions,
) {
  const { pagination } = page.meta;
  const rows = page.data.map((token) => row(token, units, me, actions));
  if (rows.length === 0) {
    const empty = filter === '' && pagination.page === 1 ? 'No tokens yet: create one.' : `No ${FILTER_LABEL[filter]} here.`;
    rows.push(el('tr', {}, el('td', { colspan: '10', class: 'muted' }, empty)));
  }
  byId('token-rows').replaceChildren(...rows);
  const count = pagination.total_count;
  byId('list-summary').textContent = `${count} ${count === 1 ? FILTER_LABEL[filter]!.replace(/s$/, '') : FILTER_LABEL[filter]}`;
  byId('page-label').textContent = `Page ${pagination.page} of ${Math.max(1, pagination.total_pages)}`;
  byId<HTMLButtonElement>('previous-page').disabled = !pagination.has_previous;
  byId<HTMLButtonElement>('next-page').disabled = !pagination.has_next;
}
