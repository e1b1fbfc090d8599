// The command line of `npm run bench`; --publish takes a complete run only (kit/publish.ts).
//   npm run bench -- [--quick] [--seconds N] [--only small-page,mixed,...] [--variants [CASES]] [--publish]
//     --variants alone: every case but noise; without --only the tracing case (P19) runs anyway;
//     --usage-overhead is --variants usage
//   npm run bench -- --scale [--scale-max 1M|10M|100M] [--profile postgres|timescale|both] [--publish]
//   npm run bench -- --soak [MINUTES] [--soak-rate N] [--profile postgres|timescale] [--publish]
import { parseArgs } from 'node:util';
import { type KitConfig, kitConfig } from './config.js';
import { readScaleOptions, SCALE_STEPS, type ScaleOptions } from './scale-plan.js';
import { SENSOR_PROFILES } from './sensor-profiles.js';
import { type Scenario, scenarios } from './scenarios.js';
import { SOAK_DEFAULTS, type SoakOptions } from './soak-verdict.js';
import { DEFAULT_VARIANTS, VARIANT_IDS, type VariantId } from './variants.js';

export interface RunOptions {
  config: KitConfig;
  /** the request scenarios to run, in their order */
  scenarios: Scenario[];
  /** P7's revoke-while-hammering rounds */
  revocation: boolean;
  /** bench/sensor-*.ts for P4 and P6 */
  sensorScripts: boolean;
  redisUrl: string;
  /** --scale: only the P9 scale curve (bench/scale.ts), with its options; null otherwise */
  scale: ScaleOptions | null;
  /** --soak: only the P14 soak (bench/soak.ts), with its options; null otherwise */
  soak: SoakOptions | null;
  /** why this is not a complete run (the options that made it smaller); empty for one */
  partial: string[];
  /** --publish: the run also goes to bench/history.jsonl and docs/benchmarks.md (kit/publish.ts) */
  publish: boolean;
  /** the cluster variants to run (kit/variants.ts): --variants, else tracing (P19) unless --only */
  variants: VariantId[];
}

/**
 * `--soak` without a number (last, or before another option) is the default soak: 30 minutes;
 * `--variants` without a list is every case but noise.
 */
const withDefaults = (args: string[]) =>
  args.flatMap((arg, i) => {
    const bare = i === args.length - 1 || args[i + 1]!.startsWith('--');
    if (arg === '--soak' && bare) return [arg, String(SOAK_DEFAULTS.minutes)];
    if (arg === '--variants' && bare) return [arg, DEFAULT_VARIANTS.join(',')];
    return [arg];
  });

function readVariants(list: string): VariantId[] {
  const ids = list.split(',').map((id) => id.trim());
  const unknown = ids.filter((id) => !(VARIANT_IDS as readonly string[]).includes(id));
  if (unknown.length > 0) throw new Error(`--variants names ${VARIANT_IDS.join(', ')}, not ${unknown.join(', ')}`);
  return VARIANT_IDS.filter((id) => ids.includes(id));
}

function readSoakOptions(values: { soak?: string; 'soak-rate'?: string; profile?: string }): SoakOptions {
  const minutes = Number(values.soak);
  const rate = Number(values['soak-rate'] ?? SOAK_DEFAULTS.rate);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
    throw new Error(`--soak takes minutes (0-1440, fractions allowed), not "${values.soak}"`);
  if (!Number.isFinite(rate) || rate <= 0 || rate > 500)
    throw new Error(`--soak-rate takes requests a second (up to 500), not "${values['soak-rate']}"`);
  const profile = values.profile ?? 'postgres';
  if (profile !== 'postgres' && profile !== 'timescale')
    throw new Error(`--profile with --soak is postgres or timescale, not "${profile}"`);
  return { minutes, rate, profile };
}

/**
 * The cases --variants names (--usage-overhead: usage), and the tracing case (P19, a target) in
 * any run --only does not cut down.
 */
function variantsOf(list: string | undefined, usageOverhead: boolean, only: boolean): VariantId[] {
  const named: VariantId[] = [
    ...(list === undefined ? [] : readVariants(list)),
    ...(usageOverhead ? (['usage'] as const) : []),
    ...(only ? [] : (['tracing'] as const)),
  ];
  return VARIANT_IDS.filter((id) => named.includes(id));
}

export function readRunOptions(given = process.argv.slice(2)): RunOptions {
  const args = withDefaults(given);
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      seconds: { type: 'string' },
      only: { type: 'string' },
      scale: { type: 'boolean', default: false },
      'scale-max': { type: 'string' },
      profile: { type: 'string' },
      soak: { type: 'string' },
      'soak-rate': { type: 'string' },
      publish: { type: 'boolean', default: false },
      variants: { type: 'string' },
      'usage-overhead': { type: 'boolean', default: false },
    },
  });
  if (values.soak !== undefined) {
    if (
      values.scale ||
      values['usage-overhead'] ||
      values.variants !== undefined ||
      values.quick ||
      values.seconds !== undefined ||
      values.only !== undefined ||
      values['scale-max'] !== undefined
    ) {
      throw new Error(
        '--soak is a run of its own: it takes --soak-rate and --profile, not --scale, --variants, --quick, --seconds or --only',
      );
    }
    const soak = readSoakOptions(values);
    const partial = [
      ...(soak.minutes !== SOAK_DEFAULTS.minutes ? [`--soak ${soak.minutes}`] : []),
      ...(soak.rate !== SOAK_DEFAULTS.rate ? [`--soak-rate ${soak.rate}`] : []),
    ];
    if (values.publish && partial.length > 0) throw new Error(`--publish takes a complete soak, not one with ${partial.join(' and ')}`);
    return {
      config: kitConfig('full'),
      scenarios: [],
      revocation: false,
      sensorScripts: false,
      redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
      scale: null,
      soak,
      partial,
      publish: values.publish,
      variants: [],
    };
  }
  if (values['soak-rate'] !== undefined) throw new Error('--soak-rate belongs to --soak');
  if (!values.scale && (values['scale-max'] !== undefined || values.profile !== undefined)) {
    throw new Error(
      '--scale-max and --profile belong to --scale (the scale curve); the load benchmark runs every sensor script on both profiles',
    );
  }
  if (values.scale && (values.quick || values.seconds !== undefined || values.only !== undefined || values.variants !== undefined)) {
    throw new Error('--scale is a run of its own: it takes --scale-max and --profile, not --quick, --seconds, --only or --variants');
  }
  const config = kitConfig(values.quick ? 'quick' : 'full', values.seconds ? Number(values.seconds) : undefined);
  // --only names scenario ids, plus the two parts that are not request scenarios
  const only = values.only ? new Set(values.only.split(',').map((id) => id.trim())) : null;
  const scale = values.scale ? readScaleOptions(args) : null;
  const partial = scale
    ? [
        ...(scale.max !== SCALE_STEPS.at(-1)!.label ? [`--scale-max ${scale.max}`] : []),
        ...(scale.profiles.length < SENSOR_PROFILES.length ? [`--profile ${scale.profiles.join(',')}`] : []),
      ]
    : [...(values.quick ? ['--quick'] : []), ...(only ? [`--only ${[...only].join(',')}`] : [])];
  if (values.publish && partial.length > 0) {
    throw new Error(`--publish takes a complete run, not one with ${partial.join(' and ')}`);
  }
  return {
    config,
    scenarios: scenarios.filter((scenario) => !only || only.has(scenario.id)),
    revocation: !only || only.has('revocation'),
    sensorScripts: !only || only.has('sensor-scripts'),
    redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    scale,
    soak: null,
    partial,
    publish: values.publish,
    variants: scale ? [] : variantsOf(values.variants, values['usage-overhead'], only !== null),
  };
}
