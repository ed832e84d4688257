// The PDP's decision endpoints, the gateway's only calls here: one decision per call, or a batch of the decisions the
// gateway's concurrent requests need. Every decision gets its own evaluation against facts current when it was asked
// (the store checks the database's revision once per turn), its own decision-log row and metric; no decision is reused.
import express from 'express';
import { z } from 'zod';
import { noteCaller, sendProblem } from '../common/http.js';
import type { Logger } from '../common/log.js';
import type { Telemetry } from '../common/telemetry.js';
import { DecisionRequestSchema, MAX_DECISIONS_PER_CALL, type Decision, type DecisionInput } from '../wire/decision.js';
import type { DecisionLog } from './decision-log.js';
import { evaluate } from './evaluate.js';
import { tracedDecision } from './decision-span.js';
import { BATCH_MEMBERS_HEADER, linkBatchMembers, outsideTraces } from '../common/tracing.js';
import type { PolicyStore } from './store.js';

/**
 * The batch's envelope; each item is checked on its own, so one malformed item does not cost the others their
 * answer.
 */
const BatchRequest = z.object({ items: z.array(z.unknown()).min(1) });

/** A batch item that is not a decision request: the gateway answers its request 503, never an allow or a denial. */
const MALFORMED_ITEM = { error: 'schema_invalid', message: 'malformed decision request' } as const;

export interface DecisionDeps {
  store: PolicyStore;
  log: Logger;
  decisionLog: DecisionLog;
  telemetry: Pick<Telemetry, 'decisions'>;
}

export function decisionEndpoints({ store, log, decisionLog, telemetry }: DecisionDeps) {
  const decide = tracedDecision(async (input: DecisionInput): Promise<Decision> => {
    const decision = evaluate(input, await store.facts(input));
    const logged = {
      request_id: input.requestId,
      tenant_id: input.token.tenant_id,
      client_id: input.token.client_id,
      subject: input.token.sub,
      capability: input.capability,
      allow: decision.allow,
      code: decision.allow ? null : decision.code,
      check_name: decision.allow ? 'allow' : decision.check,
    };
    decisionLog.record(logged);
    telemetry.decisions.inc({ outcome: decision.allow ? 'allow' : 'deny', code: logged.code ?? '' });
    // The log line speaks the request lines' vocabulary (requestId, tenant, client), not the table's columns. Built
    // only when the level writes it: at the default level it is an object per decision made for nothing.
    if (log.isLevelEnabled('debug'))
      log.debug(
        {
          requestId: input.requestId,
          tenant: input.token.tenant_id,
          client: input.token.client_id,
          subject: input.token.sub,
          capability: input.capability,
          allow: decision.allow,
          code: logged.code,
          check: logged.check_name,
        },
        'decision',
      );
    return decision;
  });

  /** The call's request line names the tenant and client when every decision in it is for the same one. */
  function noteCallers(res: express.Response, inputs: DecisionInput[]): void {
    const [first] = inputs;
    if (
      first &&
      inputs.every((i) => i.token.tenant_id === first.token.tenant_id && i.token.client_id === first.token.client_id)
    )
      noteCaller(res, { tenant: first.token.tenant_id, client: first.token.client_id });
  }

  const single: express.RequestHandler = async (req, res) => {
    const parsed = DecisionRequestSchema.safeParse(req.body);
    // Only the gateway calls this; a malformed request is its bug, and it fails closed on any non-200.
    if (!parsed.success) return sendProblem(res, 'schema_invalid', { message: 'malformed decision request' });
    noteCallers(res, [parsed.data]);
    res.json(await decide(parsed.data));
  };

  const batch: express.RequestHandler = async (req, res) => {
    const parsed = BatchRequest.safeParse(req.body);
    if (!parsed.success)
      return sendProblem(res, 'schema_invalid', { message: 'a batch is {"items": [decision request, ...]}' });
    const { items } = parsed.data;
    const recordedMembers = linkBatchMembers(req.get(BATCH_MEMBERS_HEADER));
    if (items.length > MAX_DECISIONS_PER_CALL)
      return sendProblem(res, 'schema_invalid', {
        message: `a batch carries at most ${MAX_DECISIONS_PER_CALL} decisions; this one has ${items.length}`,
      });
    const inputs = items.map((item) => DecisionRequestSchema.safeParse(item));
    noteCallers(
      res,
      inputs.flatMap((i) => (i.success ? [i.data] : [])),
    );
    // Asked in one turn, so they share the store's revision reading; answered in the order asked.
    const answer = (i: (typeof inputs)[number], n: number) => {
      if (!i.success) return MALFORMED_ITEM;
      // Traced, only the members whose own requests are recorded get a decision span.
      return recordedMembers?.[n] === false ? outsideTraces(() => decide(i.data)) : decide(i.data);
    };
    res.json({ items: await Promise.all(inputs.map(answer)) });
  };

  return { single, batch };
}
