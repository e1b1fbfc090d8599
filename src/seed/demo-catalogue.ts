// The fixed part of the demo data set: companies, their sites and rooms, crops and price levels.
// Everything random (people, movements, payments) is drawn from these in demo-plan.ts and demo-movements.ts.

export type PaymentMethod = 'CASH' | 'CREDIT_CARD' | 'QR_CODE' | 'BANK_TRANSFER' | 'USSD' | 'OPAY' | 'UPI';
export type UnitType = 'FARM_GATE_STORAGE_ROOM' | 'MARKET_STORAGE_ROOM' | 'MOVABLE_UNIT' | 'OTHER';

export interface DemoCrop {
  name: string;
  /** kg CO2e per kg of produce; spoilage without cold storage makes the first one larger */
  emissionWithoutCooling: number;
  emissionWithCooling: number;
  /** relative to the company's typical farm-gate price per kg */
  priceFactor: number;
}

export const demoCrops: readonly DemoCrop[] = [
  { name: 'Tomato', emissionWithoutCooling: 1.12, emissionWithCooling: 0.46, priceFactor: 1 },
  { name: 'Sweet pepper', emissionWithoutCooling: 1.35, emissionWithCooling: 0.58, priceFactor: 1.6 },
  { name: 'Onion', emissionWithoutCooling: 0.62, emissionWithCooling: 0.31, priceFactor: 0.7 },
  { name: 'Okra', emissionWithoutCooling: 0.98, emissionWithCooling: 0.41, priceFactor: 1.2 },
  { name: 'Mango', emissionWithoutCooling: 1.05, emissionWithCooling: 0.44, priceFactor: 1.4 },
  { name: 'Leafy greens', emissionWithoutCooling: 1.48, emissionWithCooling: 0.52, priceFactor: 0.9 },
  { name: 'Potato', emissionWithoutCooling: 0.45, emissionWithCooling: 0.24, priceFactor: 0.6 },
  { name: 'Banana', emissionWithoutCooling: 0.86, emissionWithCooling: 0.38, priceFactor: 0.8 },
];

export interface DemoUnit {
  name: string;
  unitType: UnitType;
  metric: 'CRATES' | 'KILOGRAMS';
  capacityCrates: number;
  crateWeightKg: number;
  pricing: 'FIXED' | 'DAILY';
  /** per crate, or per kg for KILOGRAMS units; per day when DAILY */
  price: number;
  /** average share of the capacity the simulation aims for */
  targetOccupancy: number;
  /** retired: soft-deleted this many days ago, with history only before that */
  deletedDaysAgo?: number;
}

export interface DemoLocation {
  name: string;
  state: string;
  city: string;
  units: DemoUnit[];
}

export interface DemoCompany {
  name: string;
  country: string;
  currency: string;
  /** prefix of farmers' user codes, e.g. NG-F0001 */
  codePrefix: string;
  /** hours from UTC; keeps movements in local working hours and the sensor cycle in local days */
  utcOffsetHours: number;
  /** typical farm-gate price per kg of produce, in the company currency */
  pricePerKg: number;
  /** a minority of check-outs is billed in USD (exporters, NGO programmes) */
  localPerUsd: number;
  paymentMethods: readonly (readonly [PaymentMethod, number])[];
  farmers: number;
  crops: readonly string[];
  phonePrefix: string;
  phoneDigits: number;
  emailDomain: string;
  firstNames: readonly string[];
  lastNames: readonly string[];
  locations: DemoLocation[];
}

export const usdPaymentMethods: readonly (readonly [PaymentMethod, number])[] = [
  ['BANK_TRANSFER', 3],
  ['CREDIT_CARD', 2],
];

const crates = (
  name: string,
  unitType: UnitType,
  capacityCrates: number,
  pricing: 'FIXED' | 'DAILY',
  price: number,
  targetOccupancy: number,
  extra: Partial<DemoUnit> = {},
): DemoUnit => ({
  name,
  unitType,
  metric: 'CRATES',
  capacityCrates,
  crateWeightKg: 25,
  pricing,
  price,
  targetOccupancy,
  ...extra,
});

export const demoCompanies: readonly DemoCompany[] = [
  {
    name: 'Naija Fresh Cold Rooms (demo)',
    country: 'NG',
    currency: 'NGN',
    codePrefix: 'NG',
    utcOffsetHours: 1,
    pricePerKg: 450,
    localPerUsd: 1550,
    paymentMethods: [
      ['CASH', 5],
      ['BANK_TRANSFER', 3],
      ['USSD', 2],
      ['OPAY', 2],
    ],
    farmers: 70,
    crops: ['Tomato', 'Sweet pepper', 'Okra', 'Leafy greens', 'Onion', 'Mango'],
    phonePrefix: '+23480',
    phoneDigits: 8,
    emailDomain: 'naijafresh.example',
    firstNames: [
      'Adebayo',
      'Chinedu',
      'Aisha',
      'Musa',
      'Ngozi',
      'Ibrahim',
      'Funmilayo',
      'Emeka',
      'Halima',
      'Yusuf',
      'Blessing',
      'Tunde',
      'Amina',
      'Obinna',
      'Zainab',
      'Kelechi',
    ],
    lastNames: ['Okafor', 'Bello', 'Adeyemi', 'Abubakar', 'Eze', 'Ogunleye', 'Danjuma', 'Nwosu', 'Lawal', 'Usman'],
    locations: [
      {
        name: 'Mile 12 Market Hub',
        state: 'Lagos',
        city: 'Lagos',
        units: [
          crates('Mile 12 Cold Room A', 'MARKET_STORAGE_ROOM', 200, 'DAILY', 400, 0.75),
          crates('Mile 12 Cold Room B', 'MARKET_STORAGE_ROOM', 150, 'FIXED', 2500, 0.55),
        ],
      },
      {
        name: 'Dawanau Farm Gate',
        state: 'Kano',
        city: 'Kano',
        units: [
          crates('Dawanau Farm-Gate Room', 'FARM_GATE_STORAGE_ROOM', 300, 'DAILY', 350, 0.65),
          crates('Dawanau Movable Unit', 'MOVABLE_UNIT', 100, 'DAILY', 18, 0.55, { metric: 'KILOGRAMS' }),
          crates('Dawanau Pilot Room (retired)', 'OTHER', 120, 'DAILY', 300, 0.5, { deletedDaysAgo: 40 }),
        ],
      },
    ],
  },
  {
    name: 'Deccan Cold Store Co. (demo)',
    country: 'IN',
    currency: 'INR',
    codePrefix: 'IN',
    utcOffsetHours: 5.5,
    pricePerKg: 28,
    localPerUsd: 84,
    paymentMethods: [
      ['UPI', 6],
      ['CASH', 4],
      ['QR_CODE', 2],
      ['BANK_TRANSFER', 1],
    ],
    farmers: 60,
    crops: ['Tomato', 'Onion', 'Potato', 'Mango', 'Banana', 'Leafy greens'],
    phonePrefix: '+9198',
    phoneDigits: 8,
    emailDomain: 'deccancold.example',
    firstNames: [
      'Ramesh',
      'Sunita',
      'Suresh',
      'Lakshmi',
      'Anil',
      'Priya',
      'Manjunath',
      'Kavita',
      'Ravi',
      'Geeta',
      'Vijay',
      'Sangeeta',
      'Prakash',
      'Meena',
    ],
    lastNames: ['Patil', 'Reddy', 'Gowda', 'Shinde', 'Jadhav', 'Naik', 'Pawar', 'Kumar', 'Deshmukh', 'More'],
    locations: [
      {
        name: 'Nashik APMC Yard',
        state: 'Maharashtra',
        city: 'Nashik',
        units: [
          crates('Nashik Market Room 1', 'MARKET_STORAGE_ROOM', 250, 'DAILY', 25, 0.8, { crateWeightKg: 20 }),
          crates('Nashik Bulk Store', 'OTHER', 120, 'DAILY', 1.2, 0.6, { metric: 'KILOGRAMS', crateWeightKg: 20 }),
          crates('Nashik Old Room (retired)', 'MARKET_STORAGE_ROOM', 100, 'FIXED', 110, 0.45, { crateWeightKg: 20, deletedDaysAgo: 25 }),
        ],
      },
      {
        name: 'Kolar Farm Cluster',
        state: 'Karnataka',
        city: 'Kolar',
        units: [
          crates('Kolar Farm-Gate Room', 'FARM_GATE_STORAGE_ROOM', 180, 'FIXED', 120, 0.6, { crateWeightKg: 20 }),
          crates('Kolar Solar Movable Unit', 'MOVABLE_UNIT', 100, 'DAILY', 22, 0.5, { crateWeightKg: 20 }),
        ],
      },
    ],
  },
  {
    name: 'Mindanao Cool Hub (demo)',
    country: 'PH',
    currency: 'PHP',
    codePrefix: 'PH',
    utcOffsetHours: 8,
    pricePerKg: 55,
    localPerUsd: 57,
    paymentMethods: [
      ['CASH', 5],
      ['QR_CODE', 3],
      ['BANK_TRANSFER', 2],
      ['CREDIT_CARD', 1],
    ],
    farmers: 45,
    crops: ['Banana', 'Mango', 'Tomato', 'Leafy greens', 'Sweet pepper'],
    phonePrefix: '+63917',
    phoneDigits: 7,
    emailDomain: 'mindanaocool.example',
    firstNames: ['Jose', 'Maria', 'Juan', 'Ana', 'Roberto', 'Liza', 'Eduardo', 'Rosalie', 'Ramon', 'Joy', 'Manuel', 'Cristina'],
    lastNames: ['Santos', 'Reyes', 'Cruz', 'Bautista', 'Dela Cruz', 'Garcia', 'Mendoza', 'Ramos', 'Aquino', 'Villanueva'],
    locations: [
      {
        name: 'Bankerohan Market',
        state: 'Davao del Sur',
        city: 'Davao City',
        units: [
          crates('Bankerohan Cold Room', 'MARKET_STORAGE_ROOM', 160, 'DAILY', 35, 0.75),
          crates('Bankerohan Annex', 'OTHER', 100, 'FIXED', 150, 0.45),
        ],
      },
      {
        name: 'Bukidnon Highlands',
        state: 'Bukidnon',
        city: 'Malaybalay',
        units: [
          crates('Malaybalay Farm-Gate Room', 'FARM_GATE_STORAGE_ROOM', 220, 'DAILY', 30, 0.6),
          crates('Bukidnon Movable Unit', 'MOVABLE_UNIT', 100, 'DAILY', 1.5, 0.5, { metric: 'KILOGRAMS' }),
          crates('Bukidnon Trial Unit (retired)', 'MOVABLE_UNIT', 100, 'DAILY', 30, 0.4, { deletedDaysAgo: 55 }),
        ],
      },
    ],
  },
];
