// The decision endpoints' body reader, in place of express.json: their only caller is the gateway (checked before the
// body is read), which always sends uncompressed UTF-8 JSON with a Content-Length. body-parser's generality (charset
// decoding through iconv, inflating, its error objects through the error handler) costs every call and buys nothing
// here (docs/performance.md, fourteenth round). Refusals keep express.json's answers: 413 payload_too_large over the
// limit, 422 schema_invalid for a body that is not JSON or is encoded; a body of another media type is left unread, as
// express.json leaves it, for the endpoint's schema to refuse.
import type { RequestHandler } from 'express';
import { sendProblem } from '../common/http.js';

export function decisionBody(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    if (!req.is('application/json')) return next();
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity')
      return sendProblem(res, 'schema_invalid', { message: 'request body is not valid JSON' });
    if (Number(req.headers['content-length']) > limitBytes) return sendProblem(res, 'payload_too_large');
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) return void chunks.push(chunk);
      // The stream keeps flowing with nobody listening: the rest is read and dropped, and the connection stays usable
      // for the gateway's next call.
      req.off('data', onData).off('end', onEnd);
      sendProblem(res, 'payload_too_large');
    };
    const onEnd = () => {
      try {
        req.body = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
      } catch {
        return sendProblem(res, 'schema_invalid', { message: 'request body is not valid JSON' });
      }
      next();
    };
    req.on('data', onData).on('end', onEnd).on('error', next);
  };
}
