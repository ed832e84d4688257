// The gateway's filter chain for one API route, in order:
//   1. authenticate  — bearer token verified locally          → 401 invalid_token | 503 token_verification_unavailable
//   2. authorize     — one PDP decision, no allow-cache       → 403 deny code | 404 (folded) | 503 authorization_unavailable
//   3. rate limit    — tenant and account layers             → 429 rate_limited
//   4. forward       — backend call with the call context     → backend answer | 503 authorization_unavailable
// The request id is set before any of these, so every answer carries x-request-id.
import type { Request, Response } from 'express';
import { requestIdOf, sendProblem } from '../common/http.js';
import type { Logger } from '../common/log.js';
import { FOLDED_ON_PERSON_RESOURCES } from '../policies/codes.js';
import type { RouteSpec } from './routes.js';
import type { TokenVerifier } from './verify-token.js';
import type { PdpClient } from './pdp-client.js';
import type { RateLimiter } from './rate-limit.js';
import type { BackendProxy } from './proxy.js';

export interface PipelineDeps {
  verify: TokenVerifier;
  decide: PdpClient;
  limiter: RateLimiter;
  forward: BackendProxy;
  log: Logger;
}

const BEARER = /^Bearer +([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+) *$/i; // the scheme is case-insensitive (RFC 7235)
const PERSON_RESOURCES = new Set(['person', 'person_extension']);

export function routeHandler(route: RouteSpec, { verify, decide, limiter, forward, log }: PipelineDeps) {
  return async (req: Request, res: Response) => {
    const requestId = requestIdOf(res);

    const bearer = BEARER.exec(req.get('authorization') ?? '');
    if (!bearer) return sendProblem(res, 'invalid_token', { message: 'a bearer access token is required' });
    const verified = await verify(bearer[1]!);
    if (!verified.ok) {
      log.info({ requestId, reason: verified.reason, detail: verified.detail }, 'token rejected');
      if (verified.reason === 'invalid_token') return sendProblem(res, 'invalid_token');
      return sendProblem(res, 'token_verification_unavailable', { headers: { 'retry-after': String(verified.retryAfterS) } });
    }
    const claims = verified.claims;

    const personId = req.params.personId as string | undefined;
    const decision = await decide({ requestId, token: claims, capability: route.capability, resource: { type: route.resource, personId } });
    if ('undecidable' in decision) {
      log.warn({ requestId, detail: decision.detail }, 'authorization undecidable; failing closed');
      return sendProblem(res, 'authorization_unavailable');
    }
    if (!decision.allow) {
      log.info({ requestId, code: decision.code, check: decision.check }, 'denied');
      if (PERSON_RESOURCES.has(route.resource) && FOLDED_ON_PERSON_RESOURCES.has(decision.code)) return sendProblem(res, 'not_found');
      return sendProblem(res, decision.code);
    }

    const accountId = claims.actor_account_id!; // the PDP denies actor_unknown when absent
    const limit = await limiter.consume(claims.tenant_id, accountId, decision.rateLimit);
    if (!limit.allowed) return sendProblem(res, 'rate_limited', { headers: { 'retry-after': String(limit.retryAfterS) } });
    if (req.method === 'GET') res.setHeader('x-ratelimit-remaining', String(limit.remaining));

    try {
      await forward(req, res, {
        requestId,
        subjectType: decision.subjectType,
        subjectId: claims.sub,
        tenantId: claims.tenant_id,
        clientId: claims.client_id,
        actorAccountId: accountId,
        scopes: decision.effectiveScopes,
      });
    } catch (err) {
      log.warn({ requestId, err: (err as Error).message }, 'backend unreachable');
      res.removeHeader('x-ratelimit-remaining');
      sendProblem(res, 'authorization_unavailable', { message: 'the service is temporarily unavailable' });
    }
  };
}
