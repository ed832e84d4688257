// Settings of the `authorize` plugin.
import { z } from 'zod';

export const settings = z.strictObject({
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(10_000)
    .default(2000)
    .describe('Deadline of a call to the PDP; past it, every request in the call is 503 authorization_unavailable'),
});
