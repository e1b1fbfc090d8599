// Which units a data request may read (src/data-surface/authorize.ts), as a service the
// token-auth hooks call once per request.
import fp from 'fastify-plugin';
import { createAccessControl, type AccessControl, type UnitScope } from '../data-surface/authorize.js';
import { notASessionMessage } from '../db/session.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    accessControl: AccessControl;
  }
  interface FastifyRequest {
    /** The units this data request may read, resolved once by the access control. */
    unitScope: UnitScope;
  }
}

async function accessControl(app: App) {
  app.decorate(
    'accessControl',
    createAccessControl(app.db, {
      sessionUrl: app.config.databaseSessionUrl,
      onListenerError: (error) =>
        app.log.warn({ err: error }, 'unit directory changes not heard; reading units from the database until listening again'),
      onNotASession: () =>
        app.log.error(
          notASessionMessage("the unit directory's notifications") + '; until then every request reads its units from the database',
        ),
    }),
  );
  app.addHook('onClose', async () => app.accessControl.close());
  app.decorateRequest('unitScope', null as never);
}

export default fp(accessControl, { name: 'access-control', dependencies: ['config', 'database'] });
