// Every plugin a gateway file may name. Adding one = a module with a settings schema, listed here.
import type { AnyPlugin } from './plugin.js';
import { requestId } from './request-id/index.js';
import { cors } from './cors/index.js';
import { verifyToken } from './verify-token/index.js';
import { dpop } from './dpop/index.js';
import { floodGuard } from './flood-guard/index.js';
import { authorize } from './authorize/index.js';
import { rateLimit } from './rate-limit/index.js';
import { bodyLimit } from './body-limit/index.js';
import { metering } from './metering/index.js';

export const PLUGINS: ReadonlyMap<string, AnyPlugin> = new Map(
  [requestId, cors, verifyToken, dpop, floodGuard, authorize, rateLimit, bodyLimit, metering].map((p) => [p.name, p]),
);
