// The loadtest's report as a self-contained HTML page (inline CSS and SVG, nothing fetched), in the
// bench report's look (html.ts): the plan, a chart of each load's 2xx/s against the rate asked and
// its latency from p50 to p99, and every figure with the statuses by code.
import { esc, FONT, num, REPORT_STYLE, text } from './html.js';
import type { LoadtestReport } from './loadtest-report.js';
import { warningsOf } from './loadtest-report.js';

const DEPLOYMENT_COLOR = '#2563eb';
const fmt = (value: number) => (value >= 100 ? num(value) : num(value, 1));

function chartSvg(report: LoadtestReport): string {
  const rows = report.scenarios.flatMap((scenario) => scenario.loads.map((load) => ({ scenario, load })));
  const width = 1100;
  const labelWidth = 300;
  const panel = (width - labelWidth - 60) / 2;
  const rowHeight = 40;
  const top = 50;
  const height = top + rows.length * rowHeight + 20;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}">`,
  ];
  const x1 = labelWidth;
  const x2 = labelWidth + panel + 40;
  out.push(text(x1, 30, '2xx responses/s (grey: the rate asked)', 'font-size="13" font-weight="bold" fill="#111827"'));
  out.push(text(x2, 30, 'latency, ms: bar from p50 to p99, tick at p97.5', 'font-size="13" font-weight="bold" fill="#111827"'));
  const maxRate = Math.max(1e-9, ...rows.map(({ load }) => Math.max(load.rate, load.figures.okPerS)));
  const maxMs = Math.max(1e-9, ...rows.map(({ load }) => load.figures.latencyMs.p99));
  rows.forEach(({ scenario, load }, i) => {
    const y = top + i * rowHeight;
    if (i % 2 === 0) out.push(`<rect x="10" y="${y - 4}" width="${width - 20}" height="${rowHeight}" fill="#f3f4f6"/>`);
    out.push(text(20, y + 14, scenario.title, 'font-size="13" fill="#111827"'));
    out.push(text(20, y + 30, load.label, 'font-size="11" fill="#6b7280"'));
    const span = panel - 120;
    out.push(`<rect x="${x1}" y="${y + 4}" width="${((span * load.rate) / maxRate).toFixed(1)}" height="22" fill="#e5e7eb"/>`);
    const okWidth = Math.max(1, (span * load.figures.okPerS) / maxRate);
    out.push(`<rect x="${x1}" y="${y + 8}" width="${okWidth.toFixed(1)}" height="14" fill="${DEPLOYMENT_COLOR}"/>`);
    out.push(
      text(
        x1 + Math.max(okWidth, (span * load.rate) / maxRate) + 6,
        y + 20,
        `${fmt(load.figures.okPerS)} of ${load.rate}`,
        'font-size="12" fill="#111827"',
      ),
    );
    if (load.figures.reqPerS === 0) {
      out.push(text(x2, y + 20, 'no answer within the run', 'font-size="11" fill="#6b7280"'));
      return;
    }
    const scale = (ms: number) => x2 + (span * ms) / maxMs;
    const { p50, p97_5, p99 } = load.figures.latencyMs;
    out.push(
      `<rect x="${scale(p50).toFixed(1)}" y="${y + 8}" width="${Math.max(2, scale(p99) - scale(p50)).toFixed(1)}" height="14" fill="${DEPLOYMENT_COLOR}"/>`,
    );
    out.push(`<rect x="${scale(p97_5).toFixed(1)}" y="${y + 5}" width="2" height="20" fill="#111827"/>`);
    out.push(text(scale(p99) + 6, y + 20, `${fmt(p50)} / ${fmt(p97_5)} / ${fmt(p99)}`, 'font-size="12" fill="#111827"'));
  });
  out.push('</svg>');
  return out.join('\n');
}

function figureTable(report: LoadtestReport): string {
  const head = [
    'scenario',
    'load',
    'asked/s',
    'connections',
    's',
    'distinct requests',
    '2xx/s',
    'all/s',
    'p50 ms',
    'p97.5 ms',
    'p99 ms',
    'max ms',
    '429',
    'statuses',
    'errors',
    'timeouts',
    'MB/s',
  ];
  const body = report.scenarios.flatMap((scenario) => {
    if (scenario.status !== 'measured')
      return [
        `<tr><td>${esc(scenario.title)}</td><td colspan="${head.length - 1}" class="muted">${esc(scenario.reason ?? 'not measured')}</td></tr>`,
      ];
    return scenario.loads.map((load) => {
      const f = load.figures;
      return (
        `<tr><td>${esc(scenario.title)}</td><td>${esc(load.label)}</td><td>${load.rate}</td><td>${load.connections}</td><td>${num(f.durationS, 1)}</td><td>${load.distinctRequests}</td>` +
        `<td><b>${fmt(f.okPerS)}</b></td><td>${fmt(f.reqPerS)}</td><td>${fmt(f.latencyMs.p50)}</td><td>${fmt(f.latencyMs.p97_5)}</td><td>${fmt(f.latencyMs.p99)}</td><td>${fmt(f.latencyMs.max)}</td>` +
        `<td>${load.rateLimited}</td><td>${esc(JSON.stringify(f.statusCodes))}</td><td>${f.errors}</td><td>${f.timeouts}</td><td>${num(f.mbPerS, 1)}</td></tr>`
      );
    });
  });
  return `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${body.join('\n')}</tbody></table>`;
}

export function renderLoadtestHtml(report: LoadtestReport): string {
  const { deployment, plan, tokens, loadGenerator } = report;
  const sensor = deployment.sensor.available
    ? `sensor history ${esc(deployment.sensor.firstDay)} to ${esc(deployment.sensor.lastDay)}, ${deployment.sensor.units} units read on its last full day, ${num(deployment.sensor.deepPages)} raw pages of 1,000 in its last year`
    : `no sensor history measured (${esc(deployment.sensor.reason)})`;
  const credentials =
    tokens.source === 'created'
      ? `${tokens.count} tokens named <code>${esc(tokens.namePrefix ?? '')}1..${tokens.count}</code> (scopes ${esc(tokens.scopes.join(', '))}) created with the employee's JWT, expiring ${esc(tokens.expiresAt ?? '')}; ${tokens.revoked ?? 0} revoked at the end${tokens.leftActive.length ? `, <b>${tokens.leftActive.length} left active</b>` : ''}`
      : tokens.source === 'file'
        ? `${tokens.count} tokens from --tokens-file, used as given`
        : "the employee's JWT only";
  const warnings = warningsOf(report);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coldtrack-api loadtest ${esc(report.startedAt)}</title>
<style>
${REPORT_STYLE}
code { background: #f3f4f6; padding: 1px 4px; }
.warning { color: #b91c1c; }
</style></head><body>
<h1>coldtrack-api loadtest of ${esc(deployment.url)}</h1>
<p class="muted">${esc(report.startedAt)} to ${esc(report.finishedAt)} (${num(report.durationS)} s). Load generator: ${loadGenerator.cpus} cores (${esc(loadGenerator.cpuModel)}), Node ${esc(loadGenerator.node)},
kit at commit ${esc(loadGenerator.commit)}, 1-minute load average ${num(loadGenerator.loadAverage.start, 1)} at the start and ${num(loadGenerator.loadAverage.end, 1)} at the end.</p>
<p>${plan.rate} requests/s a scenario (management at most its employee's budget), ${plan.seconds} s runs after a ${plan.warmupSeconds} s warm-up, ${plan.connections} connections.
Credentials: ${credentials}. Company ${deployment.companyId ?? 'unknown'}, ${deployment.units} live units; analytics windows end ${esc(deployment.today)}; ${sensor}.</p>
${warnings.length ? `<ul>${warnings.map((warning) => `<li class="warning">${esc(warning)}</li>`).join('\n')}</ul>` : ''}
<h2>Throughput and latency</h2>
${chartSvg(report)}
<h2>Every figure</h2>
${figureTable(report)}
<h2>Scenarios</h2><ul>${report.scenarios.map((s) => `<li><b>${esc(s.title)}</b> (${esc(s.id)}): ${esc(s.what)}</li>`).join('\n')}</ul>
<h2>Notes</h2><ul>${report.notes.map((note) => `<li>${esc(note)}</li>`).join('\n')}</ul>
</body></html>
`;
}
