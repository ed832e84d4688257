// Forwards an authorized call to the backend with the call context, and relays the answer.
import type { Request, Response } from 'express';
import { CONTEXT_HEADER, INTERNAL_SECRET_HEADER, encodeContext, type CallContext } from '../common/internal-context.js';

const FORWARDED_REQUEST_HEADERS = ['content-type', 'if-match', 'if-none-match'];
const RELAYED_RESPONSE_HEADERS = ['content-type', 'etag', 'location', 'retry-after'];
const BACKEND_TIMEOUT_MS = 5000;

export function backendProxy(backendUrl: string, secret: string) {
  return async function forward(req: Request, res: Response, context: CallContext): Promise<void> {
    const headers: Record<string, string> = { [INTERNAL_SECRET_HEADER]: secret, [CONTEXT_HEADER]: encodeContext(context), 'x-request-id': context.requestId };
    for (const h of FORWARDED_REQUEST_HEADERS) {
      const v = req.get(h);
      if (v !== undefined) headers[h] = v;
    }
    const hasBody = req.method === 'PUT';
    const upstream = await fetch(`${backendUrl}${req.originalUrl}`, {
      method: req.method,
      headers,
      ...(hasBody && { body: new Uint8Array(req.body as Buffer) }),
      signal: AbortSignal.timeout(BACKEND_TIMEOUT_MS),
    });
    res.status(upstream.status);
    for (const h of RELAYED_RESPONSE_HEADERS) {
      const v = upstream.headers.get(h);
      if (v !== null) res.setHeader(h, v);
    }
    res.end(Buffer.from(await upstream.arrayBuffer()));
  };
}
export type BackendProxy = ReturnType<typeof backendProxy>;
