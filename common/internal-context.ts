// What the gateway tells the backend about an authorized call. The backend trusts it only with the shared secret.
import { sameSecret } from './secrets.js';
import type { Capability } from '../policies/decision.js';

export const INTERNAL_SECRET_HEADER = 'x-internal-secret';
export const CONTEXT_HEADER = 'x-svc-context';

export interface CallContext {
  requestId: string;
  subjectType: 'person' | 'service_account';
  subjectId: string;
  tenantId: string;
  clientId: string;
  actorAccountId: string;
  scopes: Capability[];
}

export const encodeContext = (c: CallContext) => Buffer.from(JSON.stringify(c)).toString('base64url');

/** The context of a call that presented the right secret, or null. */
export function decodeContext(headers: { secret?: string | undefined; context?: string | undefined }, secret: string): CallContext | null {
  if (!headers.secret || !headers.context || !sameSecret(headers.secret, secret)) return null;
  try {
    return JSON.parse(Buffer.from(headers.context, 'base64url').toString('utf8')) as CallContext;
  } catch {
    return null;
  }
}
