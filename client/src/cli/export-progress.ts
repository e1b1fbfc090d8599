// How `coldtrack-export` (export.ts) shows its progress on stderr: a bar on a terminal (records,
// pages, units, the wait in progress, ETA), plain lines otherwise (every 5 s at most, the first
// after 5 s, so a short export prints only its result), plus a line for each wait and retry.
// The bar is drawn here, one status line redrawn in place, rather than by a progress-bar library:
// the package has no runtime dependencies, so a partner installs only what it calls.
import type { ClientEvent } from '../index.js';
import type { ExportProgress } from '../export/index.js';

export const duration = (seconds: number) => {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
};
export const count = (n: number) => n.toLocaleString('en-US');

export class ExportDisplay {
  /** the terminal the bar is drawn on, or null for plain lines */
  private readonly bar: TerminalBar | null;
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
  private stopped = false;

  constructor(tty: boolean, stream: NodeJS.WriteStream = process.stderr) {
    this.bar = tty ? new TerminalBar(stream) : null;
    this.started = Date.now();
    this.lastLine = Date.now();
  }

  /** A line above the bar, or on its own without one. */
  readonly say = (line: string) => {
    if (this.bar) this.bar.log(line);
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
      this.say(
        `${event.status ? `${event.status} ${event.reason}` : event.reason}: retrying in ${(event.ms / 1000).toFixed(1)} s (attempt ${event.attempt + 1})`,
      );
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
    this.bar?.stop();
  }

  /** No more drawing (an interrupted export: its one closing line is all that follows). */
  stop(): void {
    this.stopped = true;
    this.bar?.stop();
  }

  /**
   * Nothing was exported (the export was already complete): no progress line, and a bar drawn
   * while the files were checked is erased, so the one line that follows says it all.
   */
  discard(): void {
    this.stopped = true;
    this.bar?.erase();
  }

  private render(force = false): void {
    if (this.stopped) return;
    const { latest } = this;
    const total = latest.estimatedTotal ?? 0;
    if (this.bar) {
      const share = total > 0 ? Math.min(1, latest.records / total) : 0;
      this.bar.draw(
        `${barOf(share)} ${Math.floor(100 * share)}% | ${count(latest.records)}/` +
          `${latest.estimatedTotal === null ? '?' : `~${count(total)}`} records | ${count(latest.pages)} pages | ` +
          `units ${latest.unitsDone}/${latest.unitsTotal} | ${this.statusNow()} | ETA ${this.eta()}`,
      );
    } else if (force || (this.underWay() && Date.now() - this.lastLine >= 5000)) {
      this.lastLine = Date.now();
      const share = total > 0 ? ` (${Math.floor((100 * latest.records) / total)}%)` : '';
      this.say(
        `exported ${count(latest.records)} of ${latest.estimatedTotal === null ? '?' : `~${count(total)}`} records${share}, ` +
          `${count(latest.pages)} pages, units ${latest.unitsDone}/${latest.unitsTotal} done, ETA ${this.eta()}`,
      );
    }
  }

  /**
   * Something to report: a request sent or progress reported. Before that the export only reads
   * its folder (a long check of a complete export's files would otherwise print a line of zeros).
   */
  private underWay(): boolean {
    return this.requests > 0 || this.recordsAtStart !== null;
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

const BAR_WIDTH = 30;
/** `share` (0..1) as a bar of BAR_WIDTH cells: filled, then empty. */
export const barOf = (share: number) => {
  const filled = Math.round(Math.min(1, Math.max(0, share)) * BAR_WIDTH);
  return '\u2588'.repeat(filled) + '\u2591'.repeat(BAR_WIDTH - filled);
};

/**
 * One status line kept at the bottom of a terminal: redrawn in place (carriage return, erase the
 * line), cut to the terminal's width so it never wraps (a wrapped line cannot be redrawn), with
 * the lines logged above it.
 */
export class TerminalBar {
  private current = '';
  private stopped = false;

  constructor(private readonly stream: NodeJS.WriteStream) {
    stream.write('\u001b[?25l'); // the cursor hidden while the bar is drawn, as a bar library does
  }

  draw(line: string): void {
    if (this.stopped) return;
    const width = Math.max(10, (this.stream.columns || 80) - 1);
    this.current = line.length > width ? line.slice(0, width) : line;
    this.stream.write(`\r\u001b[2K${this.current}`);
  }

  /** A line printed above the bar, which is then drawn again below it. */
  log(line: string): void {
    if (this.stopped) {
      this.stream.write(`${line}\n`);
      return;
    }
    this.stream.write(`\r\u001b[2K${line}\n${this.current}`);
  }

  /** The bar left as last drawn, the cursor below it and shown again. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stream.write(`${this.current ? '\n' : ''}\u001b[?25h`);
  }

  /** The bar's line cleared, the cursor back at its start and shown again. */
  erase(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stream.write(`${this.current ? '\r\u001b[2K' : ''}\u001b[?25h`);
  }
}
