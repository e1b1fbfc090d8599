// What `import t from 'tap'` gives a test file run in a group (file-group.mjs): the subtest the
// group opened for it. prebuilt-hooks.mjs resolves 'tap' here, with the file's URL as the query.
const file = new URL(import.meta.url).searchParams.get('file');
const fileTest = globalThis[Symbol.for('coldtrack.fileTests')]?.get(file);
if (!fileTest) throw new Error(`no group subtest for ${file}`);
export default fileTest;
