// `app.config`: the validated configuration (src/config.ts), what the other plugins and routes read
// instead of the environment.
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
  }
}

export interface ConfigOptions {
  config: Config;
}

async function config(app: App, options: ConfigOptions) {
  app.decorate('config', options.config);
}

export default fp(config, { name: 'config' });
