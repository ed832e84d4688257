// Forwards an authorized call to the backend with the call context, and relays the answer.
import type { Request, Response } from 'express';
import type { Pool } from 'undici';
import { CONTEXT_HEADER, INTERNAL_SECRET_HEADER, encodeContext, type CallContext } from '../common/internal-context.js';

const FORWARDED_REQUEST_HEADERS = ['content-type', 'if-match', 'if-none-match'];
const RELAYED_RESPONSE_HEADERS = ['content-type', 'etag', 'location', 'retry-after'];
const BACKEND_TIMEOUT_MS = 5000;

export function backendProxy(backend: Pool, secret: string) {
  return async function forward(req: Request, res: Response, context: CallContext): Promise<void> {
    const headers: Record<string, string> = { [INTERNAL_SECRET_HEADER]: secret, [CONTEXT_HEADER]: encodeContext(context), 'x-request-id': context.requestId };
    for (const h of FORWARDED_REQUEST_HEADERS) {
      const v = req.get(h);
      if (v !== undefined) headers[h] = v;
    }
    const upstream = await backend.request({
      path: req.originalUrl,
      method: req.method as 'GET' | 'PUT' | 'DELETE',
      headers,
      body: req.method === 'PUT' ? (req.body as Buffer) : null,
      headersTimeout: BACKEND_TIMEOUT_MS,
      bodyTimeout: BACKEND_TIMEOUT_MS,
    });
    const body = Buffer.from(await upstream.body.arrayBuffer());
    res.status(upstream.statusCode);
    for (const h of RELAYED_RESPONSE_HEADERS) {
      const v = upstream.headers[h];
      if (typeof v === 'string') res.setHeader(h, v);
    }
    res.end(body);
  };
}
export type BackendProxy = ReturnType<typeof backendProxy>;
