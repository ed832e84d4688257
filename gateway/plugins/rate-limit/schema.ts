// Settings of the `rate-limit` plugin. Without them a route counts in the tenant policy's windows (returned with the
// PDP's allow), shared by every route; a route given a window counts that layer in a bucket of its own.
import { z } from 'zod';
import { RateLimitWindowSchema as rateLimitWindow } from '../../../wire/decision.js';

export const settings = z.strictObject({
  tenant: rateLimitWindow
    .optional()
    .describe(
      "This route's window for the whole tenant, in a bucket of its own " +
        "(unset: the tenant policy's window, shared by all routes)",
    ),
  account: rateLimitWindow
    .optional()
    .describe(
      "This route's window for each account, in a bucket of its own " +
        "(unset: the tenant policy's window, shared by all routes)",
    ),
});
