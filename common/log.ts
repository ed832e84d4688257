import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

let stdout: DestinationStream | undefined;
/**
 * Standard output, written asynchronously: a busy service coalesces the lines of many requests into one write instead
 * of one blocking write per line (one per request on every service). Pino flushes it synchronously when the process
 * exits. One stream per process, so services sharing a process (npm start) never interleave partial writes.
 */
const asyncStdout = (): DestinationStream => (stdout ??= pino.destination({ dest: 1, sync: false }));

/** JSON lines on stdout, or on `destination` (tests capture them). */
export const createLogger = (service: string, level = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger =>
  pino({ name: service, level, base: { service } }, destination ?? asyncStdout());
