// The P9 scale curve drawn: latency against data size (both axes logarithmic, one panel per
// storage profile, the 1.5x limit of each request dashed), the live ingest rate against data size
// (its 0.8x floor dashed), and a self-contained HTML page with the chart, the targets and every
// figure (inline SVG and CSS, nothing fetched). Helpers shared with the main report: html.ts.
import { esc, num, REPORT_STYLE, STATUS_COLOR, text } from './html.js';
import { LATENCIES, type LatencyKey, P9_INGEST_FLOOR, P9_LATENCY_LIMIT, type StepFigures } from './scale-plan.js';
import { baselineOf, type ProfileOutcome, type ScaleReport } from './scale-report.js';

const SERIES: Record<LatencyKey, string> = { hourlyYear: '#2563eb', dailyYear: '#16a34a', page500: '#d97706', newestDay: '#9333ea' };
const PROFILE_COLOR = { postgres: '#2563eb', timescale: '#ea580c' } as const;
const X_DECADES = [6, 8] as const; // 1M .. 100M readings
const fmtMs = (value: number) => (value >= 100 ? num(value) : num(value, 1));
const SIZE_LABEL: Record<number, string> = { 6: '1M', 7: '10M', 8: '100M' };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const measured = (report: ScaleReport) =>
  report.profiles.filter(
    (outcome): outcome is ProfileOutcome & { curve: NonNullable<ProfileOutcome['curve']> } =>
      !!outcome.curve && outcome.curve.steps.length > 0,
  );

/** x of a reading count on the log axis of `box` */
const xOf = (box: Box, readings: number) =>
  box.x + (box.width * (Math.log10(readings) - X_DECADES[0] + 0.1)) / (X_DECADES[1] - X_DECADES[0] + 0.2);

function sizeAxis(box: Box): string[] {
  const out: string[] = [];
  for (let decade = X_DECADES[0]; decade <= X_DECADES[1]; decade++) {
    const x = xOf(box, 10 ** decade);
    out.push(`<line x1="${x.toFixed(1)}" y1="${box.y}" x2="${x.toFixed(1)}" y2="${box.y + box.height}" stroke="#e5e7eb"/>`);
    out.push(text(x - 14, box.y + box.height + 16, SIZE_LABEL[decade]!, 'font-size="11" fill="#4b5563"'));
  }
  out.push(text(box.x + box.width / 2 - 70, box.y + box.height + 32, 'readings in the store (log)', 'font-size="11" fill="#4b5563"'));
  out.push(`<rect x="${box.x}" y="${box.y}" width="${box.width}" height="${box.height}" fill="none" stroke="#9ca3af"/>`);
  return out;
}

/** One profile's four latencies on log-log axes, with each request's 1.5x-of-1M limit dashed. */
function latencyPanel(
  box: Box,
  outcome: ProfileOutcome & { curve: NonNullable<ProfileOutcome['curve']> },
  range: [number, number],
): string[] {
  const [low, high] = range.map(Math.log10) as [number, number];
  const yOf = (value: number) => box.y + box.height - (box.height * (Math.log10(value) - low)) / (high - low);
  const out = [text(box.x, box.y - 10, `${outcome.profile} profile`, 'font-size="14" font-weight="bold" fill="#111827"')];
  for (const tick of [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]) {
    if (tick < range[0] || tick > range[1]) continue;
    const y = yOf(tick);
    out.push(`<line x1="${box.x}" y1="${y.toFixed(1)}" x2="${box.x + box.width}" y2="${y.toFixed(1)}" stroke="#f3f4f6"/>`);
    out.push(text(box.x - 40, y + 4, `${tick} ms`, 'font-size="10" fill="#6b7280"'));
  }
  out.push(...sizeAxis(box));
  const steps = outcome.curve.steps;
  const first = steps[0]!.label === '1M' ? steps[0]! : null;
  // the limit the target uses: 1.5x the 1M figure measured beside the largest size
  const baseline = first ? baselineOf(steps.at(-1)!, first) : null;
  for (const latency of LATENCIES) {
    const color = SERIES[latency.key];
    const points = steps.map((step) => [xOf(box, step.readings), yOf(step.latencyMs[latency.key])] as const);
    if (baseline) {
      const limit = yOf(baseline.latencyMs[latency.key] * P9_LATENCY_LIMIT);
      out.push(
        `<line x1="${xOf(box, 1e6).toFixed(1)}" y1="${limit.toFixed(1)}" x2="${xOf(box, 1e8).toFixed(1)}" y2="${limit.toFixed(1)}" stroke="${color}" stroke-dasharray="4 4" stroke-opacity="0.6"/>`,
      );
    }
    // the 1M store measured again beside each larger size: hollow, at 1M
    for (const step of steps) {
      if (step.beside)
        out.push(
          `<circle cx="${xOf(box, step.beside.readings).toFixed(1)}" cy="${yOf(step.beside.latencyMs[latency.key]).toFixed(1)}" r="4" fill="none" stroke="${color}"/>`,
        );
    }
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2.5" points="${points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ')}"/>`,
    );
    steps.forEach((step, i) => {
      const [x, y] = points[i]!;
      out.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="4" fill="${color}"/>`);
      out.push(text(x + 6, y - 6, fmtMs(step.latencyMs[latency.key]), `font-size="10" fill="${color}"`));
    });
  }
  return out;
}

/** The live batch's median rate per profile against the store's size, each 0.8x-of-1M floor dashed. */
function ingestPanel(box: Box, report: ScaleReport): string[] {
  const curves = measured(report);
  const highest = Math.max(1, ...curves.flatMap((outcome) => outcome.curve.steps.map((step) => step.ingest.median))) * 1.1;
  // four gridlines at a round step (25k, 50k, 100k, 250k, ...)
  const magnitude = 10 ** Math.floor(Math.log10(highest / 4));
  const top = 4 * magnitude * ([1, 2, 2.5, 5, 10].find((factor) => 4 * factor * magnitude >= highest) ?? 10);
  const yOf = (value: number) => box.y + box.height - (box.height * value) / top;
  const out = [
    text(box.x, box.y - 24, 'live ingest batch, readings/s', 'font-size="14" font-weight="bold" fill="#111827"'),
    text(
      box.x,
      box.y - 8,
      'hollow: the 1M store beside the largest sizes; dashed: 0.8x its rate beside the largest',
      'font-size="11" fill="#4b5563"',
    ),
  ];
  for (let k = 0; k <= 4; k++) {
    const value = (top * k) / 4;
    out.push(
      `<line x1="${box.x}" y1="${yOf(value).toFixed(1)}" x2="${box.x + box.width}" y2="${yOf(value).toFixed(1)}" stroke="#f3f4f6"/>`,
    );
    out.push(text(box.x - 46, yOf(value) + 4, `${num(value / 1000)}k`, 'font-size="10" fill="#6b7280"'));
  }
  out.push(...sizeAxis(box));
  for (const outcome of curves) {
    const color = PROFILE_COLOR[outcome.profile];
    const steps = outcome.curve.steps;
    const points = steps.map((step) => [xOf(box, step.readings), yOf(step.ingest.median)] as const);
    if (steps[0]!.label === '1M') {
      const floor = yOf(baselineOf(steps.at(-1)!, steps[0]!).ingest.median * P9_INGEST_FLOOR);
      out.push(
        `<line x1="${xOf(box, 1e6).toFixed(1)}" y1="${floor.toFixed(1)}" x2="${xOf(box, 1e8).toFixed(1)}" y2="${floor.toFixed(1)}" stroke="${color}" stroke-dasharray="4 4" stroke-opacity="0.6"/>`,
      );
    }
    for (const step of steps) {
      if (step.beside)
        out.push(
          `<circle cx="${xOf(box, step.beside.readings).toFixed(1)}" cy="${yOf(step.beside.ingest.median).toFixed(1)}" r="4" fill="none" stroke="${color}"/>`,
        );
    }
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2.5" points="${points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ')}"/>`,
    );
    steps.forEach((step, i) => {
      out.push(`<circle cx="${points[i]![0].toFixed(1)}" cy="${points[i]![1].toFixed(1)}" r="4" fill="${color}"/>`);
      out.push(text(points[i]![0] + 6, points[i]![1] - 6, `${num(step.ingest.median / 1000)}k`, `font-size="10" fill="${color}"`));
    });
    const last = points.at(-1)!;
    out.push(text(last[0] + 6, last[1] + 14, outcome.profile, `font-size="11" fill="${color}"`));
  }
  return out;
}

/** The chart: a latency panel per measured profile (one shared y range), then the ingest rate. */
export function scaleChartSvg(report: ScaleReport): string {
  const curves = measured(report);
  const width = 1200;
  const panelWidth = (width - 100 - (curves.length - 1) * 70) / Math.max(1, curves.length);
  const latencyBox = { y: 110, height: 330 };
  const ingestBox: Box = { x: 80, y: latencyBox.y + latencyBox.height + 100, width: 520, height: 200 };
  const height = ingestBox.y + ingestBox.height + 60;
  const values = curves.flatMap((outcome) =>
    outcome.curve.steps.flatMap((step) => [...Object.values(step.latencyMs), ...Object.values(step.beside?.latencyMs ?? {})]),
  );
  const range: [number, number] = values.length ? [Math.min(...values) / 1.6, Math.max(...values) * P9_LATENCY_LIMIT * 1.3] : [1, 1000];
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    '<rect width="100%" height="100%" fill="#ffffff"/>',
  ];
  out.push(
    text(
      20,
      30,
      `coldtrack-api P9 scale curve: latency of one unit's history against the data around it (${report.startedAt.slice(0, 16).replace('T', ' ')} UTC)`,
      'font-size="18" font-weight="bold" fill="#111827"',
    ),
  );
  out.push(
    text(
      20,
      52,
      `Median of warm rounds through the app, both axes logarithmic. Hollow: the 1M store (grown by its live batches) measured again beside each larger size,`,
      'font-size="12" fill="#4b5563"',
    ),
  );
  out.push(
    text(
      20,
      68,
      `alternating; dashed: the P9 limit, ${P9_LATENCY_LIMIT}x the 1M figure measured beside the largest size. ${report.machine.cpus} cores, commit ${report.machine.commit}.`,
      'font-size="12" fill="#4b5563"',
    ),
  );
  let legendX = 20;
  for (const latency of LATENCIES) {
    out.push(`<rect x="${legendX}" y="80" width="12" height="12" fill="${SERIES[latency.key]}"/>`);
    out.push(text(legendX + 17, 90, latency.title, 'font-size="12" fill="#111827"'));
    legendX += 40 + latency.title.length * 7;
  }
  curves.forEach((outcome, i) =>
    out.push(
      ...latencyPanel(
        { x: 80 + i * (panelWidth + 70), y: latencyBox.y + 20, width: panelWidth, height: latencyBox.height - 20 },
        outcome,
        range,
      ),
    ),
  );
  if (curves.length === 0) out.push(text(80, 200, 'no profile was measured', 'font-size="14" fill="#6b7280"'));
  out.push(...ingestPanel(ingestBox, report));
  const targetsX = ingestBox.x + ingestBox.width + 60;
  out.push(
    text(
      targetsX,
      ingestBox.y - 24,
      'P9 targets (ratio: the largest size over 1M beside it)',
      'font-size="14" font-weight="bold" fill="#111827"',
    ),
  );
  report.targets.forEach((target, i) => {
    const y = ingestBox.y + 4 + i * 20;
    const label = target.status === 'not measured' ? 'n/m' : target.status.toUpperCase();
    out.push(`<rect x="${targetsX}" y="${y}" width="44" height="16" rx="3" fill="${STATUS_COLOR[target.status]}"/>`);
    out.push(text(targetsX + 5, y + 12, label, 'font-size="11" font-weight="bold" fill="#ffffff"'));
    out.push(
      text(
        targetsX + 52,
        y + 12,
        `${target.profile} ${target.title}: ${target.ratio === null ? '-' : `${target.ratio.toFixed(2)}x`}`,
        'font-size="11" fill="#111827"',
      ),
    );
  });
  out.push('</svg>');
  return out.join('\n');
}

function stepRows(outcome: ProfileOutcome): string {
  const per = (bytes: number, step: StepFigures) => num(bytes / step.readings, 1);
  const figures = (step: Pick<StepFigures, 'latencyMs' | 'rounds' | 'ingest'>) =>
    LATENCIES.map(
      (latency) =>
        `<td><b>${fmtMs(step.latencyMs[latency.key])}</b> <span class="muted">(${step.rounds[latency.key].map(fmtMs).join(' ')})</span></td>`,
    ).join('') +
    `<td><b>${num(step.ingest.median)}</b> <span class="muted">(${step.ingest.perSecond.map((rate) => num(rate)).join(' ')})</span></td>`;
  return (outcome.curve?.steps ?? [])
    .map(
      (step) =>
        `<tr><td>${outcome.profile}</td><td>${step.label}</td><td>${num(step.units)}</td><td>${num(step.readings)}</td>` +
        `<td>${num(step.load.seconds)} s, ${num(step.load.perSecond)}/s (last tenth ${num(step.load.lastTenthPerSecond)}/s)</td><td>${num(step.upkeep.seconds)} s</td>` +
        figures(step) +
        `<td>${per(step.bytes.readings, step)} + ${per(step.bytes.aggregates, step)} = <b>${per(step.bytes.readings + step.bytes.aggregates, step)}</b> (database ${per(step.bytes.database, step)}; as loaded ${per(step.bytesLoaded.readings + step.bytesLoaded.aggregates, step)})</td>` +
        `<td>${num(step.peakDatabaseBytes / 2 ** 30, 2)} GB</td><td>${num(step.wallSeconds)} s (load average ${num(step.loadAverage.start, 1)} to ${num(step.loadAverage.end, 1)})</td>` +
        `<td class="muted">${esc(step.layout)}</td></tr>` +
        (step.beside
          ? `\n<tr class="muted"><td>${outcome.profile}</td><td colspan="2">the 1M store beside ${step.label}</td><td>${num(step.beside.readings)}</td><td></td><td></td>${figures(step.beside)}<td colspan="4"></td></tr>`
          : ''),
    )
    .join('\n');
}

export function scaleHtml(report: ScaleReport): string {
  const targets = report.targets
    .map(
      (target) =>
        `<tr><td><span class="badge" style="background:${STATUS_COLOR[target.status]}">${target.status.toUpperCase()}</span></td>` +
        `<td>${target.profile}</td><td>${esc(target.title)}</td><td>${esc(target.goal)}</td><td>${esc(target.measured)}</td></tr>`,
    )
    .join('\n');
  const profiles = report.profiles
    .map(
      (outcome) =>
        `<li><b>${outcome.profile}</b>: ${esc(outcome.curve?.note || '')} ${outcome.status === 'measured' ? '' : `<b>${outcome.status.toUpperCase()}</b>: ${esc(outcome.reason ?? '')}`}</li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coldtrack-api P9 scale curve ${esc(report.startedAt)}</title>
<style>
${REPORT_STYLE}
</style></head><body>
<h1>coldtrack-api P9 scale curve (--scale-max ${esc(report.max)})</h1>
<p class="muted">${esc(report.startedAt)} to ${esc(report.finishedAt)} (${num(report.durationS)} s) on ${report.machine.cpus} cores (${esc(report.machine.cpuModel)}), ${num(report.machine.memoryGb, 1)} GB,
Node ${esc(report.machine.node)}, commit ${esc(report.machine.commit)}; 1-minute load average ${num(report.machine.loadAverage.start, 1)} at the start, ${num(report.machine.loadAverage.end, 1)} at the end.
Peak disk: ${num(report.peakDatabaseBytes / 2 ** 30, 2)} GB of databases (the largest size, and the 1M store kept beside it; one profile at a time)${report.peakFileSystemGrowthBytes === null ? '' : `; the data directory's file system grew by at most ${num(report.peakFileSystemGrowthBytes / 2 ** 30, 2)} GB (WAL and anything else writing meanwhile included)`}.</p>
<ul>${profiles}</ul>
<h2>Targets</h2>
<table><thead><tr><th></th><th>profile</th><th>target</th><th>goal</th><th>measured</th></tr></thead><tbody>${targets}</tbody></table>
<h2>Latency and ingest against data size</h2>
${scaleChartSvg(report)}
<h2>Every figure</h2>
<table><thead><tr><th>profile</th><th>size</th><th>units</th><th>readings</th><th>load</th><th>upkeep</th>${LATENCIES.map((latency) => `<th>${esc(latency.title)} ms, median (rounds)</th>`).join('')}<th>live ingest readings/s, median (rounds)</th><th>bytes a reading: readings + aggregates</th><th>peak database</th><th>wall</th><th>store after the upkeep</th></tr></thead>
<tbody>${report.profiles.map(stepRows).join('\n')}</tbody></table>
<h2>Method</h2><ul>${report.method.map((line) => `<li>${esc(line)}</li>`).join('\n')}</ul>
<h2>Requests</h2><ul>${LATENCIES.map((latency) => `<li><b>${esc(latency.title)}</b>: ${esc(latency.what)}</li>`).join('\n')}</ul>
</body></html>
`;
}
