// Settings of the `flood-guard` plugin.
import { z } from 'zod';

export const settings = z.strictObject({
  points: z
    .number()
    .int()
    .positive()
    .default(600)
    .describe(
      'Denials (403, or 404 folded) of one client and subject in a window before it gets 429 without a PDP call',
    ),
  durationS: z.number().int().positive().default(60).describe('The window, in seconds'),
});
