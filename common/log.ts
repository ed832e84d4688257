import { pino, type DestinationStream, type Logger } from 'pino';
import { traceFields, tracingOn } from './tracing.js';

export type { Logger };

/** Bytes of log lines held before a write, and the longest a line waits (decisions.md "Log writes are buffered"). */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 500;

let stdout: DestinationStream | undefined;
/**
 * Standard output, buffered: lines are written when 4 KiB have gathered or every 500 ms, so a busy service makes one
 * write per dozens of requests instead of one per request on every service (a fifth of the full path's CPU). Pino
 * flushes it synchronously when the process exits. One stream per process, so services sharing a process (npm start)
 * never interleave partial writes.
 */
function bufferedStdout(): DestinationStream {
  if (stdout) return stdout;
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES });
  setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  return (stdout = destination);
}

/**
 * JSON lines on stdout, or on `destination` (tests capture them). While tracing is on, a line written inside a traced
 * request carries its trace_id and span_id (tracing.ts).
 */
export const createLogger = (
  service: string,
  level = process.env.LOG_LEVEL ?? 'info',
  destination?: DestinationStream,
): Logger =>
  pino(
    { name: service, level, base: { service }, ...(tracingOn() && { mixin: () => traceFields() }) },
    destination ?? bufferedStdout(),
  );
