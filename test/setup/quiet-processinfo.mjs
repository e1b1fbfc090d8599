// Preloaded (NODE_OPTIONS) into tap's runner by test/run.mjs: tap's process-info hook records
// nothing in the test processes the runner starts. tap injects that hook into every test process
// and by default it records each module the test loads (reading its source and measuring its
// lines) for coverage and `tap --changed`, which this suite does not use: ~0.4 s of CPU per test
// process. Its exclusion pattern reaches a test process in the environment, which the runner
// resets when a run starts; a spawn listener (process-on-spawn, which tap's hook also uses) sets
// it to "everything" on the way out, after tap has written it.
import processOnSpawn from 'process-on-spawn';

processOnSpawn.addListener((spawn) => {
  spawn.env = { ...spawn.env, _TAPJS_PROCESSINFO_EXCLUDE_: '/./' };
});
