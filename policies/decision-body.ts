// The decision endpoints' body reader, in place of express.json: their only caller is the gateway (checked before the
// body is read), which always sends uncompressed UTF-8 JSON with a Content-Length. body-parser's generality (charset
// decoding through iconv, inflating) costs every call and buys nothing here (docs/performance.md, fourteenth round).
// raw-body (body-parser's own reader) reads the bytes up to the limit; its refusals go to the error handler as
// express.json's do (413 payload_too_large). A body that is not JSON, or is encoded, is 422 schema_invalid; one of
// another media type is left unread, as express.json leaves it, for the endpoint's schema to refuse.
import type { RequestHandler } from 'express';
import getRawBody from 'raw-body';
import { BODY_NOT_JSON, sendProblem } from '../common/http.js';

export function decisionBody(limitBytes: number): RequestHandler {
  return async (req, res, next) => {
    if (!req.is('application/json')) return next();
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity')
      return sendProblem(res, 'schema_invalid', { message: BODY_NOT_JSON });
    let bytes: Buffer;
    try {
      bytes = await getRawBody(req, { length: req.headers['content-length'], limit: limitBytes });
    } catch (err) {
      return next(err);
    }
    try {
      req.body = JSON.parse(bytes.toString('utf8'));
    } catch {
      return sendProblem(res, 'schema_invalid', { message: BODY_NOT_JSON });
    }
    next();
  };
}
