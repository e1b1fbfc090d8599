// The report a person reads: a self-contained HTML page (inline CSS and SVG, nothing fetched)
// with the targets, a throughput chart, a latency chart, worker memory, and every figure; and the
// main chart (throughput and p99 side by side, with the targets) as SVG, which png.ts renders for
// docs/benchmarks.md. Each scenario row has its own scale (a small page answers 100x faster than a heavy
// one): the bars compare project with reference within a row, the numbers give the magnitude.
import type { Server } from './config.js';
import type { Report } from './report.js';
import type { LoadSummary, ScenarioResult } from './results.js';
import { sensorScriptsHtml } from './sensor-targets.js';

const COLOR: Record<Server, string> = { project: '#2563eb', reference: '#9ca3af' };
export const STATUS_COLOR = { pass: '#15803d', miss: '#b91c1c', 'not measured': '#6b7280' } as const;
export const FONT = 'DejaVu Sans, Helvetica, Arial, sans-serif';

export const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
export const num = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';
const fmtRate = (value: number) => (value >= 100 ? num(value) : num(value, 1));
const fmtMs = (value: number) => (value >= 100 ? num(value) : num(value, 1));

export function text(x: number, y: number, content: string, attrs = '') {
  return `<text x="${x}" y="${y}" font-family="${FONT}" ${attrs}>${esc(content)}</text>`;
}

interface Row {
  scenario: ScenarioResult;
  label: string;
  project: LoadSummary | undefined;
  reference: LoadSummary | undefined;
}

/** every measured load of every scenario, headline first */
function rowsOf(report: Report): Row[] {
  return report.scenarios
    .filter((s) => s.status === 'measured')
    .flatMap((scenario) =>
      Object.keys(scenario.summary.project?.loads ?? {}).map((label) => ({
        scenario,
        label,
        project: scenario.summary.project?.loads[label],
        reference: scenario.summary.reference?.loads[label],
      })),
    );
}

/** Throughput (2xx/s) and p99 latency per scenario, project vs reference, plus the targets strip. */
export function mainChartSvg(report: Report): string {
  const rows = rowsOf(report);
  const width = 1200;
  const labelWidth = 330;
  const panel = (width - labelWidth - 60) / 2;
  const rowHeight = 46;
  const top = 96;
  const height = top + rows.length * rowHeight + 90;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  out.push(
    text(
      20,
      32,
      `coldtrack-api benchmark: project vs minimal Fastify reference (${report.mode}, ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC)`,
      'font-size="19" font-weight="bold" fill="#111827"',
    ),
  );
  out.push(
    text(
      20,
      54,
      `${report.machine.cpus} cores shared by both 2-worker clusters, PostgreSQL, Redis and the load generator; ${report.seconds} s runs, ${report.runsPerServer} per server, alternated`,
      'font-size="13" fill="#4b5563"',
    ),
  );
  const x1 = labelWidth;
  const x2 = labelWidth + panel + 40;
  out.push(text(x1, top - 12, 'throughput, 2xx responses/s (longer is better)', 'font-size="13" font-weight="bold" fill="#111827"'));
  out.push(text(x2, top - 12, 'p99 latency, ms (shorter is better)', 'font-size="13" font-weight="bold" fill="#111827"'));
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    if (i % 2 === 0) out.push(`<rect x="10" y="${y - 4}" width="${width - 20}" height="${rowHeight}" fill="#f3f4f6"/>`);
    out.push(text(20, y + 16, row.scenario.title, 'font-size="13" fill="#111827"'));
    out.push(text(20, y + 33, row.label + (row.scenario.target ? `  (${row.scenario.target})` : ''), 'font-size="11" fill="#6b7280"'));
    const bars = (x: number, value: (load: LoadSummary) => number, format: (v: number) => string) => {
      // a load with no answer within the run has neither a rate nor a latency to draw
      const values = (['project', 'reference'] as const).map((server) =>
        row[server] && row[server]!.reqPerS > 0 ? value(row[server]!) : NaN,
      );
      const max = Math.max(1e-9, ...values.filter(Number.isFinite));
      (['project', 'reference'] as const).forEach((server, k) => {
        const v = values[k]!;
        const by = y + 2 + k * 19;
        if (!Number.isFinite(v)) {
          out.push(text(x, by + 13, `${server}: ${row[server] ? 'no answer within the run' : 'not run'}`, 'font-size="11" fill="#6b7280"'));
          return;
        }
        const w = Math.max(1, ((panel - 110) * v) / max);
        out.push(`<rect x="${x}" y="${by}" width="${w.toFixed(1)}" height="16" fill="${COLOR[server]}"/>`);
        out.push(text(x + w + 6, by + 13, `${format(v)} ${server === 'reference' ? 'ref' : ''}`.trim(), 'font-size="12" fill="#111827"'));
      });
    };
    bars(x1, (load) => load.okPerS, fmtRate);
    bars(x2, (load) => load.latencyMs.p99, fmtMs);
  });
  const legendY = top + rows.length * rowHeight + 18;
  out.push(`<rect x="${x1}" y="${legendY - 11}" width="14" height="14" fill="${COLOR.project}"/>`);
  out.push(text(x1 + 20, legendY, 'project (dist/src/main.js, WORKERS=2)', 'font-size="12" fill="#111827"'));
  out.push(`<rect x="${x1 + 290}" y="${legendY - 11}" width="14" height="14" fill="${COLOR.reference}"/>`);
  out.push(text(x1 + 310, legendY, 'reference (bench/reference, same I/O, no project code)', 'font-size="12" fill="#111827"'));
  // targets strip
  const stripY = legendY + 36;
  const cell = (width - 40) / report.targets.length;
  report.targets.forEach((target, i) => {
    const x = 20 + i * cell;
    out.push(`<rect x="${x}" y="${stripY - 16}" width="${cell - 6}" height="26" rx="4" fill="${STATUS_COLOR[target.status]}"/>`);
    const label = target.status === 'not measured' ? 'n/m' : target.status.toUpperCase();
    out.push(text(x + 8, stripY + 2, `${target.key} ${label}`, 'font-size="13" font-weight="bold" fill="#ffffff"'));
  });
  out.push('</svg>');
  return out.join('\n');
}

function latencySvg(report: Report): string {
  const rows = rowsOf(report);
  const width = 1000;
  const labelWidth = 330;
  const span = width - labelWidth - 150;
  const rowHeight = 44;
  const height = 40 + rows.length * rowHeight + 30;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`];
  out.push(
    text(
      20,
      22,
      'Latency per scenario: bar from p50 to p99, tick at p97.5 (ms; each row on its own scale)',
      'font-size="13" font-weight="bold" fill="#111827"',
    ),
  );
  rows.forEach((row, i) => {
    const y = 40 + i * rowHeight;
    if (i % 2 === 0) out.push(`<rect x="10" y="${y - 4}" width="${width - 20}" height="${rowHeight}" fill="#f3f4f6"/>`);
    out.push(text(20, y + 16, row.scenario.title, 'font-size="13" fill="#111827"'));
    out.push(text(20, y + 32, row.label, 'font-size="11" fill="#6b7280"'));
    const max = Math.max(1e-9, ...(['project', 'reference'] as const).map((s) => row[s]?.latencyMs.p99 ?? 0));
    const scale = (ms: number) => labelWidth + (span * ms) / max;
    (['project', 'reference'] as const).forEach((server, k) => {
      const load = row[server];
      if (!load || load.reqPerS === 0) return;
      const by = y + 4 + k * 18;
      const { p50, p97_5, p99 } = load.latencyMs;
      out.push(
        `<rect x="${scale(p50).toFixed(1)}" y="${by}" width="${Math.max(2, scale(p99) - scale(p50)).toFixed(1)}" height="12" fill="${COLOR[server]}"/>`,
      );
      out.push(`<rect x="${scale(p97_5).toFixed(1)}" y="${by - 2}" width="2" height="16" fill="#111827"/>`);
      out.push(text(scale(p99) + 6, by + 11, `${fmtMs(p50)} / ${fmtMs(p97_5)} / ${fmtMs(p99)}`, 'font-size="11" fill="#111827"'));
    });
  });
  out.push('</svg>');
  return out.join('\n');
}

function memorySvg(report: Report): string {
  const rows = report.scenarios.filter((s) => s.status === 'measured');
  const width = 1000;
  const labelWidth = 330;
  const span = width - labelWidth - 140;
  const rowHeight = 44;
  const height = 40 + rows.length * rowHeight + 20;
  const limitMb = 256;
  const maxMb = Math.max(
    limitMb * 1.1,
    ...rows.flatMap((s) => [...(s.summary.project?.rssMb ?? []), ...(s.summary.reference?.rssMb ?? [])]),
  );
  const scale = (mb: number) => labelWidth + (span * mb) / maxMb;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`];
  out.push(
    text(
      20,
      22,
      'Highest RSS per worker during each scenario (MB; red line: the 256 MB target, P8)',
      'font-size="13" font-weight="bold" fill="#111827"',
    ),
  );
  rows.forEach((scenario, i) => {
    const y = 40 + i * rowHeight;
    if (i % 2 === 0) out.push(`<rect x="10" y="${y - 4}" width="${width - 20}" height="${rowHeight}" fill="#f3f4f6"/>`);
    out.push(text(20, y + 20, scenario.title, 'font-size="13" fill="#111827"'));
    (['project', 'reference'] as const).forEach((server, k) => {
      const workers = scenario.summary[server]?.rssMb ?? [];
      workers.forEach((mb, w) => {
        const by = y + k * 18 + w * (16 / Math.max(1, workers.length));
        out.push(
          `<rect x="${labelWidth}" y="${by.toFixed(1)}" width="${(scale(mb) - labelWidth).toFixed(1)}" height="${(14 / Math.max(1, workers.length)).toFixed(1)}" fill="${COLOR[server]}"/>`,
        );
      });
      if (workers.length)
        out.push(
          text(scale(Math.max(...workers)) + 6, y + k * 18 + 12, workers.map((mb) => num(mb)).join(' / '), 'font-size="11" fill="#111827"'),
        );
    });
  });
  out.push(`<rect x="${scale(limitMb).toFixed(1)}" y="34" width="2" height="${rows.length * rowHeight + 6}" fill="#b91c1c"/>`);
  out.push('</svg>');
  return out.join('\n');
}

function figureTable(report: Report): string {
  const head = [
    'scenario',
    'load',
    'server',
    'runs',
    '2xx/s',
    'all/s',
    'p50 ms',
    'p97.5 ms',
    'p99 ms',
    'max ms',
    'non-2xx',
    'errors',
    'MB/s',
    'RSS/worker MB',
    'loop p99 ms',
  ];
  const body: string[] = [];
  for (const scenario of report.scenarios) {
    if (scenario.status !== 'measured') {
      body.push(
        `<tr><td>${esc(scenario.title)}</td><td colspan="${head.length - 1}" class="muted">${esc(scenario.reason ?? 'not measured')}</td></tr>`,
      );
      continue;
    }
    for (const server of ['project', 'reference'] as const) {
      const summary = scenario.summary[server];
      if (!summary) continue;
      for (const [label, load] of Object.entries(summary.loads)) {
        const first = label === Object.keys(summary.loads)[0];
        body.push(
          `<tr class="${server}"><td>${esc(scenario.title)}</td><td>${esc(label)}</td><td>${server}</td><td>${load.runs}</td>` +
            `<td><b>${fmtRate(load.okPerS)}</b></td><td>${fmtRate(load.reqPerS)}</td><td>${fmtMs(load.latencyMs.p50)}</td><td>${fmtMs(load.latencyMs.p97_5)}</td>` +
            `<td>${fmtMs(load.latencyMs.p99)}</td><td>${fmtMs(load.latencyMs.max)}</td><td>${load.non2xx}</td><td>${load.errors}</td><td>${num(load.mbPerS, 1)}</td>` +
            `<td>${first ? summary.rssMb.map((mb) => num(mb)).join(' / ') : ''}</td><td>${first && summary.loop ? fmtMs(summary.loop.p99Ms) : ''}</td></tr>`,
        );
      }
    }
  }
  return `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${body.join('\n')}</tbody></table>`;
}

function runsTable(report: Report): string {
  const body: string[] = [];
  for (const scenario of report.scenarios) {
    for (const run of scenario.runs) {
      for (const load of run.loads) {
        const f = load.figures;
        body.push(
          `<tr class="${run.server}"><td>${esc(scenario.id)}</td><td>${run.position + 1}</td><td>${run.server}</td><td>${esc(load.label)}</td><td>${load.connections}${load.overallRate ? ` @ ${load.overallRate}/s` : ''}</td>` +
            `<td>${load.requestsInList}</td><td>${num(f.durationS, 1)}</td><td>${fmtRate(f.okPerS)}</td><td>${fmtMs(f.latencyMs.p50)}</td><td>${fmtMs(f.latencyMs.p99)}</td>` +
            `<td>${esc(JSON.stringify(f.statusCodes))}</td><td>${f.errors}</td></tr>`,
        );
      }
    }
  }
  return `<table><thead><tr><th>scenario</th><th>run</th><th>server</th><th>load</th><th>connections</th><th>distinct requests</th><th>s</th><th>2xx/s</th><th>p50 ms</th><th>p99 ms</th><th>status codes</th><th>errors</th></tr></thead><tbody>${body.join('\n')}</tbody></table>`;
}

/** The look both HTML reports share (this one and the scale curve's, scale-html.ts). */
export const REPORT_STYLE = `body { font-family: ${FONT}; margin: 24px; color: #111827; max-width: 1280px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 8px 0; }
th, td { border-bottom: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f4f6; }
.badge { color: #fff; border-radius: 4px; padding: 2px 6px; font-size: 11px; font-weight: bold; white-space: nowrap; }
.muted { color: #6b7280; }
svg { max-width: 100%; height: auto; }`;

export function renderHtml(report: Report): string {
  const targets = report.targets
    .map(
      (t) =>
        `<tr><td><b>${t.key}</b></td><td><span class="badge" style="background:${STATUS_COLOR[t.status]}">${t.status.toUpperCase()}</span></td>` +
        `<td>${esc(t.title)}</td><td>${esc(t.goal)}</td><td>${esc(t.measured || t.detail)}</td><td class="muted">${esc(t.measured ? t.detail : '')}</td></tr>`,
    )
    .join('\n');
  const scenarioList = report.scenarios
    .map((s) => `<li><b>${esc(s.title)}</b> (${esc(s.id)}${s.target ? `, ${s.target}` : ''}): ${esc(s.what)}</li>`)
    .join('\n');
  const revocation = report.revocation && 'rounds' in report.revocation ? report.revocation : null;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coldtrack-api benchmark ${esc(report.startedAt)}</title>
<style>
${REPORT_STYLE}
tr.project td:nth-child(3) { color: ${COLOR.project}; font-weight: bold; }
code { background: #f3f4f6; padding: 1px 4px; }
</style></head><body>
<h1>coldtrack-api benchmark (${esc(report.mode)})</h1>
<p class="muted">${esc(report.startedAt)} to ${esc(report.finishedAt)} (${num(report.durationS)} s) on ${report.machine.cpus} cores (${esc(report.machine.cpuModel)}), ${num(report.machine.memoryGb, 1)} GB,
Node ${esc(report.machine.node)}, ${esc(report.machine.postgres)}, Redis ${esc(report.machine.redis)}, commit ${esc(report.machine.commit)};
1-minute load average ${num(report.machine.loadAverage.start, 1)} at the start, ${num(report.machine.loadAverage.end, 1)} at the end.
${esc(report.machine.note)}</p>
<h2>Targets</h2>
<table><thead><tr><th></th><th></th><th>target</th><th>goal</th><th>measured</th><th>detail</th></tr></thead><tbody>${targets}</tbody></table>
<h2>Throughput and p99 latency</h2>
${mainChartSvg(report)}
<h2>Latency distribution</h2>
${latencySvg(report)}
<h2>Worker memory</h2>
${memorySvg(report)}
<h2>Every figure (averaged over the runs of each server)</h2>
${figureTable(report)}
${report.sensorScripts ? `<h2>Sensor scripts by storage profile</h2>\n${sensorScriptsHtml(report.sensorScripts, STATUS_COLOR)}` : ''}
${revocation ? `<h2>Revocation (P7)</h2><p>${revocation.rounds} rounds, each: one fresh token hammered from 8 connections, revoked mid-stream. Requests started after the revoke call returned: ${revocation.requestsAfterRevoke}, answered ${esc(JSON.stringify(revocation.statusesAfterRevoke))}; accepted: <b>${revocation.acceptedAfterRevoke}</b>. Accepted before the revoke: ${revocation.acceptedBeforeRevoke}; started while the revoke was in flight: ${revocation.inFlightDuringRevoke}. Revoke call p50 ${num(revocation.revokeMs.p50, 1)} ms, max ${num(revocation.revokeMs.max, 1)} ms.</p>` : ''}
<h2>Scenarios</h2><ul>${scenarioList}</ul>
<h2>Runs</h2>
${runsTable(report)}
<h2>Data set</h2>
<p>Database <code>${esc(report.dataset.database)}</code> (dropped after the run), window ${esc(report.dataset.window)}, built in ${num(report.dataset.buildSeconds, 1)} s:
${esc(
  Object.entries(report.dataset.counts)
    .map(([k, v]) => `${num(v)} ${k}`)
    .join(', '),
)}${report.dataset.sensorReadings ? `; ${num(report.dataset.sensorReadings.rows)} sensor readings in ${num(report.dataset.sensorReadings.seconds, 1)} s` : ''}.
Sensor-data: ${esc(report.sensor.available ? 'available' : report.sensor.reason)}.</p>
<h2>Notes</h2><ul>${report.notes.map((n) => `<li>${esc(n)}</li>`).join('\n')}</ul>
</body></html>
`;
}
