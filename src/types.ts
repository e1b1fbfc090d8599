// The Fastify instance type every plugin and route is written against (zod type provider). What a
// plugin decorates the instance or requests with is declared next to it, in its own file (Fastify's
// module augmentation of 'fastify'), so this file imports none of them.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;
