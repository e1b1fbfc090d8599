// The repository's root directory: where the kit runs npm, git and its child processes.
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
