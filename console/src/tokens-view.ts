// The token list: one page of the company's tokens (state filter, pagination), with what an
// The token list: one page of the company's tokens (state filter, pagination), with what an
// employee decides on: scopes, units, allowed addresses, who created it when, expiry, last use and
// rotation links (each opens the token it names, alone), and each token's history and usage.
import type { ApiToken, CoolingUnit, Page } from './api.js';
import { byId, el, timeCell } from './format.js';

export interface RowActions {
  /** a rotation link: shows the token it names */
  open(tokenId: string, opener: HTMLElement): void;
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

/** The token's units by name (and location), or null for every unit of the company. */
export function unitNames(token: ApiToken, units: Map<number, CoolingUnit>): string[] | null {
  if (token.cooling_unit_ids.length === 0) return null;
  return token.cooling_unit_ids.map((id) => {
    const unit = units.get(id);
    return unit ? `${unit.name} (${unit.location.name})` : `Unit ${id} (deleted)`;
  });
}

function unitsCell(token: ApiToken, units: Map<number, CoolingUnit>) {
  const names = unitNames(token, units);
  if (!names) return el('span', {}, 'All units');
  return el('ul', { class: 'plain' }, ...names.map((name) => el('li', {}, name)));
}

function allowedIpsCell(token: ApiToken) {
  if (token.allowed_ips.length === 0) return el('span', {}, 'Any address');
  return el('ul', { class: 'plain' }, ...token.allowed_ips.map((cidr) => el('li', {}, cidr)));
}

/** A link to the other token of a rotation: it shows that token (main.ts), wherever it is listed. */
function rotationLink(label: string, tokenId: string, actions: RowActions) {
  const link = el('a', { href: `#token-${tokenId}`, title: tokenId }, `${label} ${shortId(tokenId)}`);
  link.addEventListener('click', (event) => {
    event.preventDefault();
    actions.open(tokenId, link);
  });
  return link;
}

function rotationCell(token: ApiToken, actions: RowActions) {
  const links = [
    token.rotated_from && rotationLink('Rotated from', token.rotated_from, actions),
    token.replaced_by && rotationLink('Replaced by', token.replaced_by, actions),
  ].filter((link): link is HTMLAnchorElement => Boolean(link));
  if (links.length === 0) return el('span', { class: 'muted' }, '—');
  return el('ul', { class: 'plain' }, ...links.map((link) => el('li', {}, link)));
}

/** Words this long and longer may break anywhere; shorter ones only wrap whole, between words. */
const LONG_WORD = 24;

/**
 * A token's name: it wraps between words; only a word too long for the column (a run of letters
 * with no space, such as a host name) is allowed to break inside, in a span of its own, so the
 * column never squeezes ordinary words into pieces.
 */
function nameText(name: string) {
  const parts = name.split(/(\s+)/).filter(Boolean);
  return el(
    'span',
    { class: 'name' },
    ...parts.map((part) => (part.length >= LONG_WORD && !/\s/.test(part) ? el('span', { class: 'unbroken' }, part) : part)),
  );
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
    el('th', { scope: 'row' }, nameText(token.name), el('br'), el('small', { title: token.id }, `ID ${shortId(token.id)}`)),
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
    el('td', {}, rotationCell(token, actions)),
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
  byId('show-list').hidden = true;
  const count = pagination.total_count;
  byId('list-summary').textContent = `${count} ${count === 1 ? FILTER_LABEL[filter]!.replace(/s$/, '') : FILTER_LABEL[filter]}`;
  byId('page-label').textContent = `Page ${pagination.page} of ${Math.max(1, pagination.total_pages)}`;
  byId<HTMLButtonElement>('previous-page').disabled = !pagination.has_previous;
  byId<HTMLButtonElement>('next-page').disabled = !pagination.has_next;
}

/**
 * One token alone, as a rotation link opens it (it may be on another page, or outside the filter):
 * its row, and the way back to the list.
 */
export function renderOneToken(token: ApiToken, units: Map<number, CoolingUnit>, me: number | null, actions: RowActions) {
  const only = row(token, units, me, actions);
  // the link moves focus here (main.ts)
  only.querySelector('th')!.tabIndex = -1;
  byId('token-rows').replaceChildren(only);
  byId('show-list').hidden = false;
  byId('list-summary').textContent = `The token ID ${shortId(token.id)} alone`;
  byId('page-label').textContent = 'Page 1 of 1';
  byId<HTMLButtonElement>('previous-page').disabled = true;
  byId<HTMLButtonElement>('next-page').disabled = true;
}
