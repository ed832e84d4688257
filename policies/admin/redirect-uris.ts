// The redirect URIs an app may register (docs/decisions.md, "Redirect URIs"): https, or http on a loopback IP literal
// (127.0.0.0/8, [::1]) for a native app's loopback redirect (OAuth 2.1 §2.3.1, RFC 9700 §4.1, RFC 8252 §7.3); never
// localhost (RFC 8252 §8.3) nor a private-use scheme; no fragment (RFC 6749 §3.1.2), no user name or password, no
// wildcard (they are compared exactly, RFC 9700 §4.1.3). One rule for the admin API and the console, which also marks
// stored URIs it would refuse; the issuer keeps accepting what is stored, so an app registered before works until
// its redirect URIs are next changed.
import { BlockList, isIPv4 } from 'node:net';
import { z } from 'zod';
import { issueInWords } from './support.js';

const LOOPBACK_V4 = new BlockList();
LOOPBACK_V4.addSubnet('127.0.0.0', 8, 'ipv4');

/** True for a loopback IP literal as the URL parser writes a host: 127.x.y.z, or [::1]. */
const isLoopbackLiteral = (hostname: string) =>
  hostname === '[::1]' || (isIPv4(hostname) && LOOPBACK_V4.check(hostname, 'ipv4'));

/** Why `uri` may not be registered as a redirect URI, in words; undefined when it may. */
export function redirectUriProblem(uri: string): string | undefined {
  const url = URL.parse(uri);
  if (!url) return 'not an absolute URI (write it whole, as https://app.example/callback)';
  if (uri.includes('#')) return 'a redirect URI has no fragment (the part from #)';
  if (url.username || url.password) return 'a redirect URI carries no user name or password (the part before @)';
  if (uri.includes('*')) return 'redirect URIs are compared exactly, so * is no wildcard (list each URI)';
  if (url.hostname === 'localhost') return 'use 127.0.0.1 or [::1] instead of localhost';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:')
    return `the ${url.protocol.slice(0, -1)} scheme is not accepted (use https, or http on 127.0.0.1 or [::1])`;
  if (!isLoopbackLiteral(url.hostname)) return 'http is allowed only for 127.0.0.1 and [::1] (use https)';
  // The address as the issuer will compare it, character for character: 127.1 or [0::1] would be a second spelling.
  return uri.toLowerCase().startsWith(`http://${url.hostname}`)
    ? undefined
    : `write the loopback address in full, as http://${url.hostname}`;
}

/** An app's redirect URIs: 1 to 20, each one the rule accepts; a refusal names every refused URI, in words. */
export const REDIRECT_URIS = z
  .array(z.string())
  .min(1)
  .max(20)
  .superRefine((uris, ctx) => {
    for (const uri of uris) {
      const problem = redirectUriProblem(uri);
      if (problem) ctx.addIssue(issueInWords(`${uri}: ${problem}`));
    }
  });
