// Every plugin a gateway file may name. Adding one = a module with a settings schema, listed here.
import type { AnyPlugin } from './plugin.js';
import { requestId } from './request-id.js';
import { cors } from './cors.js';
import { verifyToken } from './verify-token.js';
import { floodGuard } from './flood-guard.js';
import { authorize } from './authorize.js';
import { rateLimit } from './rate-limit.js';
import { bodyLimit } from './body-limit.js';
import { metering } from './metering.js';

export const PLUGINS: ReadonlyMap<string, AnyPlugin> = new Map(
  [requestId, cors, verifyToken, floodGuard, authorize, rateLimit, bodyLimit, metering].map((p) => [p.name, p]),
);
