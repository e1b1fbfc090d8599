// How `npm run export` (export.ts) shows its progress on stderr: a bar on a terminal (records,
// pages, units, the wait in progress, ETA), plain lines otherwise (every 5 s at most, the first
// after 5 s, so a short export prints only its result), plus a line for each wait and retry.
import cliProgress from 'cli-progress';
import type { ClientEvent } from '../../client/index.js';
import type { ExportProgress } from '../../client/export/index.js';

export const duration = (seconds: number) => {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
};
export const count = (n: number) => n.toLocaleString('en-US');

export class ExportDisplay {
  private readonly bars: cliProgress.MultiBar | null;
  readonly started: number;
  /** the export's last report */
  latest: ExportProgress = { records: 0, estimatedTotal: null, pages: 0, unitsDone: 0, unitsTotal: 0 };
  /** requests the client sent, retries included */
  requests = 0;
  /** records already in the files when this run started: the rate (and ETA) counts only this run's */
  private recordsAtStart: number | null = null;
  private status = 'starting';
  private waitingUntil = 0;
  private lastLine: number;
  private readonly bar: cliProgress.SingleBar | undefined;

  constructor(tty: boolean) {
    this.bars = tty
      ? new cliProgress.MultiBar({
        format: '{bar} {percentage}% | {records}/{estimate} records | {pages} pages | units {units} | {status} | ETA {remaining}',
        hideCursor: true,
        clearOnComplete: false,
      }, cliProgress.Presets.shades_classic)
      : null;
    this.started = Date.now();
    this.lastLine = Date.now();
    this.bar = this.bars?.create(1, 0, { records: '0', estimate: '?', pages: '0', units: '0/0', status: this.status, remaining: '?' });
  }

  /** A line above the bar, or on its own without one. */
  readonly say = (line: string) => {
    if (this.bars) this.bars.log(`${line}\n`);
    else console.error(line);
  };

  readonly onProgress = (progress: ExportProgress) => {
    this.recordsAtStart ??= progress.records;
    this.latest = progress;
    this.render();
  };

  /** The client's requests, waits and retries: the status shown, and a line for each wait. */
  readonly onEvent = (event: ClientEvent) => {
    if (event.type === 'request') this.requests++;
    if (event.type === 'rate-limit-wait') {
      this.status = 'waiting for the rate limit';
      this.waitingUntil = event.until.getTime();
      this.say(`waiting ${duration(event.ms / 1000)} for the token's rate limit (until ${event.until.toISOString().slice(11, 19)} UTC)`);
    } else if (event.type === 'retry' && event.reason !== 'rate_limited') {
      this.status = `retrying (${event.status ?? event.reason})`;
      this.waitingUntil = Date.now() + event.ms;
      this.say(`${event.status ? `${event.status} ${event.reason}` : event.reason}: retrying in ${(event.ms / 1000).toFixed(1)} s (attempt ${event.attempt + 1})`);
    } else if (event.type === 'retry') {
      this.say(`429: the token's budget is spent elsewhere too; waiting ${duration(event.ms / 1000)} for its window to end`);
    } else if (event.type === 'response' && event.status < 400) {
      this.status = 'fetching';
      this.waitingUntil = 0;
    }
    this.render();
  };

  /** Redraws now and then between events, so a wait's countdown and the ETA move. */
  startTicking(): NodeJS.Timeout {
    return setInterval(() => this.render(), this.bar ? 250 : 1000);
  }

  /** The last state drawn in full, then the bar released. */
  finish(): void {
    this.status = 'done';
    this.render(true);
    this.bars?.stop();
  }

  stop(): void {
    this.bars?.stop();
  }

  private render(force = false): void {
    const { latest } = this;
    const total = latest.estimatedTotal ?? 0;
    if (this.bar) {
      this.bar.setTotal(Math.max(1, total));
      this.bar.update(latest.records, {
        records: count(latest.records), estimate: latest.estimatedTotal === null ? '?' : `~${count(total)}`,
        pages: count(latest.pages), units: `${latest.unitsDone}/${latest.unitsTotal}`, status: this.statusNow(), remaining: this.eta(),
      });
    } else if (force || Date.now() - this.lastLine >= 5000) {
      this.lastLine = Date.now();
      const share = total > 0 ? ` (${Math.floor((100 * latest.records) / total)}%)` : '';
      this.say(`exported ${count(latest.records)} of ${latest.estimatedTotal === null ? '?' : `~${count(total)}`} records${share}, ` +
        `${count(latest.pages)} pages, units ${latest.unitsDone}/${latest.unitsTotal} done, ETA ${this.eta()}`);
    }
  }

  private eta(): string {
    const gained = this.latest.records - (this.recordsAtStart ?? this.latest.records);
    const rate = gained / Math.max(0.001, (Date.now() - this.started) / 1000);
    return this.latest.estimatedTotal === null || gained === 0 ? '?' : duration((this.latest.estimatedTotal - this.latest.records) / rate);
  }

  private statusNow(): string {
    return this.waitingUntil > Date.now() ? `${this.status} ${duration((this.waitingUntil - Date.now()) / 1000)}` : this.status;
  }
}
