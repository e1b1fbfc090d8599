// One Node line everywhere the service runs: the suite runs on the Node the project pins (the
// `node` devDependency, which `npm test` and `npm start` put first on PATH), and the image, the
// `engines` range and the Node types all name that same major. Bumping one without the others
// fails here (docs/operations.md, "Node and runtime notes", says which versions and why).
import { readFileSync } from 'node:fs';
import t from 'tap';

const repoFile = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const manifest = JSON.parse(repoFile('package.json')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const pinned = manifest.devDependencies.node!;
const major = (version: string) => Number(/^\D*(\d+)\./.exec(version)?.[1]);

t.test('the suite runs on the pinned Node', async (t) => {
  t.match(pinned, /^\d+\.\d+\.\d+$/, 'the node devDependency is an exact version');
  t.equal(process.versions.node, pinned, `this test process runs on Node ${pinned}`);
  t.equal(major(pinned) % 2, 0, 'an even major: an LTS line');
});

t.test('engines, the image and the types name the same major', async (t) => {
  // "^24.11.0": that major, from its first LTS release on
  const range = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(manifest.engines.node);
  t.ok(range, `engines.node is a caret range (${manifest.engines.node})`);
  const [floorMajor, floorMinor] = [Number(range?.[1]), Number(range?.[2])];
  const [, pinnedMinor] = pinned.split('.').map(Number);
  t.equal(floorMajor, major(pinned), 'engines.node names the pinned major');
  t.ok(pinnedMinor! >= floorMinor, 'the pinned version satisfies engines.node');

  const images = [...repoFile('Dockerfile').matchAll(/^FROM node:(\S+)/gm)].map((match) => match[1]);
  t.equal(images.length, 2, 'both stages of the image are node images');
  for (const image of images) t.match(image, new RegExp(`^${major(pinned)}-bookworm-slim\\b`), `FROM node:${image}`);

  t.equal(major(manifest.devDependencies['@types/node']!), major(pinned), '@types/node follows the runtime');
});
