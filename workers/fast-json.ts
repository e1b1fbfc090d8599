// fast-json-stringify serialisers compiled on their first use, and the library (with the Ajv it
// loads) loaded then: a process that never writes such a response neither loads nor compiles them.
// Used by the rollups' records (workers/rollups/serialize.ts) and the sensor pages
// (src/sensors/serializer.ts).
import { createRequire } from 'node:module';
import type fastJsonStringify from 'fast-json-stringify';
import type { Schema } from 'fast-json-stringify';

const require = createRequire(import.meta.url);

/** A function that compiles every schema of `schemas` the first time it is called, and returns the same serialisers after. */
export function compiledOnFirstUse<Names extends string>(schemas: Record<Names, Schema>): () => Record<Names, (value: unknown) => string> {
  let compiled: Record<Names, (value: unknown) => string> | null = null;
  return () => {
    if (compiled) return compiled;
    const fastJson = require('fast-json-stringify') as typeof fastJsonStringify;
    const made = {} as Record<Names, (value: unknown) => string>;
    for (const name of Object.keys(schemas) as Names[]) made[name] = fastJson(schemas[name]);
    compiled = made;
    return made;
  };
}
