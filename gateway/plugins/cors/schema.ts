// Settings of the `cors` plugin.
import { z } from 'zod';

const ORIGIN = z
  .string()
  .regex(/^https?:\/\/[^/\s]+$/, 'an origin like https://app.example.com (scheme, host, port; no path)');

export const settings = z.strictObject({
  origins: z.array(ORIGIN).default([]).describe("Browser origins allowed on every route, besides the clients' own"),
  clientOrigins: z
    .boolean()
    .default(true)
    .describe('Also allow the origins the calling client registered (allowedOrigins in the admin API)'),
  maxAgeS: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(600)
    .describe('How long a browser may keep a preflight answer (Access-Control-Max-Age)'),
});
