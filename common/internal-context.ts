// What the gateway tells the backend about an authorized call, authenticated per request: an HMAC-SHA256 (keyed from
// INTERNAL_SECRET) over the context, the request id, the method and path, and an expiry a few seconds ahead. A header
// copied from one call is therefore useless for another request, path or subject, and soon for the same one.
// The PDP's decision endpoint still takes the shared secret header (it has no subject to bind).
import { createHmac, createSecretKey, hkdfSync, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Capability } from '../wire/decision.js';

export const INTERNAL_SECRET_HEADER = 'x-internal-secret';
export const CONTEXT_HEADER = 'x-svc-context';
export const CONTEXT_MAC_HEADER = 'x-svc-context-mac';
/** Long enough for the gateway-to-backend hop, short enough that a copied header soon stops working. */
export const CONTEXT_TTL_MS = 10_000;

export interface CallContext {
  requestId: string;
  subjectType: 'person' | 'service_account';
  subjectId: string;
  tenantId: string;
  clientId: string;
  actorAccountId: string;
  scopes: Capability[];
}

/** The request a context is bound to. */
export interface BoundRequest {
  requestId: string;
  method: string;
  /** Path with query, as the backend receives it. */
  path: string;
}

interface SignedContext extends CallContext {
  method: string;
  path: string;
  exp: number;
}

/**
 * A key of its own for context MACs, so the secret itself never travels to the backend. A KeyObject, made once: given
 * bytes, every createHmac makes one again, and on Node 24 its check of the argument throws and catches an exception
 * (14 % of the backend's CPU under load, docs/performance.md).
 */
const contextKey = (secret: string) =>
  createSecretKey(Buffer.from(hkdfSync('sha256', secret, '', 'gateway-to-backend call context', 32)));
const mac = (key: KeyObject, payload: string) => createHmac('sha256', key).update(payload).digest();

export function contextSigner(secret: string) {
  const key = contextKey(secret);
  return (context: CallContext, request: Omit<BoundRequest, 'requestId'>, now = Date.now()): Record<string, string> => {
    const signed: SignedContext = { ...context, method: request.method, path: request.path, exp: now + CONTEXT_TTL_MS };
    const payload = Buffer.from(JSON.stringify(signed)).toString('base64url');
    return { [CONTEXT_HEADER]: payload, [CONTEXT_MAC_HEADER]: mac(key, payload).toString('base64url') };
  };
}

/** The context of a call whose MAC is right, unexpired, and bound to this very request; otherwise null. */
export function contextVerifier(secret: string) {
  const key = contextKey(secret);
  return (
    headers: { context?: string | undefined; mac?: string | undefined },
    request: BoundRequest,
    now = Date.now(),
  ): CallContext | null => {
    if (!headers.context || !headers.mac) return null;
    const given = Buffer.from(headers.mac, 'base64url');
    const expected = mac(key, headers.context);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let signed: SignedContext;
    try {
      signed = JSON.parse(Buffer.from(headers.context, 'base64url').toString('utf8')) as SignedContext;
    } catch {
      return null;
    }
    const fresh = typeof signed.exp === 'number' && signed.exp > now && signed.exp <= now + CONTEXT_TTL_MS;
    const bound =
      signed.requestId === request.requestId && signed.method === request.method && signed.path === request.path;
    if (!fresh || !bound) return null;
    const { method: _m, path: _p, exp: _e, ...context } = signed;
    return context;
  };
}
