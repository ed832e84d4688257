// The token endpoint's own limit (contract §4.1, §8 rule 1), separate from the API layers: tokens issued per client,
// and failed attempts per (source address, named client) and, with a higher budget, per source address. A request is
// refused (429) when any of its three windows is spent. What counts: a success counts against the client, a failure
// against the address twice (with that client, and in all), so nobody can spend a client's budget by sending its id
// with a wrong secret, and failures naming junk clients do not close the endpoint for every other app sharing the
// address (a proxy's) until the higher budget is spent. The address is `req.ip`: the connecting peer, or the
// X-Forwarded-For hop that TRUST_PROXY says to believe.
// When it counts (issue 32): a request is presumed to succeed, so its client's point is taken in the same Redis round
// trip that reads the two failure windows (auto-pipelined: one socket write, one reply), and a success needs nothing
// more. A failure, known when the answer is, gives that point back and is charged to the address and the pair, in a
// second round trip only failures pay; so is a request refused here. A client at its limit is refused by the point it
// could not take.
import type { RequestHandler } from 'express';
import type { LimiterStore } from '../../common/rate-limit-store.js';
import type { RateLimitWindow } from '../../wire/decision.js';
import { RateLimiterRes } from 'rate-limiter-flexible';
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
  /** The client's point for this request; the wait when the client had none left (rate-limiter-flexible rejects). */
  const takeClientPoint = (clientId: string) =>
    perClient.consume(clientId).then(
      () => undefined,
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return rejection.msBeforeNext;
        throw rejection;
      },
    );
  // After the answer (or a refusal): a store failure here must not touch it; over the limit shows on the next request.
  const quietly = (work: Promise<unknown>) => void work.catch(() => undefined);

  return async (req, res, next) => {
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const clientId = namedClient(req);
    const pair = `${address} ${clientId ?? ''}`;
    // Issued in one turn of the event loop, so they go out in one write; the address's wait is reported first.
    const [addressWait, pairWait, clientWait] = await Promise.all([
      spent(perAddress, address),
      spent(perPair, pair),
      clientId ? takeClientPoint(clientId) : undefined,
    ]);
    const tookClientPoint = clientId !== undefined && clientWait === undefined;
    const giveBack = () => tookClientPoint && quietly(perClient.reward(clientId));
    const waitMs = addressWait ?? pairWait ?? clientWait;
    if (waitMs !== undefined) {
      giveBack(); // a refusal is neither a success nor a failure: not counted
      onRefused();
      return sendTokenRateLimited(res, retryAfterSeconds(waitMs));
    }
    res.on('close', () => {
      // A success is any 2xx: a token or a revocation (200), a pushed request (201).
      if (res.writableFinished && res.statusCode >= 200 && res.statusCode < 300 && clientId) return;
      giveBack();
      // An answer never sent (the client went away) is not a failure either.
      if (!res.writableFinished) return;
      quietly(perPair.consume(pair));
      quietly(perAddress.consume(address));
    });
    next();
  };
}
