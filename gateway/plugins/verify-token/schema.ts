// Settings of the `verify-token` plugin (the issuer's key set, one per gateway: not per route).
import { z } from 'zod';

export const settings = z.strictObject({
  cacheMaxAgeS: z
    .number()
    .int()
    .positive()
    .default(600)
    .describe('A key set younger than this is used without asking the issuer'),
  maxStaleS: z
    .number()
    .int()
    .positive()
    .default(3600)
    .describe('While the issuer cannot be reached, the last good key set keeps serving this long after it was fetched'),
  refetchCooldownS: z
    .number()
    .int()
    .positive()
    .default(10)
    .describe('Least time between two key-set fetches (unknown key ids, refreshes, retries after a failure)'),
  timeoutMs: z.number().int().positive().max(10_000).default(2000).describe('Deadline of a key-set fetch'),
});
