// The building blocks of the configuration's zod schema: how a variable's text becomes a value, and
// how a failed parse becomes the one `Invalid configuration: NAME ...` line (ConfigError).
import { z } from 'zod';
import { ConfigError, connectionUrlProblem } from './checks.js';

/** An unset or blank variable is undefined: its default applies. */
export const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

export const integerText = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

/** A PostgreSQL connection URL that node-postgres can parse, or unset. */
export const postgresUrlText = () =>
  optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .superRefine((value, ctx) => {
        const problem = connectionUrlProblem(value, 'pg');
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  );

/** The schema's (or a part's) values, or a ConfigError naming the first bad variable. */
export function parse<T>(schema: z.ZodType<T>, env: NodeJS.ProcessEnv): T {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  return parsed.data;
}
