// Registers prebuilt-hooks.mjs (`--import=./test/setup/prebuilt.mjs`, in .taprc): the test
// processes load this repository's TypeScript from its transpiled copy in .build/.
import { register } from 'node:module';

register('./prebuilt-hooks.mjs', import.meta.url);
