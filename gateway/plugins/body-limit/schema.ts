// Settings of the `body-limit` plugin.
import { z } from 'zod';

export const settings = z.strictObject({
  maxBytes: z
    .number()
    .int()
    .positive()
    .max(1024 * 1024)
    .default(64 * 1024)
    .describe('Largest PUT, POST or PATCH body read and forwarded; more is 413 payload_too_large'),
});
