// Settings of the `dpop` plugin (one proof ledger per gateway: not per route).
import { z } from 'zod';
import { DPOP_ALGS } from '../../../wire/sender-constraint.js';

export const settings = z.strictObject({
  algs: z
    .array(z.enum(DPOP_ALGS))
    .min(1)
    .default([...DPOP_ALGS])
    .describe('Signature algorithms a proof may use (asymmetric only); the challenge of a refusal lists them'),
  iatWindowS: z
    .number()
    .int()
    .min(5)
    .max(600)
    .default(60)
    .describe(
      "A proof's iat may be this many seconds before or after the gateway's clock; its jti is kept twice as long",
    ),
  publicBaseUrl: z
    .url({ protocol: /^https?$/ })
    .refine((u) => !/[?#]/.test(u), 'a base URL has no query or fragment')
    .transform((u) => u.replace(/\/+$/, ''))
    .optional()
    .describe(
      'The URL callers reach the gateway at (before /v1), which proofs name in htu. ' +
        'Unset: GATEWAY_PUBLIC_URL, else the address the gateway listens on',
    ),
  maxProofChars: z
    .number()
    .int()
    .min(512)
    .max(16_384)
    .default(4096)
    .describe('A longer DPoP header is refused before it is decoded'),
  memoryMaxEntries: z
    .number()
    .int()
    .min(1000)
    .default(1_000_000)
    .describe('Proofs remembered in process (without Redis, or while it fails); past it new proofs are refused'),
});
export type DpopSettings = z.output<typeof settings>;
