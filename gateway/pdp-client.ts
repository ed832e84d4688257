// One PDP call per request, never cached. Anything but a well-formed answer is "undecidable" (fail closed).
import type { Pool } from 'undici';
import { z } from 'zod';
import { asDenyCode } from '../policies/codes.js';
import { INTERNAL_SECRET_HEADER } from '../common/internal-context.js';
import { REQUEST_ID_HEADER } from '../common/http.js';
import { CAPABILITIES, type Decision, type DecisionInput } from '../policies/decision.js';

const WINDOW = z.object({ points: z.number().int().positive(), durationS: z.number().int().positive() });
/** An allow is taken only in full: every field the rest of the pipeline relies on, well-formed. */
const ALLOW = z.object({
  allow: z.literal(true),
  effectiveScopes: z.array(z.enum(CAPABILITIES)),
  subjectType: z.enum(['person', 'service_account']),
  rateLimit: z.object({ tenant: WINDOW, account: WINDOW }),
});

export type PdpAnswer = Decision | { undecidable: true; detail: string };

export function pdpClient(pdp: Pool, decisionPath: string, internalSecret: string, timeoutMs = 2000) {
  return async function decide(input: DecisionInput): Promise<PdpAnswer> {
    try {
      const res = await pdp.request({
        path: decisionPath,
        method: 'POST',
        // The caller's request id, so the PDP's request log line and decision log name the same request.
        headers: { 'content-type': 'application/json', [INTERNAL_SECRET_HEADER]: internalSecret, [REQUEST_ID_HEADER]: input.requestId },
        body: JSON.stringify(input),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return { undecidable: true, detail: `pdp status ${res.statusCode}` };
      }
      const body = (await res.body.json()) as Partial<Decision> & Record<string, unknown>;
      if (body.allow === true) {
        const allow = ALLOW.safeParse(body);
        return allow.success ? allow.data : { undecidable: true, detail: 'malformed allow from pdp' };
      }
      // An explicit denial with a code we do not know is still a denial (`forbidden`), never an allow.
      if (body.allow === false) return { allow: false, code: asDenyCode(body.code), check: String(body.check ?? 'unknown') };
      return { undecidable: true, detail: 'malformed pdp answer' };
    } catch (err) {
      return { undecidable: true, detail: (err as Error).name ?? 'pdp call failed' };
    }
  };
}
export type PdpClient = ReturnType<typeof pdpClient>;
