import { pino, type Logger } from 'pino';

export type { Logger };
export const createLogger = (service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger =>
  pino({ name: service, level, base: { service } });
