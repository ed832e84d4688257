// Plugin `body-limit`: reads a request body of at most maxBytes before it is forwarded; more is 413
// payload_too_large (the error handler's answer to the parser's entity.too.large). Only methods that carry a body
// upstream are read: GET, HEAD and DELETE forward none, and their answers have no 413 (contract §4.2–4.8).
import express from 'express';
import { definePlugin } from '../plugin.js';
import { settings } from './schema.js';

const BODY_METHODS: ReadonlySet<string> = new Set(['PUT', 'POST', 'PATCH']);

export const bodyLimit = definePlugin({
  name: 'body-limit',
  settings,
  after: [],
  perRoute: true,
  start: () => ({
    handler: (_route, s) => express.raw({ type: (req) => BODY_METHODS.has(req.method ?? ''), limit: s.maxBytes }),
  }),
});
