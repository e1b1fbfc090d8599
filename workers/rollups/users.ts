// The users rollup: a page's movements and its population's join days turned into one record per
// bucket (registered, active, signed up) with a breakdown by cooling unit, as JSON bytes.
// Imports nothing of the project outside workers/ (see index.ts).
//
// A users page is every unit it reports on for every bucket of the page (100 daily buckets x 1,000
// units: 100,000 breakdown entries, 7 MB of JSON), so this is built for that size: counters in
// typed arrays indexed by (bucket, unit), and the JSON written straight into bytes, each entry from
// pieces encoded once per request. Building it as strings (and then encoding them for the trip
// back from the rollup thread) cost three times as much CPU, half of it in the garbage collector.
// Every field is an integer or a date text from the route (YYYY-MM-DD): nothing needs escaping,
// and the output is JSON.stringify's byte for byte (test/workers/users.test.ts).
import { type MovementColumns, parseJson, type UsersInput } from './rows.js';

const encoder = new TextEncoder();
const ascii = (text: string) => encoder.encode(text);
const ACTIVE = ascii(',"active_users":');
const CHECK_INS = ascii(',"check_ins":');
const CHECK_OUTS = ascii(',"check_outs":');
const IDLE = ascii(',"active_users":0,"check_ins":0,"check_outs":0}');
/** the longest an integer field prints: int4 counts, and sums of them below 2^53 */
const MAX_DIGITS = 16;

/** JSON bytes written into one buffer sized up front. */
class JsonBytes {
  readonly bytes: Uint8Array;
  at = 0;

  constructor(capacity: number) {
    // its own ArrayBuffer (never Node's shared pool): the rollup thread moves it to the main thread
    this.bytes = new Uint8Array(capacity);
  }

  chunk(chunk: Uint8Array) {
    this.bytes.set(chunk, this.at);
    this.at += chunk.length;
  }

  byte(code: number) {
    this.bytes[this.at++] = code;
  }

  /** ASCII text (the route's dates, numbers): one byte a character */
  text(text: string) {
    for (let i = 0; i < text.length; i++) this.bytes[this.at++] = text.charCodeAt(i);
  }

  integer(value: number) {
    if (value < 10) this.bytes[this.at++] = 48 + value;
    else this.text(String(value));
  }

  result(): Uint8Array {
    return this.bytes.subarray(0, this.at);
  }
}

/** `array`'s first `length` values in a new array of `capacity` */
function grown(array: Int32Array<ArrayBuffer>, length: number, capacity: number): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(capacity);
  larger.set(array.subarray(0, length));
  return larger;
}

export function rollupUsers(input: UsersInput): Uint8Array {
  const grid = gridOf(input);
  const movements = movementsOf(input, grid);
  const active = activeFarmersOf(grid, movements);
  const joins = joinsOf(input, grid.dayCount);
  return usersJson(input, grid, movements, active, joins);
}

/** The page as a grid of cells, one per (bucket, unit), and how a movement finds its cell. */
interface Grid {
  bucketCount: number;
  unitCount: number;
  /** days from the page's first day to its last bucket's last */
  dayCount: number;
  bucketOfDay: Int32Array;
  unitIndex: Map<number, number>;
  /** per unit, the buckets it is reported in (a deleted unit: those that began before its deletion) */
  reach: Int32Array;
}

function gridOf({ buckets, units }: UsersInput): Grid {
  const bucketCount = buckets.length;
  const dayCount = bucketCount === 0 ? 0 : buckets[bucketCount - 1]!.lastDay + 1;
  const bucketOfDay = new Int32Array(dayCount);
  buckets.forEach((bucket, index) => bucketOfDay.fill(index, bucket.firstDay, bucket.lastDay + 1));
  return {
    bucketCount,
    unitCount: units.length,
    dayCount,
    bucketOfDay,
    unitIndex: new Map(units.map(([id], index) => [id, index])),
    reach: Int32Array.from(units, ([, reportedBuckets]) => reportedBuckets),
  };
}

/** The page's movements counted into their cells, and each kept as (cell, farmer) for the distinct counts. */
interface Movements {
  checkIns: Int32Array;
  checkOuts: Int32Array;
  /** the cell of each movement kept, and its farmer's dense index, for the first `kept` entries */
  cells: Int32Array;
  farmerIndexes: Int32Array;
  kept: number;
  farmerCount: number;
}

// Each movement on the page as its cell and its farmer (a dense index: `farmers` numbers them in
// order of appearance), counted into its cell; a movement off the page is left out. The pairs
// go into arrays that double when full: a page's movements arrive in parts, a typed array a part
// cost more than the rest of the rollup.
function movementsOf(input: UsersInput, grid: Grid): Movements {
  const { unitCount, dayCount, bucketOfDay, unitIndex, reach } = grid;
  const cellCount = grid.bucketCount * unitCount;
  const checkIns = new Int32Array(cellCount);
  const checkOuts = new Int32Array(cellCount);
  const farmers = new Map<number, number>();
  let cells = new Int32Array(1024);
  let farmerIndexes = new Int32Array(1024);
  let kept = 0;
  const keep = (part: MovementColumns, counter: Int32Array) => {
    const [days, unitIds, farmerIds] = part;
    if (kept + days.length > cells.length) {
      const capacity = Math.max(2 * cells.length, kept + days.length);
      cells = grown(cells, kept, capacity);
      farmerIndexes = grown(farmerIndexes, kept, capacity);
    }
    for (let i = 0; i < days.length; i++) {
      const day = days[i]!;
      const unit = unitIndex.get(unitIds[i]!);
      if (day < 0 || day >= dayCount || unit === undefined) continue;
      const bucket = bucketOfDay[day]!;
      if (bucket >= reach[unit]!) continue; // a deleted unit's bucket that began after its deletion
      const cell = bucket * unitCount + unit;
      counter[cell]!++;
      const farmer = farmerIds[i]!;
      let index = farmers.get(farmer);
      if (index === undefined) farmers.set(farmer, (index = farmers.size));
      cells[kept] = cell;
      farmerIndexes[kept++] = index;
    }
  };
  for (const part of input.checkIns) keep(parseJson(part), checkIns);
  for (const part of input.checkOuts) keep(parseJson(part), checkOuts);
  return { checkIns, checkOuts, cells, farmerIndexes, kept, farmerCount: farmers.size };
}

/** Distinct farmers per cell and per bucket. */
interface ActiveFarmers {
  active: Int32Array;
  bucketActive: Int32Array;
}

// Distinct farmers, without a Set per cell and per bucket (on a busy page those Sets were most
// of a rollup thread's heap, bench P8): the movements' farmers are grouped
// by cell with a counting sort, and cells are numbered bucket by bucket, so a cell's farmers and
// then a bucket's are contiguous. A farmer is counted once per cell (and per bucket) by stamping
// the cell (bucket) on it when first seen there.
function activeFarmersOf({ bucketCount, unitCount }: Grid, movements: Movements): ActiveFarmers {
  const { checkIns, checkOuts, cells, farmerIndexes, kept, farmerCount } = movements;
  const cellCount = bucketCount * unitCount;
  const cellStart = new Int32Array(cellCount + 1);
  for (let cell = 0; cell < cellCount; cell++) cellStart[cell + 1] = cellStart[cell]! + checkIns[cell]! + checkOuts[cell]!;
  const byCell = new Int32Array(kept);
  const next = cellStart.slice(0, cellCount);
  for (let i = 0; i < kept; i++) byCell[next[cells[i]!]!++] = farmerIndexes[i]!;
  const active = new Int32Array(cellCount);
  const bucketActive = new Int32Array(bucketCount);
  // stamps are cell + 1 and bucket + 1: 0 is "not seen yet"
  const seenInCell = new Int32Array(farmerCount);
  const seenInBucket = new Int32Array(farmerCount);
  for (let cell = 0; cell < cellCount; cell++) {
    const bucket = (cell / unitCount) | 0;
    for (let i = cellStart[cell]!; i < cellStart[cell + 1]!; i++) {
      const farmer = byCell[i]!;
      if (seenInCell[farmer] !== cell + 1) {
        seenInCell[farmer] = cell + 1;
        active[cell]!++;
      }
      if (seenInBucket[farmer] !== bucket + 1) {
        seenInBucket[farmer] = bucket + 1;
        bucketActive[bucket]!++;
      }
    }
  }
  return { active, bucketActive };
}

/** The population: farmers registered before the page, and those who joined on each of its days. */
interface Joins {
  registeredBefore: number;
  joinedOn: Float64Array;
}

function joinsOf(input: UsersInput, dayCount: number): Joins {
  let registeredBefore = 0;
  const joinedOn = new Float64Array(dayCount);
  for (const [day, farmers] of parseJson(input.joined)) {
    if (day < 0) registeredBefore += farmers;
    else if (day < dayCount) joinedOn[day] = joinedOn[day]! + farmers;
  }
  return { registeredBefore, joinedOn };
}

/** The records as JSON bytes: one per bucket, with an entry per unit reported in it. */
function usersJson({ buckets, units }: UsersInput, grid: Grid, movements: Movements, farmers: ActiveFarmers, joins: Joins): Uint8Array {
  const { bucketCount, unitCount, reach } = grid;
  const { checkIns, checkOuts } = movements;
  const { active, bucketActive } = farmers;
  // `{"cooling_unit_id":<id>` of each unit, and room for every entry at its longest
  const opening = units.map(([id]) => ascii(`{"cooling_unit_id":${id}`));
  let capacity = 2;
  for (let u = 0; u < unitCount; u++)
    capacity += Math.min(reach[u]!, bucketCount) * (opening[u]!.length + IDLE.length + 3 * MAX_DIGITS + 1);
  for (const bucket of buckets) capacity += 160 + bucket.period_start.length + bucket.period_end.length;
  const out = new JsonBytes(capacity);

  let registered = joins.registeredBefore;
  out.byte(0x5b); // [
  for (let b = 0; b < bucketCount; b++) {
    const bucket = buckets[b]!;
    let signUps = 0;
    for (let day = bucket.firstDay; day <= bucket.lastDay; day++) signUps += joins.joinedOn[day]!;
    registered += signUps;
    if (b > 0) out.byte(0x2c); // ,
    out.text(`{"period_start":"${bucket.period_start}","period_end":"${bucket.period_end}","registered_users":`);
    if (bucket.elapsed) out.integer(registered);
    else out.text('null');
    out.text(`,"active_users":${bucketActive[b]!},"sign_ups":${signUps},"by_cooling_unit":[`);
    let first = true;
    for (let u = 0; u < unitCount; u++) {
      if (b >= reach[u]!) continue;
      if (!first) out.byte(0x2c);
      first = false;
      out.chunk(opening[u]!);
      const cell = b * unitCount + u;
      if (active[cell] === 0) {
        out.chunk(IDLE);
        continue;
      }
      out.chunk(ACTIVE);
      out.integer(active[cell]!);
      out.chunk(CHECK_INS);
      out.integer(checkIns[cell]!);
      out.chunk(CHECK_OUTS);
      out.integer(checkOuts[cell]!);
      out.byte(0x7d); // }
    }
    out.text(']}');
  }
  out.byte(0x5d); // ]
  return out.result();
}
