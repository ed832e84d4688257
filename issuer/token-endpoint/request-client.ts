// The client a token request names, before oidc-provider authenticates it: the form's client_id, or the HTTP Basic
// user name (RFC 6749 §2.3.1: form-encoded before base64). Used for per-client limits and CORS, never to authenticate.
import type { Request } from 'express';

export function namedClient(req: Request): string | undefined {
  const basic = /^basic\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
  if (basic) {
    const user = Buffer.from(basic, 'base64').toString('utf8').split(':', 1)[0];
    try {
      return user ? decodeURIComponent(user.replace(/\+/g, ' ')) : undefined;
    } catch {
      return undefined;
    }
  }
  return new URLSearchParams(typeof req.body === 'string' ? req.body : '').get('client_id') ?? undefined;
}
