// A token's requests per day as stacked SVG bars, one per UTC day, drawn by hand (no chart
// library in the bundle). Readable without colour: each answer class has a fill pattern of its own
// as well as a colour, the legend shows both with the class's name, every bar has a tooltip with
// its figures, and the axes are labelled. The table beside it (usage.ts) carries the same figures.
import type { ApiTokenUsageDay } from './api.js';

const SVG = 'http://www.w3.org/2000/svg';

export const CLASSES = ['2xx', '4xx', '429', '5xx'] as const;
export type UsageClass = (typeof CLASSES)[number];
export const CLASS_LABEL: Record<UsageClass, string> = {
  '2xx': 'Answered (2xx)',
  '4xx': 'Refused (4xx)',
  '429': 'Rate limited (429)',
  '5xx': 'Failed (5xx)',
};

// a pattern per class: solid, diagonal lines, dots, cross-hatch (patterns, not colour alone)
const PATTERNS: Record<UsageClass, string> = {
  '2xx': '',
  '4xx': 'M0,8 L8,0',
  '429': 'M2,2 h1 v1 h-1 z M6,6 h1 v1 h-1 z',
  '5xx': 'M0,0 L8,8 M0,8 L8,0',
};

const WIDTH = 640;
const HEIGHT = 240;
const PLOT = { left: 56, right: 12, top: 12, bottom: 44 };

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
  ...children: Array<Node | string>
) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

/** A class's fill: its colour and its texture. */
function pattern(name: UsageClass, id: string) {
  const fill = svg('pattern', { id, width: 8, height: 8, patternUnits: 'userSpaceOnUse' });
  fill.append(svg('rect', { width: 8, height: 8, class: `usage-class-${name}` }));
  if (PATTERNS[name]) fill.append(svg('path', { d: PATTERNS[name], class: 'usage-texture' }));
  return fill;
}

/** A round axis maximum at or above the busiest day: 1, 2, 5, 10, 20, 50, ... */
export function axisMaximum(busiest: number) {
  if (busiest <= 1) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(busiest));
  return ([1, 2, 5, 10].map((step) => step * magnitude).find((top) => top >= busiest) ?? 10 * magnitude) as number;
}

function dayLabel(date: string) {
  return date.slice(5); // MM-DD: the year is in the caption
}

export function usageChart(days: ApiTokenUsageDay[]): SVGSVGElement {
  const top = axisMaximum(Math.max(0, ...days.map((day) => day.requests)));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(2, slot * 0.7);
  const y = (value: number) => PLOT.top + plotHeight - (value / top) * plotHeight;
  const total = days.reduce((sum, day) => sum + day.requests, 0);

  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'usage-chart',
    role: 'img',
    'aria-label': `Requests per day, ${days[0]?.date ?? ''} to ${days.at(-1)?.date ?? ''}: ${total} in all. The table below has every day's figures.`,
  });
  chart.append(svg('defs', {}, ...CLASSES.map((name) => pattern(name, `usage-fill-${name}`))));

  // the y axis: 0, half and the top, with grid lines, and its title
  const axis = svg('g', { class: 'usage-axis' });
  for (const value of [0, top / 2, top]) {
    if (!Number.isInteger(value)) continue;
    axis.append(
      svg('line', { x1: PLOT.left, x2: WIDTH - PLOT.right, y1: y(value), y2: y(value), class: 'usage-grid' }),
      svg('text', { x: PLOT.left - 6, y: y(value) + 4, 'text-anchor': 'end' }, String(value)),
    );
  }
  axis.append(
    svg(
      'text',
      { x: 14, y: PLOT.top + plotHeight / 2, transform: `rotate(-90 14 ${PLOT.top + plotHeight / 2})`, 'text-anchor': 'middle' },
      'Requests',
    ),
    svg('text', { x: PLOT.left + plotWidth / 2, y: HEIGHT - 4, 'text-anchor': 'middle' }, 'Day (UTC)'),
  );
  chart.append(axis);

  // the bars: each day's classes stacked from the bottom, 2xx first
  days.forEach((day, index) => {
    const x = PLOT.left + index * slot + (slot - barWidth) / 2;
    const bar = svg('g', { class: 'usage-bar', 'data-date': day.date });
    const figures = CLASSES.filter((name) => day.by_class[name] > 0).map((name) => `${CLASS_LABEL[name]}: ${day.by_class[name]}`);
    bar.append(svg('title', {}, `${day.date}: ${day.requests} requests${figures.length ? ` (${figures.join(', ')})` : ''}`));
    let base = 0;
    for (const name of CLASSES) {
      const count = day.by_class[name];
      if (count === 0) continue;
      bar.append(
        svg('rect', {
          x,
          width: barWidth,
          y: y(base + count),
          height: Math.max(1, y(base) - y(base + count)),
          fill: `url(#usage-fill-${name})`,
          class: 'usage-segment',
          'data-class': name,
        }),
      );
      base += count;
    }
    chart.append(bar);
    // a date under every seventh day counted back from the last, so the labels never overlap
    if ((days.length - 1 - index) % 7 === 0) {
      chart.append(
        svg(
          'text',
          { x: x + barWidth / 2, y: PLOT.top + plotHeight + 16, 'text-anchor': 'middle', class: 'usage-tick' },
          dayLabel(day.date),
        ),
      );
    }
  });
  return chart;
}

/** The legend: each class's swatch (its pattern, a copy of its own) and its name. */
export function usageLegend(): HTMLElement {
  const list = document.createElement('ul');
  list.className = 'usage-legend plain';
  for (const name of CLASSES) {
    const swatch = svg(
      'svg',
      { width: 16, height: 16, 'aria-hidden': 'true' },
      svg('defs', {}, pattern(name, `usage-swatch-${name}`)),
      svg('rect', { width: 16, height: 16, fill: `url(#usage-swatch-${name})`, class: 'usage-segment' }),
    );
    const item = document.createElement('li');
    item.append(swatch, ` ${CLASS_LABEL[name]}`);
    list.append(item);
  }
  return list;
}
