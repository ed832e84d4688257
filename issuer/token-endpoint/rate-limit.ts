// The token endpoint's own limit (contract §4.1, §8 rule 1), separate from the API layers: tokens issued per client,
// and failed attempts per (source address, named client) and, with a higher budget, per source address. A request is
// refused (429) when any of its three windows is spent. Counting happens when the answer is known: a success counts
// against the client, a failure against the address twice (with that client, and in all), so nobody can spend a
// client's budget by sending its id with a wrong secret, and failures naming junk clients do not close the endpoint
// for every other app sharing the address (a proxy's) until the higher budget is spent. The address is `req.ip`:
// the connecting peer, or the X-Forwarded-For hop that TRUST_PROXY says to believe.
import type { RequestHandler } from 'express';
import type { LimiterStore } from '../../common/rate-limit-store.js';
import type { RateLimitWindow } from '../../wire/decision.js';
import { retryAfterSeconds } from '../../common/rate-limit-store.js';
import { sendTokenRateLimited } from './errors.js';
import { namedClient } from './request-client.js';

export interface TokenRateLimits {
  perClient: RateLimitWindow;
  /** Failures per (address, named client). */
  perAddressAndClient: RateLimitWindow;
  /** Failures per address, whatever the client. */
  perAddress: RateLimitWindow;
}

/**
 * Runs after the body is read (express.text) and before everything else on the token route. `scope` names the
 * counters (the issuer URL), so issuers sharing a Redis count together only when they are the same issuer.
 */
export function tokenRateLimit(
  store: LimiterStore,
  limits: TokenRateLimits,
  scope: string,
  onRefused: () => void,
): RequestHandler {
  const perClient = store.limiter(`token-client:${scope}`, limits.perClient);
  const perPair = store.limiter(`token-address-client:${scope}`, limits.perAddressAndClient);
  const perAddress = store.limiter(`token-address:${scope}`, limits.perAddress);
  const spent = async (limiter: typeof perClient, key: string) => {
    const state = await limiter.get(key);
    return state && state.remainingPoints <= 0 ? state.msBeforeNext : undefined;
  };

  return async (req, res, next) => {
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const clientId = namedClient(req);
    const pair = `${address} ${clientId ?? ''}`;
    // The windows are read at once (one Redis round trip with auto-pipelining); the address's are reported first.
    const [addressWait, pairWait, clientWait] = await Promise.all([
      spent(perAddress, address),
      spent(perPair, pair),
      clientId ? spent(perClient, clientId) : undefined,
    ]);
    const waitMs = addressWait ?? pairWait ?? clientWait;
    if (waitMs !== undefined) {
      onRefused();
      return sendTokenRateLimited(res, retryAfterSeconds(waitMs));
    }
    res.on('finish', () => {
      // Over the limit is reported on the next request; a store failure here must not touch this answer.
      const charge = (limiter: typeof perClient, key: string) => void limiter.consume(key).catch(() => undefined);
      if (res.statusCode === 200 && clientId) return charge(perClient, clientId);
      charge(perPair, pair);
      charge(perAddress, address);
    });
    next();
  };
}
