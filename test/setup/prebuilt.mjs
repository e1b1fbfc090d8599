// Registers prebuilt-hooks.mjs (`--import=./test/setup/prebuilt.mjs`, in .taprc): the test
// processes load this repository's TypeScript from its transpiled copy in .build/.
import { registerHooks } from 'node:module';
import processOnSpawn from 'process-on-spawn';
// a fast-tier file may start no process (test/tiers.ts)
import './fast-tier-guard.mjs';
import { load, resolve } from './prebuilt-hooks.mjs';

registerHooks({ resolve, load });

// tap's process-info hook follows every process a test starts: it adds itself to the NODE_OPTIONS
// of each spawn (through process-on-spawn) and records each module that process loads, for
// coverage this suite does not collect: ~0.7 s of CPU per server, cluster worker or command
// (1.29 against 0.59 s to load the app). Listeners run in the order they were added, this one
// after tap's: what it takes out stays out. test/run.mjs's preload for tap's runner, which the
// test processes inherit, goes too; other NODE_OPTIONS (test/tools/cpu-by-process.mjs's recorder)
// stay.
processOnSpawn.addListener((spawn) => {
  const options = spawn.env.NODE_OPTIONS?.split(/\s+/).filter(
    (option) => option && !option.includes('@tapjs/processinfo') && !option.includes('quiet-processinfo'),
  );
  const env = { ...spawn.env };
  if (options?.length) env.NODE_OPTIONS = options.join(' ');
  else delete env.NODE_OPTIONS;
  spawn.env = env;
});
