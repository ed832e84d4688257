// Plugin `authorize`: one PDP decision per request for the route's capability and resource, never cached
// (contract §1 rule 4); the decisions of concurrent requests travel in one call (pdp-client.ts). Undecidable → 503
// authorization_unavailable; denied → 403 with the deny code, folded to 404 on person resources where the code would
// reveal whether the person exists (§7.3).
import { sendProblem } from '../../../common/http.js';
import { FOLDED_ON_PERSON_RESOURCES } from '../../../wire/codes.js';
import { PERSON_RESOURCES } from '../../../wire/decision.js';
import { pdpClient } from './pdp-client.js';
import { definePlugin, stateOf } from '../plugin.js';
import { settings } from './schema.js';

export const authorize = definePlugin({
  name: 'authorize',
  settings,
  after: ['verify-token'],
  perRoute: false,
  start(s, env) {
    const decide = pdpClient(env.pdp, {
      internalSecret: env.internalSecret,
      timeoutMs: s.timeoutMs,
      onCall: (n) => env.telemetry.decisionsPerPdpCall.observe(n),
    });
    return {
      handler: (route) => async (req, res, next) => {
        const state = stateOf(res);
        const personId = req.params.personId as string | undefined;
        const answer = await decide(
          {
            requestId: state.requestId,
            token: state.claims!,
            capability: route.capability,
            resource: { type: route.resource, personId },
          },
          req,
        );
        if (!answer.ok) {
          env.log.warn(
            { requestId: state.requestId, detail: answer.message },
            'authorization undecidable; failing closed',
          );
          return sendProblem(res, 'authorization_unavailable');
        }
        const decision = answer.value;
        if (!decision.allow) {
          env.log.info({ requestId: state.requestId, code: decision.code, check: decision.check }, 'denied');
          if (PERSON_RESOURCES.has(route.resource) && FOLDED_ON_PERSON_RESOURCES.has(decision.code))
            return sendProblem(res, 'not_found');
          return sendProblem(res, decision.code);
        }
        state.allow = decision;
        next();
      },
    };
  },
});
