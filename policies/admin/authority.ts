// Who may call the admin API, and on what. The operator token may do everything; a tenant admin key only acts on
// objects of its own tenant and never on operator-only operations (creating tenants and admin keys, changing a
// tenant's plan or status, the capability catalogue). The rules are one table over the path, so every admin route,
// including ones added later, is covered in one place; a path the table does not know is operator-only.
import type { Request, Response, NextFunction, RequestHandler } from 'express';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { sameSecret } from '../../common/secrets.js';
import { verifyTenantAdminKey } from './admin-key-store.js';

export type AdminCaller = { kind: 'operator' } | { kind: 'tenant'; tenantId: string };

/** The tenant owning the object a path names; null when the object does not exist (the handler answers 404). */
type Owner = { operatorOnly: true } | { operatorOnly: false; tenantId: string | null };

const OPERATOR_ONLY: Owner = { operatorOnly: true };
const ownedBy = (tenantId: string | null | undefined): Owner => ({ operatorOnly: false, tenantId: tenantId ?? null });

async function ownerOf(knex: Knex, req: Request): Promise<Owner> {
  const [collection, id, sub] = req.path.split('/').filter(Boolean).map((s) => safeDecode(s));
  if (!id) return OPERATOR_ONLY; // POST /tenants, and anything unknown
  const single = (table: string) => knex(table).where('id', id).first('tenant_id').then((r) => ownedBy(r?.tenant_id));
  switch (collection) {
    case 'tenants': {
      if (sub === 'admin-keys') return OPERATOR_ONLY;
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!sub && req.method === 'PATCH' && ('plan' in body || 'status' in body)) return OPERATOR_ONLY;
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

const bearer = (req: Request) => /^Bearer ([^\s]+)$/i.exec(req.get('authorization') ?? '')?.[1];

/** 401 invalid_token for anyone but the operator or a live tenant admin key; sets res.locals.adminCaller. */
export function authenticateAdmin(knex: Knex, adminToken: string): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req);
    if (token && sameSecret(token, adminToken)) {
      res.locals.adminCaller = { kind: 'operator' } satisfies AdminCaller;
      return next();
    }
    const tenantId = token ? await verifyTenantAdminKey(knex, token) : undefined;
    if (!tenantId) return sendProblem(res, 'invalid_token', { message: 'operator token or tenant admin key required' });
    res.locals.adminCaller = { kind: 'tenant', tenantId } satisfies AdminCaller;
    next();
  };
}

/** 403 forbidden when a tenant admin key reaches outside its tenant or for an operator-only operation. */
export function authorizeAdmin(knex: Knex): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const caller = res.locals.adminCaller as AdminCaller;
    if (caller.kind === 'operator') return next();
    const owner = await ownerOf(knex, req);
    if (owner.operatorOnly) return sendProblem(res, 'forbidden', { message: 'operator token required' });
    if (owner.tenantId !== null && owner.tenantId !== caller.tenantId)
      return sendProblem(res, 'forbidden', { message: 'outside this admin key\'s tenant' });
    next();
  };
}
