// `app.clock`: the time every plugin and route reads, injected so tests move time instead of sleeping.
import fp from 'fastify-plugin';
import { type Clock, systemClock } from '../time.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    clock: Clock;
  }
}

export interface ClockOptions {
  clock?: Clock | undefined;
}

async function clock(app: App, options: ClockOptions) {
  app.decorate('clock', options.clock ?? systemClock);
}

export default fp(clock, { name: 'clock' });
