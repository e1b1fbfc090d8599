// The module a thread runs, in workers/, for a module one folder down in src/ (src/<concern>/x.ts):
// workers/<name>.ts beside the TypeScript the tests load, dist/workers/<name>.js in the build.
export function threadFileFor(moduleUrl: string, name: string): URL {
  const extension = new URL(moduleUrl).pathname.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/${name}.${extension}`, moduleUrl);
}
