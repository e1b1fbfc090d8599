// The test tiers: which test files need only the running engines and which start processes of
// their own (servers, clusters, a browser, a Prometheus, private databases, a Node 18 install), or
// do so much that a contributor's quick run would wait on them (the volume tier).
// `npm test` runs every tier; `npm run test:fast` the fast one, `npm run test:<tier>` another
// (test/run.mjs --tier=NAME). A file belongs to the first heavy tier with a pattern that matches
// it, otherwise to the fast tier. The fast tier is held to it while it runs: in a fast-tier
// file's process, starting a process other than FAST_TIER_COMMANDS throws
// (test/setup/fast-tier-guard.mjs), and test/tools/tiers.test.ts checks this list.
// Loaded by test/run.mjs on Node's own type stripping: erasable syntax and node: imports only.
import { readFileSync } from 'node:fs';
import { dirname, join, matchesGlob, relative } from 'node:path';

export interface Tier {
  name: string;
  /** what its files start or need, besides the running PostgreSQL, TimescaleDB and Redis */
  needs: string;
  /** globs from the repository's root; the first tier that matches a file takes it */
  patterns: string[];
}

/** Short commands a fast-tier file may run: they start no server and end at once. */
export const FAST_TIER_COMMANDS: readonly string[] = ['git', 'pg_dump'];

export const FAST_TIER: Tier = {
  name: 'fast',
  needs: 'nothing more: fastify.inject or a port of the test process, on the running engines',
  patterns: ['test/**/*.test.ts'],
};

export const HEAVY_TIERS: readonly Tier[] = [
  {
    // not by what they start but by how much they do (a contributor's quick run should not wait on them)
    name: 'volume',
    needs: 'nothing more than the fast tier, but a lot of it: thousands of generated requests, a million readings through a Parquet thread',
    patterns: ['test/contract/openapi-conformance.test.ts', 'test/routes/sensor-data/bulk-parquet.test.ts'],
  },
  {
    name: 'browser',
    needs: "Debian's chromium (playwright-core), beside a server the file starts",
    patterns: ['test/**/*.browser.test.ts'],
  },
  {
    name: 'prometheus',
    needs: "Debian's prometheus and promtool, a private PostgreSQL, service clusters",
    patterns: ['test/ops/**/*.test.ts', 'test/observability/alert-metrics.test.ts'],
  },
  {
    name: 'scale-out',
    needs: 'private PostgreSQL clusters (pg_createcluster, pg_basebackup: a streaming replica), PgBouncer, a Redis Cluster',
    patterns: [
      'test/operations/pgbouncer*.test.ts',
      'test/operations/read-replica.test.ts',
      'test/operations/replica-degraded.test.ts',
      'test/operations/replica-walks.test.ts',
      'test/operations/redis-cluster.test.ts',
      'test/operations/redis-failover.test.ts',
    ],
  },
  {
    name: 'client-package',
    needs: 'npm pack of the client and a Node 18 install (the npm registry)',
    patterns: ['test/client/node-floor.test.ts', 'test/client/package.test.ts'],
  },
  {
    name: 'processes',
    needs: 'the service, its cluster and its commands started as processes, private redis-servers, an embedded PostgreSQL',
    patterns: [
      'test/operations/**/*.test.ts',
      'test/bench/loadtest.test.ts',
      'test/bench/soak.test.ts',
      'test/bench/published-figures.test.ts',
      'test/cli/**/*.test.ts',
      'test/client/rate-limits.test.ts',
      'test/client/sync-during-ingest.test.ts',
      'test/config/config.test.ts',
      'test/config/server-start.test.ts',
      'test/data-surface/conditional-requests-redis-faults.test.ts',
      'test/data-surface/token-auth.test.ts',
      'test/db/embedded-recovery.test.ts',
      'test/plugins/openapi-lint.test.ts',
      'test/redis/command-timers.test.ts',
      'test/routes/api-tokens/audit-trail.test.ts',
      'test/routes/token-leaks/cluster.test.ts',
      'test/routes/token-leaks/report.happy.test.ts',
      'test/routes/token-leaks/report.redis-outage.test.ts',
      'test/seed/*.test.ts',
      'test/sensors/cli.test.ts',
      'test/sensors/profile-choice.test.ts',
      'test/tools/file-groups.test.ts',
      'test/webhooks/crash.test.ts',
    ],
  },
];

export const TIERS: readonly Tier[] = [FAST_TIER, ...HEAVY_TIERS];

/**
 * Fast-tier files that run in a process of their own, not in a group of files
 * (test/setup/groups.ts): they check the process itself (the modules it has loaded, the priority
 * of its threads), which the other files of a group would change.
 */
export const OWN_PROCESS: readonly string[] = ['test/tracing/off.test.ts', 'test/config/thread-pool-priority.test.ts'];

/** The tier of a test file (a path from the repository's root, with forward slashes). */
export function tierOf(file: string): string {
  return HEAVY_TIERS.find((tier) => tier.patterns.some((pattern) => matchesGlob(file, pattern)))?.name ?? FAST_TIER.name;
}

const TEMPLATE_HELPERS = { postgres: 'test/helpers/db.ts', timescale: 'test/helpers/timescale.ts' } as const;
export type Template = keyof typeof TEMPLATE_HELPERS;

/** Every file `files` reach through their relative imports, themselves included. */
export function importsReached(root: string, files: readonly string[]): Set<string> {
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    let source: string;
    try {
      source = readFileSync(join(root, file), 'utf8');
    } catch {
      return;
    }
    for (const [, specifier] of source.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)) {
      visit(relative(root, join(root, dirname(file), specifier!)).replace(/\.js$/, '.ts'));
    }
  };
  files.forEach(visit);
  return reached;
}

/** The database templates (test/setup/template-db.ts) test files clone: those whose helper they reach. */
export function templatesOf(root: string, files: readonly string[]): Template[] {
  const reached = importsReached(root, files);
  return (Object.keys(TEMPLATE_HELPERS) as Template[]).filter((template) => reached.has(TEMPLATE_HELPERS[template]));
}
