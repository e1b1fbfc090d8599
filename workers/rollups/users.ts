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

export function rollupUsers(input: UsersInput): Uint8Array {
  const { buckets, units } = input;
  const bucketCount = buckets.length;
  const unitCount = units.length;
  const dayCount = bucketCount === 0 ? 0 : buckets[bucketCount - 1]!.lastDay + 1;
  const bucketOfDay = new Int32Array(dayCount);
  buckets.forEach((bucket, index) => bucketOfDay.fill(index, bucket.firstDay, bucket.lastDay + 1));
  const unitIndex = new Map(units.map(([id], index) => [id, index]));
  const reach = Int32Array.from(units, ([, reportedBuckets]) => reportedBuckets);

  const cellCount = bucketCount * unitCount;
  const checkIns = new Int32Array(cellCount);
  const checkOuts = new Int32Array(cellCount);
  const active = new Int32Array(cellCount);
  // distinct farmers of a cell: the first two inline, a Set only for a cell with a third one (a
  // Set for every cell with a check-in and a check-out cost more than all the rest of the rollup)
  const firstFarmer = new Int32Array(cellCount);
  const secondFarmer = new Int32Array(cellCount);
  const moreFarmers = new Map<number, Set<number>>();
  const bucketFarmers = Array.from({ length: bucketCount }, () => new Set<number>());

  const count = (columns: MovementColumns, counter: Int32Array) => {
    const [days, unitIds, farmerIds] = columns;
    for (let i = 0; i < days.length; i++) {
      const day = days[i]!;
      const unit = unitIndex.get(unitIds[i]!);
      if (day < 0 || day >= dayCount || unit === undefined) continue;
      const bucket = bucketOfDay[day]!;
      if (bucket >= reach[unit]!) continue; // a deleted unit's bucket that began after its deletion
      const cell = bucket * unitCount + unit;
      const farmer = farmerIds[i]!;
      counter[cell]!++;
      bucketFarmers[bucket]!.add(farmer);
      const seen = active[cell]!;
      if (seen === 0) {
        firstFarmer[cell] = farmer;
        active[cell] = 1;
      } else if (farmer !== firstFarmer[cell]) {
        if (seen === 1) {
          secondFarmer[cell] = farmer;
          active[cell] = 2;
        } else if (farmer !== secondFarmer[cell]) {
          let others = moreFarmers.get(cell);
          if (!others) moreFarmers.set(cell, (others = new Set()));
          if (!others.has(farmer)) {
            others.add(farmer);
            active[cell]!++;
          }
        }
      }
    }
  };
  count(parseJson(input.checkIns), checkIns);
  count(parseJson(input.checkOuts), checkOuts);

  let registered = 0;
  const joinedOn = new Float64Array(dayCount);
  for (const [day, farmers] of parseJson(input.joined)) {
    if (day < 0) registered += farmers;
    else if (day < dayCount) joinedOn[day] = joinedOn[day]! + farmers;
  }

  // `{"cooling_unit_id":<id>` of each unit, and room for every entry at its longest
  const opening = units.map(([id]) => ascii(`{"cooling_unit_id":${id}`));
  let capacity = 2;
  for (let u = 0; u < unitCount; u++)
    capacity += Math.min(reach[u]!, bucketCount) * (opening[u]!.length + IDLE.length + 3 * MAX_DIGITS + 1);
  for (const bucket of buckets) capacity += 160 + bucket.period_start.length + bucket.period_end.length;
  const out = new JsonBytes(capacity);

  out.byte(0x5b); // [
  for (let b = 0; b < bucketCount; b++) {
    const bucket = buckets[b]!;
    let signUps = 0;
    for (let day = bucket.firstDay; day <= bucket.lastDay; day++) signUps += joinedOn[day]!;
    registered += signUps;
    if (b > 0) out.byte(0x2c); // ,
    out.text(`{"period_start":"${bucket.period_start}","period_end":"${bucket.period_end}","registered_users":`);
    if (bucket.elapsed) out.integer(registered);
    else out.text('null');
    out.text(`,"active_users":${bucketFarmers[b]!.size},"sign_ups":${signUps},"by_cooling_unit":[`);
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
