// The shape of a demo company's plan (demo.ts loads it), and what every step that fills it
// shares: the company, its one seeded random stream, the clock, and the plan so far.
import type { DemoCompany, DemoUnit, PaymentMethod } from './demo-catalogue.js';
import { demoCrops } from './demo-catalogue.js';
import type { Random } from './random.js';
import { HOUR_MS } from '../time.js';

export const DAY = 86_400_000;
export const HOUR = HOUR_MS;
/** days of check-ins before today */
export const ACTIVITY_DAYS = 90;

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
  baselineSurveys: {
    farmer: number;
    crop: string;
    lossShare: number;
    belowMarketShare: number;
    averagePricePerKg: number;
    surveyedAt: Date;
  }[];
  checkIns: { unit: number; farmer: number; operator: number; at: Date }[];
  crates: { checkIn: number; unit: number; crop: string; initialWeightKg: number; fullyCheckedOutAt: Date | null }[];
  checkOuts: {
    unit: number;
    farmer: number;
    operator: number;
    at: Date;
    currency: string;
    coolingFees: number;
    discount: number;
    paid: boolean;
    paymentMethod: PaymentMethod | null;
    paidAt: Date | null;
  }[];
  crateCheckOuts: { checkOut: number; crate: number; percentage: number; weightKg: number; daysStored: number }[];
  marketSurveys: {
    checkOut: number;
    crop: string;
    currency: string;
    sellingPricePerUnit: number;
    kgPerUnit: number;
    kgSold: number;
    kgLost: number;
    lossReason: string | null;
    surveyedAt: Date;
  }[];
}

export const round2 = (value: number) => Math.round(value * 100) / 100;

/** What every step of a company's plan draws from and adds to. */
export interface Planner {
  company: DemoCompany;
  random: Random;
  plan: CompanyPlan;
  nowMs: number;
  daysAgo(days: number): Date;
  /** a moment in local working hours on that day (the part `from`..`to` of them) */
  during(days: number, from?: number, to?: number): Date;
}

/** A farmer as the movements need them: where they live, what they grow, how often they come. */
export interface PlannedFarmer {
  user: number;
  joinedDaysAgo: number;
  home: number;
  crops: string[];
  weight: number;
}

/** A planner for `company` at `now`, with an empty plan. */
export function plannerFor(company: DemoCompany, random: Random, now: Date): Planner {
  const nowMs = now.getTime();
  const todayMs = Math.floor(nowMs / DAY) * DAY;
  const daysAgo = (days: number) => new Date(todayMs - days * DAY);
  // a moment in local working hours (08:00-17:00) on that UTC day; today's moments are squeezed
  // into [midnight, now) so nothing lies in the future and same-day order is kept
  const during = (days: number, from = 0, to = 1) => {
    const utcHour = 8 + 9 * random.float(from, to) - company.utcOffsetHours;
    return days > 0 ? new Date(todayMs - days * DAY + utcHour * HOUR) : new Date(todayMs + (utcHour / 24) * (nowMs - todayMs));
  };
  const plan: CompanyPlan = {
    company,
    createdAt: daysAgo(220),
    units: [],
    users: [],
    assignments: [],
    baselineSurveys: [],
    checkIns: [],
    crates: [],
    checkOuts: [],
    crateCheckOuts: [],
    marketSurveys: [],
  };
  return { company, random, plan, nowMs, daysAgo, during };
}

/** A crop's price per kg at the company. */
export const cropPrice = (company: DemoCompany, crop: string) =>
  company.pricePerKg * (demoCrops.find((c) => c.name === crop)?.priceFactor ?? 1);
