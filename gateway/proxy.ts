// Forwards an authorized call to the route's upstream with a signed call context, and relays the answer.
// An upstream that does not answer, or refuses the call context, is 503 authorization_unavailable ("downstream data
// plane down", §7.2).
import type { RequestHandler } from 'express';
import type { Pool } from 'undici';
import { sendProblem } from '../common/http.js';
import type { Logger } from '../common/log.js';
import { contextSigner } from '../common/internal-context.js';
import { unrecordedHeaders } from '../common/tracing.js';
import { stateOf } from './plugins/plugin.js';

/**
 * Request headers the upstream reads, by method: a write's body type and preconditions (§4.7, §4.8). Reads get none,
 * so a conditional read is never answered 304, a status no read declares.
 */
const FORWARDED_REQUEST_HEADERS: Readonly<Record<string, readonly string[]>> = {
  PUT: ['content-type', 'if-match', 'if-none-match'],
  DELETE: ['if-match'],
};
/**
 * Relayed under the names the gateway's own answers use (Express writes `Content-Type`), so a backend's Problem and the
 * gateway's are the same bytes: a folded 404 and an absent record's 404 cannot be told apart by the head (§7.3).
 */
const RELAYED_RESPONSE_HEADERS = ['Content-Type', 'etag', 'location', 'retry-after'];

export function upstreamProxy(
  upstream: Pool,
  opts: { internalSecret: string; timeoutMs: number; log: Logger },
): RequestHandler {
  const sign = contextSigner(opts.internalSecret);
  return async (req, res) => {
    const { requestId, claims, allow, remaining } = stateOf(res);
    const context = {
      requestId,
      subjectType: allow!.subjectType,
      subjectId: claims!.sub,
      tenantId: claims!.tenant_id,
      clientId: claims!.client_id,
      actorAccountId: claims!.actor_account_id!,
      scopes: allow!.effectiveScopes,
    };
    const headers: Record<string, string> = {
      ...sign(context, { method: req.method, path: req.originalUrl }),
      'x-request-id': requestId,
      ...unrecordedHeaders(req),
    };
    for (const h of FORWARDED_REQUEST_HEADERS[req.method] ?? []) {
      const v = req.get(h);
      if (v !== undefined) headers[h] = v;
    }
    try {
      const answer = await upstream.request({
        path: req.originalUrl,
        method: req.method as 'GET' | 'HEAD' | 'PUT' | 'DELETE',
        headers,
        // A body the body-limit plugin read is a Buffer; without that plugin the request streams through.
        body: req.method !== 'PUT' ? null : Buffer.isBuffer(req.body) ? req.body : req,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      const body = Buffer.from(await answer.body.arrayBuffer());
      // The backend decides no authorization (the PDP did): its 401 or 403 can only refuse the gateway's call context,
      // a deployment fault (INTERNAL_SECRET differs, clocks apart), so the data plane is down for this call.
      if (answer.statusCode === 401 || answer.statusCode === 403) {
        opts.log.error({ requestId, status: answer.statusCode }, 'upstream refused the call context');
        return sendProblem(res, 'authorization_unavailable', { message: 'the service is temporarily unavailable' });
      }
      stateOf(res).forwarded = true;
      res.status(answer.statusCode);
      // Only successful reads carry it (§4): on a 404 it would tell a record the caller may not see (the PDP's 404,
      // without it) from an absent one of its own (the backend's).
      if (answer.statusCode < 300 && remaining !== undefined) res.setHeader('x-ratelimit-remaining', String(remaining));
      for (const h of RELAYED_RESPONSE_HEADERS) {
        const v = answer.headers[h.toLowerCase()];
        if (typeof v === 'string') res.setHeader(h, v);
      }
      // Where Express's own answers put it (before `date`), for the same bytes as the gateway's Problems.
      if (body.length > 0) res.setHeader('Content-Length', body.length);
      res.end(body);
    } catch (err) {
      opts.log.warn({ requestId, err: (err as Error).message }, 'upstream unreachable');
      sendProblem(res, 'authorization_unavailable', { message: 'the service is temporarily unavailable' });
    }
  };
}
