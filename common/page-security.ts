// Security headers shared by the server-rendered pages (the issuer's login and consent pages, the admin console):
// no external assets, one inline style sheet (and at most one inline script) allowed by its hash, never framed, never
// cached.
import { createHash } from 'node:crypto';
import type { Request } from 'express';

/**
 * Whether the browser reached the page over HTTPS, directly or through a TLS-terminating proxy that says so: the
 * `Secure` flag of the pages' cookies. Trusting the header is safe here: it can only make the sender's own cookie
 * stricter.
 */
export const overHttps = (req: Request): boolean =>
  req.secure || req.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https';

const hashSource = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The headers of a page whose only style is `style` and only script (if any) is `script`, both inline and allowed by
 * their hashes; `formActions` are origins a form post may go to besides 'self'.
 */
export function pageSecurityHeaders(
  style: string,
  script?: string,
): (formActions?: readonly string[]) => Record<string, string> {
  const scriptSrc = script ? `; script-src ${hashSource(script)}` : '';
  return (formActions = []) => ({
    'cache-control': 'no-store',
    'content-security-policy':
      `default-src 'none'; style-src ${hashSource(style)}${scriptSrc}; ` +
      `form-action ${["'self'", ...formActions].join(' ')}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  });
}
