// Traced, every decision is a span of the PDP's request (facts read and evaluation), with its outcome as attributes:
// the capability and resource asked for, allow or deny, the deny code and the check that decided.
import { inSpan, tracingOn } from '../common/tracing.js';
import type { Decision, DecisionInput } from '../wire/decision.js';

type Decide = (input: DecisionInput) => Promise<Decision>;

export const tracedDecision = (decide: Decide): Decide =>
  tracingOn()
    ? (input) =>
        inSpan(
          'pdp decision',
          async (span) => {
            const decision = await decide(input);
            span?.setAttributes({
              'pdp.decision': decision.allow ? 'allow' : 'deny',
              ...(!decision.allow && { 'pdp.deny_code': decision.code, 'pdp.check': decision.check }),
            });
            return decision;
          },
          {
            attributes: {
              'pdp.capability': input.capability,
              'pdp.resource.type': input.resource.type,
              'tenant.id': input.token.tenant_id,
              'client.id': input.token.client_id,
            },
          },
        )
    : decide;
