// Times as people read them: relative ("3 minutes ago", "in 29 days") next to an absolute UTC
// time, and small DOM helpers that only ever set text (a token's name is never parsed as HTML).
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'always' });
const STEPS: Array<[Intl.RelativeTimeFormatUnit, number, number]> = [
  // unit, its length in ms, used from this many ms on ("in 45 days" reads better than "in 1 month")
  ['year', 365 * 86_400_000, 365 * 86_400_000],
  ['month', 30 * 86_400_000, 60 * 86_400_000],
  ['day', 86_400_000, 86_400_000],
  ['hour', 3_600_000, 3_600_000],
  ['minute', 60_000, 60_000],
];

/** `past`: an event that has happened (a clock a little behind the server's must not say "in 1 minute"). */
export function relativeTime(iso: string, now = Date.now(), past = false): string {
  const delta = past ? Math.min(0, Date.parse(iso) - now) : Date.parse(iso) - now;
  const step = STEPS.find(([, , from]) => Math.abs(delta) >= from);
  if (!step) return delta <= 0 ? 'just now' : 'in less than a minute';
  const [unit, length] = step;
  return relative.format(Math.trunc(delta / length), unit);
}

/** 2026-05-01 14:03 UTC */
export const absoluteTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

type Child = Node | string | null | undefined | false;

/** An element with attributes and children; strings become text nodes, never markup. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, ...children: Child[]) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child) element.append(child);
  return element;
}

/** A <time> with the relative wording, its absolute value one line below. */
export function timeCell(iso: string | null, never: string, past = false) {
  if (!iso) return el('span', {}, never);
  const relative = relativeTime(iso, Date.now(), past);
  return el('span', {}, el('time', { datetime: iso, title: absoluteTime(iso) }, relative), el('br'), el('small', {}, absoluteTime(iso)));
}

export const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** Shows a message in an inline message region (empty: hides it). */
export function say(region: HTMLElement, message: string) {
  region.textContent = message;
  region.hidden = message === '';
}
