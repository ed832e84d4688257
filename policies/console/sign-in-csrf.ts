// The sign-in form's CSRF token without a stored session (issue 20: every anonymous visit of the sign-in page stored a
// session, and 10,050 visits evicted the operator's). A signed double-submit cookie: the browser holds the token and
// this console's MAC of it; the form carries the token; a POST is accepted when both agree and the MAC is ours, so a
// cookie planted from elsewhere is worth nothing. The key is derived from ADMIN_TOKEN, which every replica shares.
import { hkdfSync, randomBytes } from 'node:crypto';
import { sealer } from '../../common/sealed-values.js';

export const SIGN_IN_COOKIE = 'console_sign_in';

export interface SignInCsrf {
  /** A new token for the form, and the cookie value that vouches for it. */
  issue(): { token: string; cookie: string };
  /** The token the cookie vouches for, when the cookie is one this console signed. */
  tokenOf(cookie: string | undefined): string | undefined;
}

export function signInCsrf(secret: string): SignInCsrf {
  const sealed = sealer(
    Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'admin console sign-in csrf', 32)),
    'console sign-in csrf',
  );
  return {
    issue() {
      const token = randomBytes(24).toString('base64url');
      return { token, cookie: sealed.seal(token) };
    },
    tokenOf: (cookie) => sealed.open(cookie),
  };
}
