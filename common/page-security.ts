// Security headers shared by the server-rendered pages (the issuer's login and consent pages, the admin console):
// no scripts, no external assets, one inline style sheet allowed by its hash, never framed, never cached.
import { createHash } from 'node:crypto';

/** The headers of a page whose only style is `style`; `formActions` are origins a form post may go to besides 'self'. */
export function pageSecurityHeaders(style: string): (formActions?: readonly string[]) => Record<string, string> {
  const styleHash = `'sha256-${createHash('sha256').update(style).digest('base64')}'`;
  return (formActions = []) => ({
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; style-src ${styleHash}; form-action ${["'self'", ...formActions].join(' ')}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  });
}
