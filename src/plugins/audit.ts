// The token audit trail as a service: the read side the audit-events route uses. Events are
// written by the token repository, inside each change's transaction (src/tokens/repository.ts).
import fp from 'fastify-plugin';
import { createAuditRepository, type AuditRepository } from '../audit/repository.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** the token audit trail's read side (src/audit/) */
    auditTrail: AuditRepository;
  }
}

async function audit(app: App) {
  app.decorate('auditTrail', createAuditRepository(app.db));
}

export default fp(audit, { name: 'audit', dependencies: ['database'] });
