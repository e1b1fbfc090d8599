// tap `before` script for `npm test` (test/run.mjs): the templates were already built by
// test/setup/template-db.ts, outside tap, so that tap's coverage of that script is not reported as
// the suite's. A plain `npx tap` still builds them through .taprc's `before`.
