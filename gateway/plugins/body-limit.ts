// Plugin `body-limit`: reads a request body of at most maxBytes before it is forwarded; more is 413
// payload_too_large (the error handler's answer to the parser's entity.too.large).
import express from 'express';
import { z } from 'zod';
import { definePlugin } from './plugin.js';

export const bodyLimit = definePlugin({
  name: 'body-limit',
  settings: z.strictObject({ maxBytes: z.number().int().positive().max(1024 * 1024).default(64 * 1024) }),
  after: [],
  perRoute: true,
  start: () => ({ handler: (_route, s) => express.raw({ type: () => true, limit: s.maxBytes }) }),
});
