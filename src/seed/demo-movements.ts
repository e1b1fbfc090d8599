// One cold room's movements over the activity window: farmers' check-ins (Poisson arrivals,
// fewer on Sundays, within the room's capacity), their crates, the check-outs that follow (fees,
// payment) and the market surveys after them.
import { usdPaymentMethods } from './demo-catalogue.js';
import { ACTIVITY_DAYS, cropPrice, DAY, HOUR, type PlannedFarmer, type PlannedUnit, type Planner, round2 } from './demo-planner.js';
import type { Random } from './random.js';

/** One room over the activity window, and the crates present on each day of it. */
interface Room {
  unit: PlannedUnit;
  unitIndex: number;
  operator: number;
  /** crates present on each day (index = days ago), to keep the room within capacity */
  occupancy: number[];
}

/** One farmer's crates in a room, from check-in until the last of them leaves. */
interface Visit {
  farmer: PlannedFarmer;
  crop: string;
  /** days ago of the check-in */
  day: number;
  /** who leaves when: [days ago, crate, percentage]; negative days are still to come */
  parts: [number, number, number][];
}

/** A room's check-ins on each day of the activity window, each with its crates and check-outs. */
export function planUnitActivity(planner: Planner, unitIndex: number, farmers: PlannedFarmer[], operator: number): void {
  const unit = planner.plan.units[unitIndex]!;
  const deletedDaysAgo = unit.deletedDaysAgo;
  // a retired room takes nothing in during its last days and is empty when it is deleted
  const lastCheckInDay = deletedDaysAgo === undefined ? 0 : deletedDaysAgo + 5;
  const room: Room = { unit, unitIndex, operator, occupancy: new Array<number>(ACTIVITY_DAYS + 1).fill(0) };
  const meanCrates = 5;
  const meanStay = 6.5;
  // +20%: quiet Sundays and crates collected early would otherwise pull rooms below the target
  const perDay = (1.2 * unit.targetOccupancy * unit.capacityCrates) / (meanCrates * meanStay);
  for (let day = ACTIVITY_DAYS; day >= lastCheckInDay; day -= 1) {
    const sunday = planner.daysAgo(day).getUTCDay() === 0;
    const arrivals = poisson(planner.random, perDay * (sunday ? 0.3 : 1));
    for (let a = 0; a < arrivals; a += 1) planVisit(planner, room, farmers, day);
  }
}

/** A farmer's check-in on `day`, if one may come and the room has space, and the check-outs that follow. */
function planVisit(planner: Planner, room: Room, farmers: PlannedFarmer[], day: number): void {
  const { random, plan } = planner;
  const { unit, unitIndex, operator } = room;
  const candidates = farmers.filter((f) => f.joinedDaysAgo > day && (f.home === unit.locationIndex || random.chance(0.1)));
  if (candidates.length === 0) return;
  const farmer = random.weighted(candidates.map((f) => [f, f.weight] as const));
  let stay = random.int(2, 11);
  if (unit.deletedDaysAgo !== undefined) stay = Math.min(stay, day - unit.deletedDaysAgo - 1);
  const count = reserveCrates(random, room, day, stay);
  if (count <= 0) return;

  const crop = random.pick(farmer.crops);
  const checkIn = plan.checkIns.push({ unit: unitIndex, farmer: farmer.user, operator, at: planner.during(day, 0, 0.4) }) - 1;
  const crates = Array.from(
    { length: count },
    () =>
      plan.crates.push({
        checkIn,
        unit: unitIndex,
        crop,
        fullyCheckedOutAt: null,
        initialWeightKg: round2(unit.crateWeightKg * random.float(0.85, 1.05)),
      }) - 1,
  );

  const visit: Visit = { farmer, crop, day, parts: planDepartures(random, unit, crates, day, stay) };
  const outDays = [...new Set(visit.parts.map(([d]) => d))].filter((d) => d >= 0).sort((x, y) => y - x);
  for (const outDay of outDays) planCheckOut(planner, room, visit, outDay);
}

/** How many crates the farmer brings, cut to what the room has free over the stay; books them. */
function reserveCrates(random: Random, { unit, occupancy }: Room, day: number, stay: number): number {
  let peak = 0;
  for (let d = day; d > day - stay && d >= 0; d -= 1) peak = Math.max(peak, occupancy[d]!);
  const count = Math.min(
    random.weighted([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 3],
      [5, 3],
      [6, 2],
      [7, 2],
      [8, 1],
      [9, 1],
      [10, 1],
    ]),
    unit.capacityCrates - peak,
  );
  if (count <= 0) return count;
  for (let d = day; d > day - stay && d >= 0; d -= 1) occupancy[d]! += count;
  return count;
}

/**
 * Who leaves when: mostly all at the end of the stay; sometimes a few crates (or part of one)
 * earlier, or the rest of a partly collected crate a few days later, but never after retirement.
 */
function planDepartures(random: Random, unit: PlannedUnit, crates: number[], day: number, stay: number): [number, number, number][] {
  const lastDay = day - stay;
  const parts: [number, number, number][] = [];
  const partialShare = random.pick([25, 40, 50, 60, 75]);
  const rest = random.chance(0.1) ? remainderDay(random, unit, lastDay) : lastDay;
  if (crates.length >= 2 && random.chance(0.35)) {
    const firstDay = day - random.int(1, Math.max(1, stay - 1));
    const firstCount = random.int(1, crates.length - 1);
    const partial = random.chance(0.3);
    crates.forEach((crate, i) => {
      if (partial && i === 0) parts.push([firstDay, crate, partialShare], [lastDay, crate, 100 - partialShare]);
      else parts.push([i < firstCount ? firstDay : lastDay, crate, 100]);
    });
  } else if (rest < lastDay) {
    crates.forEach((crate, i) => {
      if (i === 0) parts.push([lastDay, crate, partialShare], [rest, crate, 100 - partialShare]);
      else parts.push([lastDay, crate, 100]);
    });
  } else {
    for (const crate of crates) parts.push([lastDay, crate, 100]);
  }
  return parts;
}

/** The rest of a partly collected crate leaves a few days later, but never after retirement. */
function remainderDay(random: Random, unit: PlannedUnit, lastDay: number): number {
  const later = lastDay - random.int(1, 4);
  return unit.deletedDaysAgo === undefined ? later : Math.max(later, unit.deletedDaysAgo + 1);
}

/** The check-out of the crates (or parts) leaving on `outDay`: fees, payment and often a market survey. */
function planCheckOut(planner: Planner, room: Room, visit: Visit, outDay: number): void {
  const { company, random, plan, nowMs } = planner;
  const at = planner.during(outDay, 0.45, 1);
  const checkOut = plan.checkOuts.length;
  const { fees, kgOut } = checkOutCrates(planner, room.unit, visit, outDay, checkOut, at);
  const inUsd = random.chance(0.08);
  const coolingFees = Math.max(0.01, round2(inUsd ? fees / company.localPerUsd : fees));
  const discount = random.chance(0.12) ? round2(coolingFees * random.pick([0.05, 0.1, 0.15])) : 0;
  let paid = random.chance(outDay > 14 ? 0.9 : 0.55);
  const paidAt = random.chance(0.7) ? at : new Date(at.getTime() + random.int(1, 5) * DAY + random.int(0, 8) * HOUR);
  if (paidAt.getTime() > nowMs) paid = false;
  const method = random.weighted(inUsd ? usdPaymentMethods : company.paymentMethods);
  plan.checkOuts.push({
    unit: room.unitIndex,
    farmer: visit.farmer.user,
    operator: room.operator,
    at,
    currency: inUsd ? 'USD' : company.currency,
    coolingFees,
    discount,
    paid,
    paymentMethod: paid ? method : null,
    paidAt: paid ? paidAt : null,
  });
  if (random.chance(0.8)) planMarketSurvey(planner, room.unit, visit.crop, checkOut, at, kgOut);
}

/** Each crate (or share of one) leaving on `outDay`: its weight out and what it owes for its days. */
function checkOutCrates(planner: Planner, unit: PlannedUnit, visit: Visit, outDay: number, checkOut: number, at: Date) {
  const { random, plan } = planner;
  let fees = 0;
  let kgOut = 0;
  for (const [d, crate, percentage] of visit.parts) {
    if (d !== outDay) continue;
    const initial = plan.crates[crate]!.initialWeightKg;
    const weightKg = round2(((initial * percentage) / 100) * random.float(0.97, 1));
    const daysStored = visit.day - outDay;
    const quantity = unit.metric === 'KILOGRAMS' ? weightKg : percentage / 100;
    fees += unit.price * quantity * (unit.pricing === 'DAILY' ? daysStored : 1);
    kgOut += weightKg;
    plan.crateCheckOuts.push({ checkOut, crate, percentage, weightKg, daysStored });
    const leftAfter = visit.parts.filter(([d2, c2]) => c2 === crate && d2 < outDay).length;
    if (leftAfter === 0) plan.crates[crate]!.fullyCheckedOutAt = at;
  }
  return { fees, kgOut };
}

/** What the farmer sold the produce for, and lost on the way (impact's figures after cold storage). */
function planMarketSurvey(
  { company, random, plan, nowMs }: Planner,
  unit: PlannedUnit,
  crop: string,
  checkOut: number,
  at: Date,
  kgOut: number,
): void {
  const kgLost = round2(kgOut * random.float(0.01, 0.09));
  plan.marketSurveys.push({
    checkOut,
    crop,
    currency: company.currency,
    sellingPricePerUnit: round2(cropPrice(company, crop) * unit.crateWeightKg * random.float(1.05, 1.35)),
    kgPerUnit: unit.crateWeightKg,
    kgSold: round2(kgOut - kgLost),
    kgLost,
    lossReason: kgLost > 0 ? random.pick(['Spoilage', 'Bruising in transport', 'Unsold at market', 'Pests']) : null,
    surveyedAt: new Date(Math.min(nowMs, at.getTime() + random.int(1, 48) * HOUR)),
  });
}

/** How many farmers arrive on a day: a Poisson draw (Knuth's method) with that mean. */
function poisson(random: Random, mean: number): number {
  const limit = Math.exp(-mean);
  let count = 0;
  let product = random.next();
  while (product > limit) {
    count += 1;
    product *= random.next();
  }
  return count;
}
