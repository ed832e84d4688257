// Settings of the `request-id` plugin: what its schema accepts is what a gateway file may say; defaults are the docs'.
import { z } from 'zod';

export const settings = z.strictObject({
  trustClientId: z
    .boolean()
    .default(true)
    .describe("Keep a caller's well-formed x-request-id (the idempotency key for metering); false: always make one"),
});
