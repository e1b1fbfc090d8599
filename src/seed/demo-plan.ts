// Draws one demo company's people and ~90 days of cold-room movements from the catalogue, a
// seeded PRNG and a clock. Pure: rows refer to each other by index; demo.ts gives them ids.
// The plan's shape and the shared draws: demo-planner.ts; a room's movements: demo-movements.ts.
import type { DemoCompany } from './demo-catalogue.js';
import { planUnitActivity } from './demo-movements.js';
import {
  ACTIVITY_DAYS,
  type CompanyPlan,
  cropPrice,
  type PlannedFarmer,
  type PlannedUser,
  type Planner,
  plannerFor,
  round2,
} from './demo-planner.js';
import type { Random } from './random.js';

export type { CompanyPlan, PlannedUnit, PlannedUser } from './demo-planner.js';

// Each step draws from the one random stream in turn: their order, and the order of the draws in
// each, is what makes a seed give the same data set; reordering them changes every figure.
export function planCompany(company: DemoCompany, random: Random, now: Date): CompanyPlan {
  const planner = plannerFor(company, random, now);
  planUnits(planner);
  const operatorOf = planStaff(planner);
  assignOperators(planner.plan, operatorOf);
  const farmers = planFarmers(planner, operatorOf);
  planBaselineSurveys(planner, farmers);
  planner.plan.units.forEach((unit, unitIndex) => planUnitActivity(planner, unitIndex, farmers, operatorOf[unit.locationIndex]!));
  return planner.plan;
}

const person = ({ company, random }: Planner) => ({ firstName: random.pick(company.firstNames), lastName: random.pick(company.lastNames) });
const phone = ({ company, random }: Planner) =>
  company.phonePrefix + String(random.int(0, 10 ** company.phoneDigits - 1)).padStart(company.phoneDigits, '0');

/** The catalogue's rooms, each with when it was installed (and retired) and its sensor's traits. */
function planUnits({ company, random, plan, during }: Planner): void {
  company.locations.forEach((location, locationIndex) => {
    for (const unit of location.units) {
      const deletedDaysAgo = unit.deletedDaysAgo;
      plan.units.push({
        ...unit,
        locationIndex,
        createdAt: during(random.int(130, 180)),
        deletedAt: deletedDaysAgo === undefined ? null : during(deletedDaysAgo),
        sensorSeed: random.int(1, 1_000_000),
        baseTemperature: round2(random.float(3.5, 5.5)),
      });
    }
  });
}

/** Index 0: the active employee the demo JWT is minted for; 1: inactive; 2..: one operator a site (returned by site). */
function planStaff(planner: Planner): number[] {
  const { company, plan } = planner;
  plan.users.push(staffMember(planner, 'REGISTERED_EMPLOYEE', true), staffMember(planner, 'REGISTERED_EMPLOYEE', false));
  return company.locations.map(() => plan.users.push(staffMember(planner, 'OPERATOR', true)) - 1);
}

function staffMember(planner: Planner, role: PlannedUser['role'], isActive: boolean): PlannedUser {
  const { company, random, during } = planner;
  const name = person(planner);
  const email = `${name.firstName}.${name.lastName}`.toLowerCase().replace(/\s+/g, '') + `@${company.emailDomain}`;
  return {
    role,
    ...name,
    phone: phone(planner),
    email,
    userCode: null,
    registeredBy: null,
    isActive,
    dateJoined: during(random.int(190, 215)),
  };
}

/** Each room is run by its site's operator. */
function assignOperators(plan: CompanyPlan, operatorOf: number[]): void {
  plan.units.forEach((unit, index) => {
    plan.assignments.push({ user: operatorOf[unit.locationIndex]!, unit: index });
  });
}

function planFarmers(planner: Planner, operatorOf: number[]): PlannedFarmer[] {
  const { company, random, plan, during } = planner;
  return Array.from({ length: company.farmers }, (_, n) => {
    // most farmers predate the activity window; the rest trickle in (sign-ups in any period)
    const joinedDaysAgo = random.chance(0.7) ? random.int(ACTIVITY_DAYS + 1, 125) : random.int(0, ACTIVITY_DAYS);
    const home = random.int(0, company.locations.length - 1);
    const crops = [...new Set([random.pick(company.crops), random.pick(company.crops)])];
    const user =
      plan.users.push({
        role: 'FARMER',
        ...person(planner),
        phone: phone(planner),
        email: null,
        userCode: `${company.codePrefix}-F${String(n + 1).padStart(4, '0')}`,
        registeredBy: operatorOf[home]!,
        isActive: true,
        dateJoined: during(joinedDaysAgo, 0, 0.5),
      }) - 1;
    return { user, joinedDaysAgo, home, crops, weight: random.float(0.3, 3) };
  });
}

/** Most farmers told, when they joined, what they lost and earned before cold storage (impact's baseline). */
function planBaselineSurveys({ company, random, plan }: Planner, farmers: PlannedFarmer[]): void {
  for (const farmer of farmers) {
    if (!random.chance(0.85)) continue;
    const crop = farmer.crops[0]!;
    plan.baselineSurveys.push({
      farmer: farmer.user,
      crop,
      lossShare: Math.round(random.float(0.2, 0.45) * 10_000) / 10_000,
      belowMarketShare: Math.round(random.float(0.1, 0.4) * 10_000) / 10_000,
      averagePricePerKg: round2(cropPrice(company, crop) * random.float(0.7, 0.95)),
      surveyedAt: plan.users[farmer.user]!.dateJoined,
    });
  }
}
