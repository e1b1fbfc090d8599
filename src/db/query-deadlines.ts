// The client-side deadlines of one connection's queries, watched by one timer per connection
// instead of pg's one per query (query_timeout): a query only joins a set; the connection's timer
// is armed for the earliest deadline, and when it fires it fails the queries past theirs and
// re-arms for the next one, or stays idle. Under load a connection creates about one timer per
// deadline period instead of one per query. Used by src/db/deadline-client.ts, which also says
// why pg's own timer had to go.

export interface Deadline {
  /** performance.now() at which the query is failed */
  at: number;
  expire: () => void;
}

export class QueryDeadlines {
  // a connection has a few queries out at most: an array is the cheapest set
  private open: Deadline[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  /** @param defaultMs the connection's deadline for queries that name none (0: none) */
  constructor(readonly defaultMs: number) {}

  /** Watches a query that started now: `expire` runs once `ms` pass before `finish` is called. */
  start(ms: number, expire: () => void): Deadline {
    const deadline = { at: performance.now() + ms, expire };
    this.open.push(deadline);
    if (deadline.at < this.armedFor) this.arm(deadline.at);
    return deadline;
  }

  /** The query answered (or failed) in time. The timer stays armed: it finds nothing and stops. */
  finish(deadline: Deadline) {
    const index = this.open.indexOf(deadline);
    if (index === -1) return;
    const last = this.open.pop()!;
    if (last !== deadline) this.open[index] = last;
  }

  /** The connection is going away: nothing is watched any more. */
  close() {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
    this.open = [];
  }

  private arm(at: number) {
    clearTimeout(this.timer);
    this.armedFor = at;
    // unref: the connection's socket keeps the process alive while a query is out
    this.timer = setTimeout(this.check, Math.max(0, at - performance.now())).unref();
  }

  private readonly check = () => {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = performance.now();
    const expired = this.open.filter((deadline) => deadline.at <= now);
    if (expired.length > 0) this.open = this.open.filter((deadline) => deadline.at > now);
    const next = this.open.reduce((earliest, deadline) => Math.min(earliest, deadline.at), Infinity);
    if (next < Infinity) this.arm(next);
    // last: an expiry may end the connection (close) or start its next query (start)
    for (const deadline of expired) deadline.expire();
  };
}
