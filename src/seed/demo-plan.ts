// Draws one demo company's people and ~90 days of cold-room movements from the catalogue, a
// seeded PRNG and a clock. Pure: rows refer to each other by index; demo.ts gives them ids.
import type { DemoCompany, DemoUnit, PaymentMethod } from './demo-catalogue.js';
import { demoCrops, usdPaymentMethods } from './demo-catalogue.js';
import type { Random } from './random.js';
import { HOUR_MS } from '../time.js';

const DAY = 86_400_000;
const HOUR = HOUR_MS;
/** days of check-ins before today */
const ACTIVITY_DAYS = 90;

export interface PlannedUnit extends DemoUnit {
  locationIndex: number;
  createdAt: Date;
  deletedAt: Date | null;
  /** drives the deterministic noise of the unit's sensor readings */
  sensorSeed: number;
  baseTemperature: number;
}

export interface PlannedUser {
  role: 'REGISTERED_EMPLOYEE' | 'OPERATOR' | 'FARMER';
  firstName: string;
  lastName: string;
  phone: string;
  email: string | null;
  userCode: string | null;
  registeredBy: number | null;
  isActive: boolean;
  dateJoined: Date;
}

export interface CompanyPlan {
  company: DemoCompany;
  createdAt: Date;
  units: PlannedUnit[];
  users: PlannedUser[];
  assignments: { user: number; unit: number }[];
  baselineSurveys: { farmer: number; crop: string; lossShare: number; belowMarketShare: number;
    averagePricePerKg: number; surveyedAt: Date }[];
  checkIns: { unit: number; farmer: number; operator: number; at: Date }[];
  crates: { checkIn: number; unit: number; crop: string; initialWeightKg: number;
    fullyCheckedOutAt: Date | null }[];
  checkOuts: { unit: number; farmer: number; operator: number; at: Date; currency: string;
    coolingFees: number; discount: number; paid: boolean; paymentMethod: PaymentMethod | null;
    paidAt: Date | null }[];
  crateCheckOuts: { checkOut: number; crate: number; percentage: number; weightKg: number;
    daysStored: number }[];
  marketSurveys: { checkOut: number; crop: string; currency: string; sellingPricePerUnit: number;
    kgPerUnit: number; kgSold: number; kgLost: number; lossReason: string | null;
    surveyedAt: Date }[];
}

const round2 = (value: number) => Math.round(value * 100) / 100;

export function planCompany(company: DemoCompany, random: Random, now: Date): CompanyPlan {
  const nowMs = now.getTime();
  const todayMs = Math.floor(nowMs / DAY) * DAY;
  const daysAgo = (days: number) => new Date(todayMs - days * DAY);
  // a moment in local working hours (08:00-17:00) on that UTC day; today's moments are squeezed
  // into [midnight, now) so nothing lies in the future and same-day order is kept
  const during = (days: number, from = 0, to = 1) => {
    const utcHour = 8 + 9 * random.float(from, to) - company.utcOffsetHours;
    return days > 0
      ? new Date(todayMs - days * DAY + utcHour * HOUR)
      : new Date(todayMs + (utcHour / 24) * (nowMs - todayMs));
  };
  const person = () => ({ firstName: random.pick(company.firstNames), lastName: random.pick(company.lastNames) });
  const phone = () => company.phonePrefix +
    String(random.int(0, 10 ** company.phoneDigits - 1)).padStart(company.phoneDigits, '0');
  const cropPrice = (crop: string) =>
    company.pricePerKg * (demoCrops.find((c) => c.name === crop)?.priceFactor ?? 1);

  const plan: CompanyPlan = {
    company, createdAt: daysAgo(220), units: [], users: [], assignments: [], baselineSurveys: [],
    checkIns: [], crates: [], checkOuts: [], crateCheckOuts: [], marketSurveys: [],
  };

  company.locations.forEach((location, locationIndex) => {
    for (const unit of location.units) {
      const deletedDaysAgo = unit.deletedDaysAgo;
      plan.units.push({
        ...unit, locationIndex,
        createdAt: during(random.int(130, 180)),
        deletedAt: deletedDaysAgo === undefined ? null : during(deletedDaysAgo),
        sensorSeed: random.int(1, 1_000_000),
        baseTemperature: round2(random.float(3.5, 5.5)),
      });
    }
  });

  const staff = (role: PlannedUser['role'], isActive: boolean): PlannedUser => {
    const name = person();
    const email = `${name.firstName}.${name.lastName}`.toLowerCase().replace(/\s+/g, '') +
      `@${company.emailDomain}`;
    return { role, ...name, phone: phone(), email, userCode: null, registeredBy: null, isActive,
      dateJoined: during(random.int(190, 215)) };
  };
  // index 0: the active employee the demo JWT is minted for; 1: inactive; 2..: one operator a site
  plan.users.push(staff('REGISTERED_EMPLOYEE', true), staff('REGISTERED_EMPLOYEE', false));
  const operatorOf = company.locations.map(() => plan.users.push(staff('OPERATOR', true)) - 1);
  plan.units.forEach((unit, index) => {
    plan.assignments.push({ user: operatorOf[unit.locationIndex]!, unit: index });
  });

  const farmers = Array.from({ length: company.farmers }, (_, n) => {
    // most farmers predate the activity window; the rest trickle in (sign-ups in any period)
    const joinedDaysAgo = random.chance(0.7) ? random.int(ACTIVITY_DAYS + 1, 125) : random.int(0, ACTIVITY_DAYS);
    const home = random.int(0, company.locations.length - 1);
    const crops = [...new Set([random.pick(company.crops), random.pick(company.crops)])];
    const user = plan.users.push({
      role: 'FARMER', ...person(), phone: phone(), email: null,
      userCode: `${company.codePrefix}-F${String(n + 1).padStart(4, '0')}`,
      registeredBy: operatorOf[home]!, isActive: true, dateJoined: during(joinedDaysAgo, 0, 0.5),
    }) - 1;
    return { user, joinedDaysAgo, home, crops, weight: random.float(0.3, 3) };
  });
  for (const farmer of farmers) {
    if (!random.chance(0.85)) continue;
    const crop = farmer.crops[0]!;
    plan.baselineSurveys.push({
      farmer: farmer.user, crop,
      lossShare: Math.round(random.float(0.2, 0.45) * 10_000) / 10_000,
      belowMarketShare: Math.round(random.float(0.1, 0.4) * 10_000) / 10_000,
      averagePricePerKg: round2(cropPrice(crop) * random.float(0.7, 0.95)),
      surveyedAt: plan.users[farmer.user]!.dateJoined,
    });
  }

  plan.units.forEach((unit, unitIndex) => {
    const deletedDaysAgo = unit.deletedDaysAgo;
    // a retired room takes nothing in during its last days and is empty when it is deleted
    const lastCheckInDay = deletedDaysAgo === undefined ? 0 : deletedDaysAgo + 5;
    // crates present on each day (index = days ago), to keep rooms within capacity
    const occupancy = new Array<number>(ACTIVITY_DAYS + 1).fill(0);
    const meanCrates = 5;
    const meanStay = 6.5;
    // +20%: quiet Sundays and crates collected early would otherwise pull rooms below the target
    const perDay = (1.2 * unit.targetOccupancy * unit.capacityCrates) / (meanCrates * meanStay);
    const operator = operatorOf[unit.locationIndex]!;
    // the rest of a partly collected crate leaves a few days later, but never after retirement
    const remainderDay = (lastDay: number) => {
      const later = lastDay - random.int(1, 4);
      return deletedDaysAgo === undefined ? later : Math.max(later, deletedDaysAgo + 1);
    };

    for (let day = ACTIVITY_DAYS; day >= lastCheckInDay; day -= 1) {
      const sunday = daysAgo(day).getUTCDay() === 0;
      const arrivals = poisson(random, perDay * (sunday ? 0.3 : 1));
      for (let a = 0; a < arrivals; a += 1) {
        const candidates = farmers.filter((f) => f.joinedDaysAgo > day &&
          (f.home === unit.locationIndex || random.chance(0.1)));
        if (candidates.length === 0) continue;
        const farmer = random.weighted(candidates.map((f) => [f, f.weight] as const));
        let stay = random.int(2, 11);
        if (deletedDaysAgo !== undefined) stay = Math.min(stay, day - deletedDaysAgo - 1);
        let peak = 0;
        for (let d = day; d > day - stay && d >= 0; d -= 1) peak = Math.max(peak, occupancy[d]!);
        const count = Math.min(
          random.weighted([[1, 1], [2, 2], [3, 3], [4, 3], [5, 3], [6, 2], [7, 2], [8, 1], [9, 1], [10, 1]]),
          unit.capacityCrates - peak);
        if (count <= 0) continue;
        for (let d = day; d > day - stay && d >= 0; d -= 1) occupancy[d]! += count;

        const crop = random.pick(farmer.crops);
        const checkIn = plan.checkIns.push({ unit: unitIndex, farmer: farmer.user, operator,
          at: during(day, 0, 0.4) }) - 1;
        const crates = Array.from({ length: count }, () => plan.crates.push({
          checkIn, unit: unitIndex, crop, fullyCheckedOutAt: null,
          initialWeightKg: round2(unit.crateWeightKg * random.float(0.85, 1.05)),
        }) - 1);

        // who leaves when: [days ago, crate, percentage]; negative days are still to come
        const lastDay = day - stay;
        const parts: [number, number, number][] = [];
        const partialShare = random.pick([25, 40, 50, 60, 75]);
        const rest = random.chance(0.1) ? remainderDay(lastDay) : lastDay;
        if (count >= 2 && random.chance(0.35)) {
          const firstDay = day - random.int(1, Math.max(1, stay - 1));
          const firstCount = random.int(1, count - 1);
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

        const outDays = [...new Set(parts.map(([d]) => d))].filter((d) => d >= 0).sort((x, y) => y - x);
        for (const outDay of outDays) {
          const at = during(outDay, 0.45, 1);
          const checkOut = plan.checkOuts.length;
          let fees = 0;
          let kgOut = 0;
          for (const [d, crate, percentage] of parts) {
            if (d !== outDay) continue;
            const initial = plan.crates[crate]!.initialWeightKg;
            const weightKg = round2((initial * percentage) / 100 * random.float(0.97, 1));
            const daysStored = day - outDay;
            const quantity = unit.metric === 'KILOGRAMS' ? weightKg : percentage / 100;
            fees += unit.price * quantity * (unit.pricing === 'DAILY' ? daysStored : 1);
            kgOut += weightKg;
            plan.crateCheckOuts.push({ checkOut, crate, percentage, weightKg, daysStored });
            const leftAfter = parts.filter(([d2, c2]) => c2 === crate && d2 < outDay).length;
            if (leftAfter === 0) plan.crates[crate]!.fullyCheckedOutAt = at;
          }
          const inUsd = random.chance(0.08);
          const coolingFees = Math.max(0.01, round2(inUsd ? fees / company.localPerUsd : fees));
          const discount = random.chance(0.12) ? round2(coolingFees * random.pick([0.05, 0.1, 0.15])) : 0;
          let paid = random.chance(outDay > 14 ? 0.9 : 0.55);
          const paidAt = random.chance(0.7) ? at : new Date(at.getTime() + random.int(1, 5) * DAY + random.int(0, 8) * HOUR);
          if (paidAt.getTime() > nowMs) paid = false;
          const method = random.weighted(inUsd ? usdPaymentMethods : company.paymentMethods);
          plan.checkOuts.push({
            unit: unitIndex, farmer: farmer.user, operator, at,
            currency: inUsd ? 'USD' : company.currency, coolingFees, discount, paid,
            paymentMethod: paid ? method : null, paidAt: paid ? paidAt : null,
          });

          if (random.chance(0.8)) {
            const kgLost = round2(kgOut * random.float(0.01, 0.09));
            plan.marketSurveys.push({
              checkOut, crop, currency: company.currency,
              sellingPricePerUnit: round2(cropPrice(crop) * unit.crateWeightKg * random.float(1.05, 1.35)),
              kgPerUnit: unit.crateWeightKg, kgSold: round2(kgOut - kgLost), kgLost,
              lossReason: kgLost > 0 ? random.pick(['Spoilage', 'Bruising in transport', 'Unsold at market', 'Pests']) : null,
              surveyedAt: new Date(Math.min(nowMs, at.getTime() + random.int(1, 48) * HOUR)),
            });
          }
        }
      }
    }
  });
  return plan;
}

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
