// oidc-provider's name for the route a request matched (token, revocation, cors.token, discovery, …), for the
// middleware that acts on some of its routes only.
import type { KoaContextWithOIDC } from 'oidc-provider';

/** The route name, when the request matched one of oidc-provider's routes. */
export const routeOf = (ctx: KoaContextWithOIDC): string | undefined =>
  (ctx as { oidc?: { route?: string } }).oidc?.route;
