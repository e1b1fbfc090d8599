// The employee token console: sign in with a JWT, then list, create, rotate and revoke the
// company's API tokens, and read each one's history and usage; in the Webhooks section
// (webhooks.ts), manage the company's webhook endpoints. All through the service's own management
// API (same origin, nothing else).
import './style.css';
import {
  call,
  ConsoleError,
  SESSION_ENDED,
  type ApiToken,
  type CoolingUnit,
  type Me,
  type Method,
  type NewToken,
  type Page,
} from './api.js';
import { readCreateForm, resetCreateForm, setUpCreateForm, showUnits } from './create-form.js';
import { confirmRevoke, confirmRotate, setUpDialogs, showSecret } from './dialogs.js';
import { byId, say } from './format.js';
import { setUpHistory, showHistory } from './history.js';
import { jwt, signIn, signOut, startSession } from './session.js';
import { renderOneToken, renderTokens, type RowActions } from './tokens-view.js';
import { setUpUsage, showUsage } from './usage.js';
import { countFailing, forgetWebhooks, setUpWebhooks, showWebhooks } from './webhooks.js';

const PAGE_SIZE = 20;
/** the list's page and state filter; `only`: the one token a rotation link opened, shown alone */
const view: { page: number; filter: string; only: string | null } = { page: 1, filter: '', only: null };
let units = new Map<number, CoolingUnit>();
/** who is signed in, as the service names them (GET /api/v1/me) */
let profile: Me | null = null;

/** Leaves the console for the sign-in form, saying why. */
function endSession(message: string) {
  signOut();
  units = new Map();
  profile = null;
  byId('who').textContent = '';
  forgetWebhooks();
  for (const dialog of document.querySelectorAll('dialog')) if (dialog.open) dialog.close();
  show('sign-in');
  say(byId('sign-in-error'), message);
  byId('jwt').focus();
}

/** Every call: a 401 ends the session here, once, whatever the caller then does. */
async function request<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const credential = jwt();
  if (!credential) throw new ConsoleError(SESSION_ENDED, 401);
  try {
    return await call<T>(credential, method, path, body);
  } catch (error) {
    if (error instanceof ConsoleError && error.signedOut) endSession(error.message);
    throw error;
  }
}

type Section = 'sign-in' | 'tokens' | 'create' | 'webhooks' | 'webhook-form';
const SECTION_ELEMENT: Record<Section, string> = {
  'sign-in': 'sign-in',
  tokens: 'tokens',
  create: 'create',
  webhooks: 'webhooks',
  'webhook-form': 'webhook-form-section',
};

function show(section: Section) {
  for (const [name, id] of Object.entries(SECTION_ELEMENT)) byId(id).hidden = name !== section;
  const signedIn = section !== 'sign-in';
  byId('sign-out').hidden = !signedIn;
  byId('who').hidden = !signedIn;
  byId('views').hidden = !signedIn;
  // the header's switch marks the part of the console on screen (a form belongs to its list)
  const webhooks = section === 'webhooks' || section === 'webhook-form';
  for (const [id, current] of [
    ['view-tokens', !webhooks],
    ['view-webhooks', webhooks],
  ] as const) {
    if (current) byId(id).setAttribute('aria-current', 'page');
    else byId(id).removeAttribute('aria-current');
  }
}

/** The header names the employee and the company, as the service knows them. */
async function loadProfile() {
  profile = await request<Me>('GET', '/api/v1/me');
  byId('who').textContent = `Signed in as ${profile.name ?? `user ${profile.user_id}`} at ${profile.company_name}`;
}

async function loadUnits() {
  const all: CoolingUnit[] = [];
  for (let page = 1; ; page++) {
    const result = await request<Page<CoolingUnit>>('GET', `/api/v1/cooling-units?page_size=1000&page=${page}`);
    all.push(...result.data);
    if (!result.meta.pagination.has_next) break;
  }
  units = new Map(all.map((unit) => [unit.id, unit]));
  showUnits(all);
}

const actions: RowActions = {
  open: async (tokenId) => {
    view.only = tokenId;
    await refresh();
    document.querySelector<HTMLElement>(`tr[data-token-id="${CSS.escape(tokenId)}"] th`)?.focus();
  },
  rotate: (token, opener) => confirmRotate(token, opener, units),
  revoke: (token, opener) => confirmRevoke(token, opener),
  history: (token, opener) => void showHistory(token, opener),
  usage: (token, opener) => void showUsage(token, opener),
};

async function loadTokens() {
  if (view.only) {
    const token = await request<ApiToken>('GET', `/api/v1/api-tokens/${encodeURIComponent(view.only)}`);
    return renderOneToken(token, units, profile?.user_id ?? null, actions);
  }
  const query = new URLSearchParams({ page: String(view.page), page_size: String(PAGE_SIZE) });
  if (view.filter) query.set('state', view.filter);
  const page = await request<Page<ApiToken>>('GET', `/api/v1/api-tokens?${query}`);
  renderTokens(page, view.filter, units, profile?.user_id ?? null, actions);
}

/** Loads the list; a failure is shown above it (a 401 has already ended the session). */
async function refresh() {
  try {
    await loadTokens();
    say(byId('list-error'), '');
  } catch (error) {
    if (!(error instanceof ConsoleError && error.signedOut)) say(byId('list-error'), (error as Error).message);
  }
}

/** After sign-in: who is signed in, the units (the list names them), then the list. */
async function enter() {
  show('tokens');
  say(byId('notice'), '');
  // the form lists the units: it opens once they are here
  const create = byId<HTMLButtonElement>('new-token');
  create.disabled = true;
  try {
    await loadProfile();
    await loadUnits();
    create.disabled = false;
    await loadTokens();
    say(byId('list-error'), '');
    byId('tokens-title').focus();
    void countFailing();
  } catch (error) {
    if (error instanceof ConsoleError && error.signedOut) return;
    // a 403 (not an employee) or an outage: nothing here can work, so say it where the JWT goes
    const message = (error as Error).message;
    if (error instanceof ConsoleError && error.status === 403) endSession(message);
    else say(byId('list-error'), message);
  }
}

function wire() {
  byId('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const field = byId<HTMLTextAreaElement>('jwt');
    if (!field.value.trim()) return say(byId('sign-in-error'), 'Paste your JWT first.');
    signIn(field.value);
    field.value = '';
    say(byId('sign-in-error'), '');
    void enter();
  });
  byId('sign-out').addEventListener('click', () => endSession('You are signed out.'));
  byId('view-tokens').addEventListener('click', () => {
    show('tokens');
    say(byId('notice'), '');
    void refresh();
    byId('tokens-title').focus();
  });
  byId('view-webhooks').addEventListener('click', () => void showWebhooks());
  byId('state-filter').addEventListener('change', (event) => {
    view.filter = (event.target as HTMLSelectElement).value;
    view.page = 1;
    view.only = null;
    void refresh();
  });
  // from the one token a rotation link opened, back to the page of the list it was opened from
  byId('show-list').addEventListener('click', async () => {
    view.only = null;
    await refresh();
    byId('state-filter').focus();
  });
  byId('previous-page').addEventListener('click', () => {
    view.page = Math.max(1, view.page - 1);
    void refresh();
  });
  byId('next-page').addEventListener('click', () => {
    view.page += 1;
    void refresh();
  });
  byId('new-token').addEventListener('click', () => {
    resetCreateForm();
    show('create');
    byId('create-title').focus();
  });
  byId('cancel-create').addEventListener('click', () => {
    show('tokens');
    byId('new-token').focus();
  });
  byId('create-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = readCreateForm();
    if (!body) return;
    const submit = (event.target as HTMLFormElement).querySelector<HTMLButtonElement>('button[type="submit"]')!;
    submit.disabled = true;
    try {
      const created = await request<NewToken>('POST', '/api/v1/api-tokens', body);
      resetCreateForm();
      show('tokens');
      say(byId('notice'), `“${created.name}” is created.`);
      view.page = 1;
      view.only = null;
      void refresh();
      showSecret(created, byId('new-token'));
    } catch (error) {
      if (!(error instanceof ConsoleError && error.signedOut)) say(byId('create-error'), (error as Error).message);
    } finally {
      submit.disabled = false;
    }
  });
  setUpCreateForm();
  setUpHistory({ get: (path) => request('GET', path), me: () => profile?.user_id ?? null });
  setUpUsage({ get: (path) => request('GET', path) });
  setUpWebhooks({ request, units: () => units, me: () => profile?.user_id ?? null, show });
  setUpDialogs({
    post: (path, body) => request('POST', path, body),
    changed: (notice) => {
      say(byId('notice'), notice);
      void refresh();
    },
  });
}

wire();
if (startSession()) void enter();
else {
  show('sign-in');
  byId('jwt').focus();
}
