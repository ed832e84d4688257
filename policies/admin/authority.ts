// Who may call the admin API, and on what. The operator token may do everything; a tenant admin key only acts on
// objects of its own tenant and never on operator-only operations (creating tenants and admin keys, changing a
// tenant's plan or status, changing the capability catalogue). The rules are one table over the path, so every admin route,
// including ones added later, is covered in one place; a path the table does not know is operator-only.
import type { Request, Response, NextFunction, RequestHandler } from 'express';
import type { Knex } from 'knex';
import { noteCaller, sendProblem } from '../../common/http.js';
import { HashingBusy, secretChecker } from '../../common/secrets.js';
import { verifyTenantAdminKey } from './admin-key-store.js';
import { wrongCredential, type CredentialThrottle } from '../../common/credential-throttle.js';

export type AdminCaller = { kind: 'operator' } | { kind: 'tenant'; tenantId: string; keyId: string };

/**
 * One admin API operation: its method, its path under /admin/v1 and its body. The admin console names its actions
 * so.
 */
export interface AdminOperation {
  method: string;
  path: string;
  body?: unknown;
}

/** The tenant owning the object a path names; null when the object does not exist (the handler answers 404). */
export type Owner = { operatorOnly: true } | { operatorOnly: false; tenantId: string | null };

const OPERATOR_ONLY: Owner = { operatorOnly: true };
const ownedBy = (tenantId: string | null | undefined): Owner => ({ operatorOnly: false, tenantId: tenantId ?? null });

export async function ownerOf(knex: Knex, op: AdminOperation): Promise<Owner> {
  const [collection, id, sub] = op.path
    .split('/')
    .filter(Boolean)
    .map((s) => safeDecode(s));
  // The capability catalogue is read by every admin caller (a tenant's grants name its entries).
  if (!id && collection === 'capabilities' && op.method === 'GET') return ownedBy(null);
  if (!id) return OPERATOR_ONLY; // POST /tenants, and anything unknown
  const single = (table: string) =>
    knex(table)
      .where('id', id)
      .first('tenant_id')
      .then((r) => ownedBy(r?.tenant_id));
  switch (collection) {
    case 'tenants': {
      if (sub === 'admin-keys') return OPERATOR_ONLY;
      const body = (op.body ?? {}) as Record<string, unknown>;
      if (!sub && op.method === 'PATCH' && ('plan' in body || 'status' in body)) return OPERATOR_ONLY;
      return ownedBy(id);
    }
    case 'clients':
      return single('clients');
    case 'accounts':
      return single('accounts');
    case 'extensions':
      return single('extensions');
    default:
      return OPERATOR_ONLY;
  }
}

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** The tenant an operator's call is about, for the request log: the id after /tenants/, when the path has one. */
const tenantInPath = (req: Request) => {
  const [collection, id] = req.path.split('/').filter(Boolean);
  return collection === 'tenants' && id ? safeDecode(id) : undefined;
};

const bearer = (req: Request) => /^Bearer ([^\s]+)$/i.exec(req.get('authorization') ?? '')?.[1];

/** Finds who presents a credential: the operator, a live tenant admin key's tenant, or undefined for anything else. */
export function adminIdentifier(
  knex: Knex,
  adminToken: string,
): (presented: string) => Promise<AdminCaller | undefined> {
  const isOperatorToken = secretChecker(adminToken);
  return async (presented) => {
    if (isOperatorToken(presented)) return { kind: 'operator' };
    const tenantId = await verifyTenantAdminKey(knex, presented);
    return tenantId ? { kind: 'tenant', tenantId, keyId: presented.split('.', 1)[0]! } : undefined;
  };
}

/**
 * 401 invalid_token for anyone but the operator or a live tenant admin key; sets res.locals.adminCaller. A right
 * credential is answered whatever others sent from its address: it is checked first (a digest, microseconds), and only
 * a wrong one meets the per-address count, which answers it 429 rate_limited with retry-after past the budget.
 */
export function authenticateAdmin(knex: Knex, adminToken: string, throttle: CredentialThrottle): RequestHandler {
  const identify = adminIdentifier(knex, adminToken);
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req);
    let caller: AdminCaller | undefined;
    try {
      caller = token ? await identify(token) : undefined;
    } catch (err) {
      if (!(err instanceof HashingBusy)) throw err; // only a key still stored with scrypt is hashed (secrets.ts)
      return sendProblem(res, 'authorization_unavailable', {
        message: 'credential checks are busy',
        headers: { 'retry-after': String(err.retryAfterS) },
      });
    }
    if (!caller) {
      const waitS = token ? await wrongCredential(throttle, req.ip ?? 'unknown') : undefined;
      if (waitS !== undefined)
        return sendProblem(res, 'rate_limited', {
          message: 'too many wrong credentials from this address',
          headers: { 'retry-after': String(waitS) },
        });
      return sendProblem(res, 'invalid_token', { message: 'operator token or tenant admin key required' });
    }
    res.locals.adminCaller = caller;
    noteCaller(res, { tenant: caller.kind === 'operator' ? tenantInPath(req) : caller.tenantId });
    next();
  };
}

/** Why `caller` may not act on what `owner` describes, or undefined when it may. */
export function refusalFor(caller: AdminCaller, owner: Owner): string | undefined {
  if (caller.kind === 'operator') return undefined;
  if (owner.operatorOnly) return 'operator token required';
  if (owner.tenantId !== null && owner.tenantId !== caller.tenantId) return "outside this admin key's tenant";
  return undefined;
}

/** Why `caller` may not perform `op`, or undefined when it may. */
const refusalOf = async (knex: Knex, caller: AdminCaller, op: AdminOperation): Promise<string | undefined> =>
  caller.kind === 'operator' ? undefined : refusalFor(caller, await ownerOf(knex, op));

/** 403 forbidden when a tenant admin key reaches outside its tenant or for an operator-only operation. */
export function authorizeAdmin(knex: Knex): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const refusal = await refusalOf(knex, res.locals.adminCaller as AdminCaller, {
      method: req.method,
      path: req.path,
      body: req.body,
    });
    if (refusal) return sendProblem(res, 'forbidden', { message: refusal });
    next();
  };
}
