// The gateway's PDP client: a fresh decision for every request, never cached. The decisions asked for while the gateway
// works through one batch of I/O (one event-loop turn) travel to the PDP in one call, flushed when that turn ends
// (setImmediate: never a timer that waits for more work, so a lone request is sent at once). Anything but a well-formed
// answer is "undecidable" (fail closed): a failed call answers every decision in it so, a failed item its own.
// Traced, a call is part of the trace of the first recorded request it serves and links to the others (tracing.ts
// batchCall); a call serving only unsampled requests passes on the first one's trace id, flagged unsampled.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Pool } from 'undici';
import { asDenyCode } from '../../../wire/codes.js';
import { INTERNAL_SECRET_HEADER } from '../../../common/internal-context.js';
import { REQUEST_ID_HEADER } from '../../../common/http.js';
import { batchCall, memberContext } from '../../../common/tracing.js';
import type { Context } from '@opentelemetry/api';
import {
  AllowSchema,
  DECISION_BATCH_PATH,
  MAX_DECISIONS_PER_CALL,
  type Decision,
  type DecisionInput,
} from '../../../wire/decision.js';
import { done, refused, type Outcome } from '../../../wire/outcome.js';

/** The PDP's decision, or `authorization_unavailable` (undecidable: the message says why). */
export type PdpAnswer = Outcome<Decision, 'authorization_unavailable'>;
const undecidable = (why: string) => refused('authorization_unavailable', why);

export interface PdpClientOptions {
  internalSecret: string;
  timeoutMs?: number;
  /** Most decisions per call (the PDP's cap); a larger backlog goes out as several calls at once. */
  maxPerCall?: number;
  /** Told the size of every call sent (the gateway's pdp_decisions_per_call histogram). */
  onCall?(decisions: number): void;
}

interface Pending {
  input: DecisionInput;
  resolve(answer: PdpAnswer): void;
  /** The asking request's trace (tracing on), which the call joins or links to. */
  trace?: Context | undefined;
}

/** One item of the PDP's answer, read as strictly as the pipeline needs it. */
function readDecision(item: unknown): PdpAnswer {
  const body = (item ?? {}) as Partial<Decision> & Record<string, unknown>;
  if (body.allow === true) {
    const allow = AllowSchema.safeParse(body);
    return allow.success ? done(allow.data) : undecidable('malformed allow from pdp');
  }
  // An explicit denial with a code we do not know is still a denial (`forbidden`), never an allow.
  if (body.allow === false)
    return done({ allow: false, code: asDenyCode(body.code), check: String(body.check ?? 'unknown') });
  return undecidable('malformed pdp answer');
}

export function pdpClient(
  pdp: Pool,
  { internalSecret, timeoutMs = 2000, maxPerCall = MAX_DECISIONS_PER_CALL, onCall }: PdpClientOptions,
) {
  let pending: Pending[] = [];

  async function ask(batch: Pending[], traceHeaders: Record<string, string>): Promise<unknown[]> {
    const res = await pdp.request({
      path: DECISION_BATCH_PATH,
      method: 'POST',
      // A call for one request carries that request's id, so the PDP's request line names it; a batch gets its own
      // (each decision's log row names its request either way).
      headers: {
        'content-type': 'application/json',
        [INTERNAL_SECRET_HEADER]: internalSecret,
        [REQUEST_ID_HEADER]: batch.length === 1 ? batch[0]!.input.requestId : randomUUID(),
        ...traceHeaders,
      },
      body: JSON.stringify({ items: batch.map((p) => p.input) }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`pdp status ${res.statusCode}`);
    }
    const { items } = (await res.body.json()) as { items?: unknown };
    // A short, long or missing list cannot be matched to the requests: none of it is taken.
    if (!Array.isArray(items) || items.length !== batch.length) throw new Error('malformed pdp answer');
    return items;
  }

  async function send(batch: Pending[]): Promise<void> {
    onCall?.(batch.length);
    try {
      const items = await batchCall(
        'gateway pdp batch',
        batch.map((p) => p.trace),
        (headers) => ask(batch, headers),
      );
      batch.forEach((p, i) => p.resolve(readDecision(items[i])));
    } catch (err) {
      const detail = (err as Error).message || (err as Error).name || 'pdp call failed';
      for (const p of batch) p.resolve(undecidable(detail));
    }
  }

  function flush(): void {
    const all = pending;
    pending = [];
    for (let i = 0; i < all.length; i += maxPerCall) void send(all.slice(i, i + maxPerCall));
  }

  /** The decision about `input`, asked for the request `from` (whose trace the call joins, links to or carries). */
  return function decide(input: DecisionInput, from?: IncomingMessage): Promise<PdpAnswer> {
    return new Promise((resolve) => {
      if (pending.push({ input, resolve, trace: memberContext(from) }) === 1) setImmediate(flush);
    });
  };
}
export type PdpClient = ReturnType<typeof pdpClient>;
