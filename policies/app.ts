// Policies service: the decision endpoint the gateway calls on every request, and the admin API.
import type { Telemetry } from '../common/telemetry.js';
import express from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { errorHandler, noteCaller, notFound, requestId, sendProblem } from '../common/http.js';
import { INTERNAL_SECRET_HEADER } from '../common/internal-context.js';
import { jsonInputGuard } from '../common/json-input.js';
import { secretChecker } from '../common/secrets.js';
import type { Logger } from '../common/log.js';
import { CAPABILITIES, DECISION_PATH, RESOURCE_TYPES, type DecisionInput } from './decision.js';
import { evaluate } from './evaluate.js';
import { knexPolicyStore } from './store.js';
import type { DecisionLog } from './decision-log.js';
import { authenticateAdmin, authorizeAdmin, type AdminCaller } from './admin/authority.js';
import { auditedChanges, scopedKnex } from './admin/audit.js';
import { auditTrailRouter } from './admin/audit-trail.js';
import { MAX_BODY_DEPTH } from './admin/support.js';
import { tenantsRouter } from './admin/tenants.js';
import { personsRouter } from './admin/persons.js';
import { clientsRouter } from './admin/clients.js';
import { grantsRouter } from './admin/grants.js';
import { extensionsRouter } from './admin/extensions.js';
import { accountsRouter } from './admin/accounts.js';
import { adminKeysRouter } from './admin/admin-keys.js';
import { capabilitiesRouter } from './admin/capabilities.js';
import { clientSecretsRouter } from './admin/client-secrets.js';
import { observabilityRouter } from './admin/observability.js';
import { exportRouter } from './admin/export.js';
import { CONSOLE_PATH } from './console/pages.js';
import { consoleRouter } from './console/router.js';
import type { CredentialThrottle } from '../common/credential-throttle.js';

const DecisionRequest = z.object({
  requestId: z.string().min(1).max(128),
  token: z.object({
    sub: z.string(), client_id: z.string(), tenant_id: z.string(), profile: z.string(), scope: z.string(),
    actor_account_id: z.string().optional(), actor_epoch: z.number().int().optional(), sid: z.string().optional(),
  }),
  capability: z.enum(CAPABILITIES),
  resource: z.object({ type: z.enum(RESOURCE_TYPES), personId: z.string().optional() }),
});

export interface PoliciesDeps {
  knex: Knex;
  adminToken: string;
  /** Shared with the gateway, the decision endpoint's only caller. */
  internalSecret: string;
  log: Logger;
  decisionLog: DecisionLog;
  /** Counts decisions by outcome and deny code. */
  telemetry: Pick<Telemetry, 'decisions' | 'adminChanges'>;
  /** Express "trust proxy" (TRUST_PROXY): which X-Forwarded-For hop is the admin's address (throttle, audit trail). */
  trustProxy?: boolean | number | string;
  /** Wrong admin credentials per address (admin API bearers and console sign-ins share it). */
  adminThrottle: CredentialThrottle;
}

export function createPoliciesApp({ knex, adminToken, internalSecret, log, decisionLog, telemetry, trustProxy = false, adminThrottle }: PoliciesDeps): express.Express {
  const store = knexPolicyStore(knex);
  const isInternalSecret = secretChecker(internalSecret);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', trustProxy);
  app.use(requestId);

  // The caller is checked before its body is read: only the gateway's requests are parsed.
  const fromGateway: express.RequestHandler = (req, res, next) => {
    const secret = req.get(INTERNAL_SECRET_HEADER);
    if (!secret || !isInternalSecret(secret)) return sendProblem(res, 'forbidden', { message: 'internal service' });
    next();
  };
  app.post(DECISION_PATH, fromGateway, express.json({ limit: '16kb' }), async (req, res) => {
    const parsed = DecisionRequest.safeParse(req.body);
    // Only the gateway calls this; a malformed request is its bug, and it fails closed on any non-200.
    if (!parsed.success) return sendProblem(res, 'schema_invalid', { message: 'malformed decision request' });
    const input: DecisionInput = parsed.data;
    noteCaller(res, { tenant: input.token.tenant_id, client: input.token.client_id });
    const decision = evaluate(input, await store.facts(input));
    const logged = {
      request_id: input.requestId, tenant_id: input.token.tenant_id, client_id: input.token.client_id,
      subject: input.token.sub, capability: input.capability, allow: decision.allow,
      code: decision.allow ? null : decision.code, check_name: decision.allow ? 'allow' : decision.check,
    };
    decisionLog.record(logged);
    telemetry.decisions.inc({ outcome: decision.allow ? 'allow' : 'deny', code: logged.code ?? '' });
    // The log line speaks the request lines' vocabulary (requestId, tenant, client), not the table's columns.
    log.debug({
      requestId: input.requestId, tenant: input.token.tenant_id, client: input.token.client_id, subject: input.token.sub,
      capability: input.capability, allow: decision.allow, code: logged.code, check: logged.check_name,
    }, 'decision');
    res.json(decision);
  });

  // Every admin change runs in one transaction with its audit entry (policies/admin/audit.ts); the operations query
  // through `db`, which joins that transaction.
  const db = scopedKnex(knex);
  const countChange = (action: string) => telemetry.adminChanges.inc({ action });
  const admin = express.Router();
  admin.use(
    authenticateAdmin(knex, adminToken, adminThrottle), express.json({ limit: '64kb' }), authorizeAdmin(knex), jsonInputGuard(MAX_BODY_DEPTH),
    auditedChanges(knex, log, (res) => res.locals.adminCaller as AdminCaller, countChange),
  );
  admin.use(
    tenantsRouter(db), adminKeysRouter(db), personsRouter(db), clientsRouter(db), clientSecretsRouter(db),
    grantsRouter(db), accountsRouter(db), capabilitiesRouter(db), observabilityRouter(db), extensionsRouter(db),
    exportRouter(knex, log), auditTrailRouter(knex),
  );
  app.use('/admin/v1', admin);
  app.use(CONSOLE_PATH, consoleRouter({ knex, adminToken, log, countChange, throttle: adminThrottle }));

  app.use(notFound);
  app.use(errorHandler(log));
  return app;
}
