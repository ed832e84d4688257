// One PDP call per request, never cached. Anything but a well-formed answer is "undecidable" (fail closed).
import type { Pool } from 'undici';
import { asDenyCode } from '../policies/codes.js';
import { INTERNAL_SECRET_HEADER } from '../common/internal-context.js';
import type { Decision, DecisionInput } from '../policies/decision.js';

const PDP_TIMEOUT_MS = 2000;

export type PdpAnswer = Decision | { undecidable: true; detail: string };

export function pdpClient(pdp: Pool, decisionPath: string, internalSecret: string) {
  return async function decide(input: DecisionInput): Promise<PdpAnswer> {
    try {
      const res = await pdp.request({
        path: decisionPath,
        method: 'POST',
        headers: { 'content-type': 'application/json', [INTERNAL_SECRET_HEADER]: internalSecret },
        body: JSON.stringify(input),
        headersTimeout: PDP_TIMEOUT_MS,
        bodyTimeout: PDP_TIMEOUT_MS,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return { undecidable: true, detail: `pdp status ${res.statusCode}` };
      }
      const body = (await res.body.json()) as Partial<Decision> & Record<string, unknown>;
      if (body.allow === true && Array.isArray(body.effectiveScopes) && body.rateLimit && body.subjectType) return body as Decision;
      // An explicit denial with a code we do not know is still a denial (`forbidden`), never an allow.
      if (body.allow === false) return { allow: false, code: asDenyCode(body.code), check: String(body.check ?? 'unknown') };
      return { undecidable: true, detail: 'malformed pdp answer' };
    } catch (err) {
      return { undecidable: true, detail: (err as Error).name ?? 'pdp call failed' };
    }
  };
}
export type PdpClient = ReturnType<typeof pdpClient>;
