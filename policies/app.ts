// Policies service: the decision endpoints the gateway calls for every request (policies/decision-endpoint.ts), the
// admin API and the console.
import type { Telemetry } from '../common/telemetry.js';
import express from 'express';
import type { Knex } from 'knex';
import { errorHandler, notFound, requestId, sendProblem } from '../common/http.js';
import { INTERNAL_SECRET_HEADER } from '../common/internal-context.js';
import { jsonInputGuard } from '../common/json-input.js';
import { secretChecker } from '../common/secrets.js';
import type { Logger } from '../common/log.js';
import {
  DECISION_BATCH_PATH,
  DECISION_PATH,
  MAX_DECISION_BODY_BYTES,
  MAX_DECISIONS_PER_CALL,
} from '../wire/decision.js';
import { decisionEndpoints } from './decision-endpoint.js';
import { decisionBody } from './decision-body.js';
import { knexPolicyStore } from './store.js';
import type { RevisionFeed } from '../common/revision-feed.js';
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
import { tenantExportRouter } from './admin/tenant-export.js';
import { CONSOLE_PATH } from './console/pages.js';
import { consoleRouter } from './console/router.js';
import type { CredentialThrottle } from '../common/credential-throttle.js';

export interface PoliciesDeps {
  knex: Knex;
  adminToken: string;
  /** Shared with the gateway, the decision endpoint's only caller. */
  internalSecret: string;
  log: Logger;
  decisionLog: DecisionLog;
  /** Counts decisions by outcome and deny code. */
  telemetry: Pick<Telemetry, 'decisions' | 'adminChanges' | 'auditVerifications'>;
  /** Express "trust proxy" (TRUST_PROXY): which X-Forwarded-For hop is the admin's address (throttle, audit trail). */
  trustProxy?: boolean | number | string;
  /** Wrong admin credentials per address (admin API bearers and console sign-ins share it). */
  adminThrottle: CredentialThrottle;
  /** The issuer's public URL (AUTH_URL): the console shows its token endpoint. */
  authUrl: string;
  /** Whether the issuer offers client_credentials (ISSUER_ENABLE_CLIENT_CREDENTIALS): the console says so. */
  clientCredentials: boolean;
  /** Decision facts kept in memory at most (PDP_FACT_CACHE_ENTRIES); unset = the documented default. */
  maxFacts?: number;
  /** The revision feed the decisions' facts are kept current by (common/revision-feed.ts). */
  revisions?: RevisionFeed | undefined;
}

export function createPoliciesApp({
  knex,
  adminToken,
  internalSecret,
  log,
  decisionLog,
  telemetry,
  trustProxy = false,
  adminThrottle,
  authUrl,
  clientCredentials,
  maxFacts,
  revisions,
}: PoliciesDeps): express.Express {
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
  const store = knexPolicyStore(knex, { ...(maxFacts !== undefined && { maxFacts }), feed: revisions });
  const decisions = decisionEndpoints({ store, log, decisionLog, telemetry });
  app.post(DECISION_PATH, fromGateway, decisionBody(MAX_DECISION_BODY_BYTES), decisions.single);
  app.post(
    DECISION_BATCH_PATH,
    fromGateway,
    decisionBody(MAX_DECISION_BODY_BYTES * MAX_DECISIONS_PER_CALL),
    decisions.batch,
  );

  // Every admin change runs in one transaction with its audit entry (policies/admin/audit.ts); the operations query
  // through `db`, which joins that transaction.
  const db = scopedKnex(knex);
  const countChange = (action: string) => telemetry.adminChanges.inc({ action });
  const admin = express.Router();
  admin.use(
    authenticateAdmin(knex, adminToken, adminThrottle),
    // No admin path ends with a slash: `/tenants/` names a tenant with an empty id, never the list (Express's loose
    // matching would answer it as GET /tenants), so it is 404 as any unknown path.
    (req, res, next) => (req.path.length > 1 && req.path.endsWith('/') ? notFound(req, res, next) : next()),
    express.json({ limit: '64kb' }),
    authorizeAdmin(knex),
    jsonInputGuard(MAX_BODY_DEPTH),
    auditedChanges(knex, log, (res) => res.locals.adminCaller as AdminCaller, countChange),
  );
  admin.use(
    tenantsRouter(db),
    adminKeysRouter(db),
    personsRouter(db),
    clientsRouter(db),
    clientSecretsRouter(db),
    grantsRouter(db),
    accountsRouter(db),
    capabilitiesRouter(db),
    observabilityRouter(db),
    extensionsRouter(db),
    exportRouter(knex, log),
    tenantExportRouter(knex, log),
    auditTrailRouter(knex, (result) => telemetry.auditVerifications.inc({ result })),
  );
  app.use('/admin/v1', admin);
  app.use(
    CONSOLE_PATH,
    consoleRouter({ knex, adminToken, log, countChange, throttle: adminThrottle, authUrl, clientCredentials }),
  );

  app.use(notFound);
  app.use(errorHandler(log));
  return app;
}
