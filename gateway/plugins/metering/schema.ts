// Settings of the `metering` plugin.
import { z } from 'zod';

export const settings = z.strictObject({
  batchSize: z.number().int().positive().max(10_000).default(200).describe('Usage rows written in one insert'),
  flushIntervalMs: z
    .number()
    .int()
    .positive()
    .max(60_000)
    .default(1000)
    .describe('Longest a usage row waits before its batch is written'),
});
