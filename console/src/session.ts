// Where the employee's JWT lives: in memory and in this tab's sessionStorage, nowhere else (no
// cookie, no localStorage, never in a query string). A JWT handed over in the URL fragment
// (/console#jwt=..., what `npm start` prints) is taken and wiped from the address bar at once.
const KEY = 'coldtrack-console-jwt';
let current: string | null = null;

function stored(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null; // storage disabled: memory only
  }
}

export function startSession(): string | null {
  const fragment = new URLSearchParams(location.hash.slice(1)).get('jwt');
  if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);
  if (fragment) signIn(fragment);
  else current = stored();
  return current;
}

export function signIn(jwt: string) {
  current = jwt.trim();
  try {
    sessionStorage.setItem(KEY, current);
  } catch {
    // memory only
  }
}

export function signOut() {
  current = null;
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // nothing stored
  }
}

export const jwt = () => current;
