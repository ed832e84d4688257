// HTTP plumbing every service shares: listening, request ids, Problem responses, JSON body errors.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type { Request, Response, NextFunction, RequestHandler, ErrorRequestHandler } from 'express';
import { STATUS_OF, type ApiErrorCode } from '../wire/codes.js';
import type { Refusal } from '../wire/outcome.js';
import type { Logger } from './log.js';

export interface Listening {
  url: string;
  port: number;
  /** Graceful: stops accepting, lets requests in flight finish (up to the deadline), then closes every connection. */
  close(deadlineMs?: number): Promise<void>;
}

const SHUTDOWN_DEADLINE_MS = 10_000;
/**
 * When the process stops on a signal, how long a keep-alive connection that is idle at that moment stays open: a
 * request a client already sent on it (its bytes not yet read) is then answered instead of cut. Closing a listener
 * for any other reason (tests, a restart in process) closes idle connections at once.
 */
const SIGNAL_IDLE_GRACE_MS = 1000;
let stoppingOnSignal = false;
/** Called once the process is stopping on SIGTERM/SIGINT (closeOnSignal): closing listeners use the idle grace. */
export const markStoppingOnSignal = (): void => void (stoppingOnSignal = true);

/**
 * Stops accepting connections at once and waits for the requests in flight. Every answer from then on carries
 * `connection: close`, so clients reconnect elsewhere instead of sending into a closing server; connections idle at
 * the start are closed after the grace (none without a signal), and any that fall idle later as they do. What is
 * still open at the deadline is cut.
 */
async function drain(server: http.Server, deadlineMs: number): Promise<void> {
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) =>
    res.setHeader('connection', 'close'),
  );
  // net.Server's close stops accepting without http.Server's immediate close of idle keep-alive connections.
  const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
  let idleSweep: NodeJS.Timeout | undefined;
  const sweepIdle = () => {
    server.closeIdleConnections();
    idleSweep = setInterval(() => server.closeIdleConnections(), 25);
  };
  const grace = stoppingOnSignal
    ? setTimeout(sweepIdle, Math.min(SIGNAL_IDLE_GRACE_MS, deadlineMs))
    : (sweepIdle(), undefined);
  const deadline = setTimeout(() => server.closeAllConnections(), deadlineMs);
  try {
    await closed;
  } finally {
    clearTimeout(grace);
    clearInterval(idleSweep);
    clearTimeout(deadline);
  }
}

/** A port that cannot be had: reported to the operator as one line, not a stack trace. */
export class ListenError extends Error {}

/** How a request Node's parser refused is answered: status line, content type and body for its request id. */
export type ParserRefusal = (
  err: NodeJS.ErrnoException,
  requestId: string,
) => { status: number; reason: string; contentType: string; body: string };

export interface ListenOptions {
  /** The largest request head Node's parser accepts (its default: 16 KiB). */
  maxHeaderSize?: number;
  /** The answer to a request the parser refuses: the API's Problem unless given (the issuer answers a TokenError). */
  parserRefusal?: ParserRefusal;
}

/**
 * Listens on host:port (0 = any free port) and later attaches `handler`, so a service can learn its URL first.
 * `setting` names where the port came from, for the one line an operator reads when it cannot be had.
 */
export async function listen(
  port: number,
  host = '127.0.0.1',
  setting = 'the port',
  { maxHeaderSize, parserRefusal = problemRefusal }: ListenOptions = {},
): Promise<Listening & { server: http.Server }> {
  const server = http.createServer(maxHeaderSize === undefined ? {} : { maxHeaderSize });
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError(parserRefusal));
  // An expectation other than 100-continue is ignored and the request answered as any other (RFC 9110 §10.1.1 allows
  // it), rather than Node's bare 417 with no request id and no error code.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' || err.code === 'EACCES'
          ? new ListenError(
              `${setting}=${port}: cannot listen on ${host}:${port}: ` +
                (err.code === 'EADDRINUSE'
                  ? 'the port is already in use: stop what holds it or choose another port'
                  : 'permission denied: choose a port above 1023 or run with the right'),
            )
          : err,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://${host}:${actual}`,
    close: (deadlineMs = SHUTDOWN_DEADLINE_MS) => drain(server, deadlineMs),
  };
}

export const REQUEST_ID_HEADER = 'x-request-id';

/** Problems for what Node's parser refuses before any handler runs; each still carries x-request-id. */
const PARSER_ANSWERS: Record<string, { status: number; reason: string; error: ApiErrorCode }> = {
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', error: 'payload_too_large' },
};
const BAD_REQUEST = { status: 400, reason: 'Bad Request', error: 'not_found' as ApiErrorCode };

/** The API's answer to a request the parser refused: a Problem whose requestId is the response's x-request-id. */
const problemRefusal: ParserRefusal = (err, requestId) => {
  const { status, reason, error } = PARSER_ANSWERS[err.code ?? ''] ?? BAD_REQUEST;
  return { status, reason, contentType: 'application/problem+json', body: JSON.stringify({ error, requestId }) };
};

/**
 * Node's own answer to a request it cannot parse (oversized headers, a malformed request line) is a bare 400/431;
 * this one is `refusal`'s, with a request id, then the connection closes.
 */
const answerClientError =
  (refusal: ParserRefusal) =>
  (err: NodeJS.ErrnoException, socket: Duplex): void => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy(); // nobody left to answer
    const id = randomUUID();
    const { status, reason, contentType, body } = refusal(err, id);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n${REQUEST_ID_HEADER}: ${id}\r\ncontent-type: ${contentType}\r\n` +
        `cache-control: no-store\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
/**
 * PostgreSQL SQLSTATEs for text the caller sent that cannot be stored: 22021 bad byte sequence, 22P05 untranslatable.
 */
const CLIENT_DATA_ERRORS = new Set(['22021', '22P05']);
/** A database error caused by text the caller sent that PostgreSQL cannot store (a NUL character, bad encoding). */
export const isClientDataError = (err: unknown): boolean =>
  CLIENT_DATA_ERRORS.has((err as { code?: string } | undefined)?.code ?? '');
/**
 * A write that names a row another request deleted meanwhile (23503 foreign_key_violation: an app deleted while a
 * grant, extension or record for it was being written): what it names does not exist.
 */
const isVanishedReference = (err: unknown): boolean => (err as { code?: string } | undefined)?.code === '23503';
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Every response carries x-request-id. A well-formed id from the caller is kept (unless `trustClient` is off), because
 * it is the idempotency key for metering retries (§1 rule 6); anything else is replaced by a fresh UUID.
 */
export const requestIdHandler =
  ({ trustClient }: { trustClient: boolean }): RequestHandler =>
  (req, res, next) => {
    const given = trustClient ? req.get(REQUEST_ID_HEADER) : undefined;
    const id = given && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.locals.requestIdFromCaller = id === given;
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
export const requestId = requestIdHandler({ trustClient: true });

export const requestIdOf = (res: Response): string => res.locals.requestId as string;

/** Whom a request acts for, as its request log line reports it (never a credential: ids only). */
export interface Caller {
  tenant?: string | undefined;
  client?: string | undefined;
}

/** Records what a service learnt about the caller (token claims, signed context, admin key, interaction). */
export function noteCaller(res: http.ServerResponse, caller: Caller): void {
  const withLocals = res as http.ServerResponse & { locals?: Record<string, unknown> };
  const locals = (withLocals.locals ??= {});
  locals.caller = { ...(locals.caller as Caller | undefined), ...caller };
}

export const callerOf = (res: http.ServerResponse): Caller =>
  (res as { locals?: { caller?: Caller } }).locals?.caller ?? {};

export interface ProblemOptions {
  message?: string;
  headers?: Record<string, string>;
  status?: number;
}

/** Writes an RFC 9457-style Problem with the contract's fields: error, message, requestId. */
export function sendProblem(res: Response, error: ApiErrorCode, opts: ProblemOptions = {}): void {
  const status = opts.status ?? STATUS_OF[error];
  for (const [k, v] of Object.entries(opts.headers ?? {})) res.setHeader(k, v);
  // A caller that sent no credentials at all is challenged without an error parameter (RFC 6750 §3.1); it sets its own.
  if (status === 401 && !res.hasHeader('www-authenticate'))
    res.setHeader('www-authenticate', `Bearer error="invalid_token"`);
  if (status === 503 && !res.hasHeader('retry-after')) res.setHeader('retry-after', '1');
  const body: Record<string, unknown> = { error };
  if (opts.message) body.message = opts.message;
  body.requestId = requestIdOf(res);
  res.status(status).type('application/problem+json').send(JSON.stringify(body));
}

/** Writes a refusal (wire/outcome.ts) as its Problem, with its retry-after when it has one. */
export const sendRefusal = (res: Response, r: Refusal): void =>
  sendProblem(res, r.error, {
    ...(r.message && { message: r.message }),
    ...(r.retryAfterS !== undefined && { headers: { 'retry-after': String(r.retryAfterS) } }),
    ...(r.status !== undefined && { status: r.status }),
  });

/** Unknown paths: 404 not_found, never the framework's HTML page. */
export const notFound: RequestHandler = (_req, res) => sendProblem(res, 'not_found');

/** The message of a 422 for a body that cannot be read as JSON (not JSON, or in an encoding nobody decodes). */
export const BODY_NOT_JSON = 'request body is not valid JSON';

/**
 * Last error handler: malformed JSON becomes 422 schema_invalid, an oversize body 413; anything else is logged with
 * the request id and answered without internals. `unexpected` names the code for that case per service.
 */
export function errorHandler(log: Logger, unexpected: ApiErrorCode = 'authorization_unavailable'): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number };
    if (res.headersSent) return void res.end();
    if (e?.type === 'entity.too.large') return sendProblem(res, 'payload_too_large');
    if (e?.type === 'entity.parse.failed' || e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported')
      return sendProblem(res, 'schema_invalid', { message: BODY_NOT_JSON });
    // A path segment that is not valid percent-encoding names nothing that can exist (the router's URIError; by name,
    // since an error made in another realm, as in the test runner's modules, is no instance of this one's URIError).
    if (err instanceof URIError || (err as Error)?.name === 'URIError') return sendProblem(res, 'not_found');
    // A body the parser could not decode (gzip, deflate or br data that is not): body-parser's 400 with no type.
    if (e?.status === 400 && e?.type === undefined)
      return sendProblem(res, 'schema_invalid', { message: 'request body could not be decoded' });
    // Input PostgreSQL cannot store as text (a NUL character, bad encoding): the caller's fault, never worth a retry.
    if (isClientDataError(err))
      return sendProblem(res, 'schema_invalid', { message: 'input contains characters that cannot be stored' });
    if (isVanishedReference(err)) {
      log.warn({ err, requestId: res.locals.requestId, path: req.path }, 'write named a row deleted meanwhile');
      return sendProblem(res, 'not_found');
    }
    log.error({ err, requestId: res.locals.requestId, path: req.path }, 'unhandled error');
    sendProblem(res, unexpected, { status: 503, message: 'temporarily unavailable' });
  };
}
