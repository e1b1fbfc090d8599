// Times as people read them: relative ("3 minutes ago", "in 30 days") next to an absolute UTC
// time, and small DOM helpers that only ever set text (a token's name is never parsed as HTML).
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'always' });
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const STEPS: Array<[Intl.RelativeTimeFormatUnit, number, number, number]> = [
  // unit, its length in ms, used from this many ms on ("in 45 days" reads better than "in 1 month"),
  // that threshold judged on the time rounded to this many ms (a year less a minute is "in 1 year")
  ['year', 365 * DAY, 365 * DAY, DAY],
  ['month', 30 * DAY, 60 * DAY, DAY],
  ['day', DAY, DAY, HOUR],
  ['hour', HOUR, HOUR, MINUTE],
  ['minute', MINUTE, MINUTE, 1000],
];

/**
 * `past`: an event that has happened (a clock a little behind the server's must not say "in 1
 * minute"). Counted to the nearest unit, not down: a token created "in 30 days" still reads
 * "in 30 days" a minute later (29 days, 23 hours and 59 minutes away), not "in 29 days".
 */
export function relativeTime(iso: string, now = Date.now(), past = false): string {
  const delta = past ? Math.min(0, Date.parse(iso) - now) : Date.parse(iso) - now;
  const distance = Math.abs(delta);
  const step = STEPS.find(([, , from, precision]) => Math.round(distance / precision) * precision >= from);
  if (!step) return delta <= 0 ? 'just now' : 'in less than a minute';
  const [unit, length] = step;
  return relative.format(Math.sign(delta) * Math.round(distance / length), unit);
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
