// The token endpoint's own limit (contract §4.1, §8 rule 1), separate from the API layers: tokens issued per client,
// and failed attempts per source address. A request is refused (429) when its address or the client it names has
// spent its window. Counting happens when the answer is known: a success counts against the client, a failure against
// the address, so nobody can spend a client's budget by sending its id with a wrong secret.
import type { RequestHandler } from 'express';
import type { LimiterStore, Window } from '../common/rate-limit-store.js';
import { retryAfterSeconds } from '../common/rate-limit-store.js';
import { sendTokenRateLimited } from './token-errors.js';
import { namedClient } from './token-request-client.js';

export interface TokenRateLimits {
  perClient: Window;
  perAddress: Window;
}

/**
 * Runs after the body is read (express.text) and before everything else on the token route. `scope` names the
 * counters (the issuer URL), so issuers sharing a Redis count together only when they are the same issuer.
 */
export function tokenRateLimit(store: LimiterStore, limits: TokenRateLimits, scope: string, onRefused: () => void): RequestHandler {
  const perClient = store.limiter(`token-client:${scope}`, limits.perClient);
  const perAddress = store.limiter(`token-address:${scope}`, limits.perAddress);
  const spent = async (limiter: typeof perClient, key: string) => {
    const state = await limiter.get(key);
    return state && state.remainingPoints <= 0 ? state.msBeforeNext : undefined;
  };

  return async (req, res, next) => {
    const address = req.socket.remoteAddress ?? 'unknown';
    const clientId = namedClient(req);
    // Both windows read at once (one Redis round trip with auto-pipelining); the address is reported first.
    const [addressWait, clientWait] = await Promise.all([spent(perAddress, address), clientId ? spent(perClient, clientId) : undefined]);
    const waitMs = addressWait ?? clientWait;
    if (waitMs !== undefined) {
      onRefused();
      return sendTokenRateLimited(res, retryAfterSeconds(waitMs));
    }
    res.on('finish', () => {
      const [limiter, key] = res.statusCode === 200 && clientId ? [perClient, clientId] : [perAddress, address];
      // Over the limit is reported on the next request; a store failure here must not touch this answer.
      limiter.consume(key).catch(() => undefined);
    });
    next();
  };
}
