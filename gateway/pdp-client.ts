// One PDP call per request, never cached. Anything but a well-formed answer is "undecidable" (fail closed).
import { asDenyCode } from '../policies/codes.js';
import type { Decision, DecisionInput } from '../policies/decision.js';

const PDP_TIMEOUT_MS = 2000;

export type PdpAnswer = Decision | { undecidable: true; detail: string };

export function pdpClient(pdpUrl: string, decisionPath: string) {
  const url = `${pdpUrl}${decisionPath}`;
  return async function decide(input: DecisionInput): Promise<PdpAnswer> {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
        signal: AbortSignal.timeout(PDP_TIMEOUT_MS),
      });
      if (res.status !== 200) return { undecidable: true, detail: `pdp status ${res.status}` };
      const body = (await res.json()) as Partial<Decision> & Record<string, unknown>;
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
