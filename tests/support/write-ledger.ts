// Writes through the whole chain with a ledger of what the API acknowledged, and the read-back that checks it: every
// record holds its last known revision (acknowledged, or read back), or a write sent later whose answer never came (a
// 503 or a lost connection may hide a commit); never an older revision, a write applied twice (its data under another
// ETag) or a mix of writes. A record's first step reads it, so a ledger may start on records that already exist.
import { isDeepStrictEqual } from 'node:util';
import { performance } from 'node:perf_hooks';
import { personApi } from './extensions.js';
import { isConnectionError, sleep } from './processes.js';

export interface Outcome {
  kind: 'read' | 'create' | 'update' | 'list';
  /** HTTP status, or 0 for a connection error. */
  status: number;
  error?: string;
  ms: number;
  requestId: string;
}

interface Written {
  etag: string;
  data: unknown;
}

interface RecordState {
  personId: string;
  /** 'unknown' after an answer that may hide a commit: read back before the next write. */
  state: 'absent' | 'present' | 'unknown';
  /** The last revision known to be committed: acknowledged, or read back. */
  known?: Written;
  /** Writes sent after the last acknowledged one whose answer did not say whether they applied. */
  unanswered: unknown[];
  seq: number;
}

export interface LedgerReport {
  records: number;
  acknowledged: number;
  unanswered: number;
  problems: string[];
}

type Answer = { status: number; body: any };

/**
 * One API call with `x-request-id: requestId`, timed. A connection error (refused, reset, closed) is an outcome with
 * status 0 and no answer; anything else thrown (an answer the OpenAPI document does not declare) fails the caller.
 */
export async function timedCall<T extends Answer>(
  kind: Outcome['kind'],
  requestId: string,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<{ res: T | undefined; outcome: Outcome }> {
  const started = performance.now();
  try {
    const res = await send({ 'x-request-id': requestId });
    return {
      res,
      outcome: { kind, status: res.status, error: res.body?.error, ms: performance.now() - started, requestId },
    };
  } catch (err) {
    if (!isConnectionError(err)) throw err;
    const e = err as Error & { cause?: { code?: string } };
    return {
      res: undefined,
      outcome: {
        kind,
        status: 0,
        error: String(e.cause?.code ?? e.cause ?? e.message),
        ms: performance.now() - started,
        requestId,
      },
    };
  }
}

/** Statuses that leave the outcome of a write open: the chain failed somewhere after the request left the client. */
const UNDECIDED = new Set([0, 503]);

/** `token` is read for every request, so a long run may swap in refreshed tokens. */
export function writeLedger(
  baseUrl: string,
  token: () => string,
  extensionId: string,
  personIds: string[],
  label: string,
) {
  const api = personApi(baseUrl);
  const records: RecordState[] = personIds.map((personId) => ({ personId, state: 'unknown', unanswered: [], seq: 0 }));
  const problems: string[] = [];
  let acknowledged = 0;
  let unanswered = 0;
  let next = 0;

  const timed = <T extends Answer>(
    kind: Outcome['kind'],
    send: (headers: Record<string, string>) => Promise<T>,
    requestId = `${label}-${kind}-${++next}-${Date.now().toString(36)}`,
  ) => timedCall(kind, requestId, send);

  /** Reads the record's current revision after an undecided write. */
  async function resync(r: RecordState): Promise<Outcome> {
    const { res, outcome } = await timed('read', (h) => api.get(token(), r.personId, extensionId, h));
    if (res?.status === 200)
      Object.assign(r, { state: 'present', known: { etag: res.body.etag, data: res.body.data } });
    else if (res?.status === 404) Object.assign(r, { state: 'absent', known: undefined });
    return outcome;
  }

  /** One write (create when absent, compare-and-set update when present) to record `index`, or a read-back first. */
  async function write(index: number): Promise<Outcome> {
    const r = records[index]!;
    if (r.state === 'unknown') return resync(r);
    const data = { note: `${label} record ${index} write ${++r.seq}` };
    const body = { schemaVersion: 1, data };
    const kind = r.state === 'absent' ? 'create' : 'update';
    const precondition: Record<string, string> =
      kind === 'create' ? { 'if-none-match': '*' } : { 'if-match': r.known!.etag };
    const { res, outcome } = await timed(kind, (h) =>
      api.put(token(), r.personId, extensionId, body, { ...precondition, ...h }),
    );
    if (res && (res.status === 200 || res.status === 201)) {
      acknowledged++;
      Object.assign(r, { state: 'present', known: { etag: res.body.etag, data }, unanswered: [] });
    } else if (UNDECIDED.has(outcome.status)) {
      unanswered++;
      r.unanswered.push(data);
      r.state = 'unknown';
    } else if (res?.status === 409 && r.unanswered.length > 0) {
      r.state = 'unknown'; // an earlier unanswered write of ours did apply
    } else {
      problems.push(`${kind} of record ${index}: unexpected ${outcome.status} ${outcome.error ?? ''}`);
      r.state = 'unknown';
    }
    return outcome;
  }

  /** A read; `requestId` repeats an earlier one (a client's retry, metered once). */
  async function read(index: number, requestId?: string): Promise<Outcome> {
    return (await timed('read', (h) => api.get(token(), records[index]!.personId, extensionId, h), requestId)).outcome;
  }

  async function list(index: number): Promise<Outcome> {
    return (await timed('list', (h) => api.list(token(), records[index]!.personId, '', h))).outcome;
  }

  /** Reads every record back (retrying 503s while the chain recovers) and checks it against the ledger. */
  async function verify(): Promise<LedgerReport> {
    for (const [index, r] of records.entries()) {
      let res: { status: number; body: any } | undefined;
      for (let attempt = 0; attempt < 50 && (res === undefined || res.status === 503); attempt++) {
        if (attempt) await new Promise((ok) => setTimeout(ok, 200));
        res = await api.get(token(), r.personId, extensionId).catch(() => undefined);
      }
      const stored = res?.status === 200 ? { etag: res.body.etag, data: res.body.data } : undefined;
      const where = `record ${index} (${r.personId})`;
      if (res?.status !== 200 && res?.status !== 404) problems.push(`${where}: read back answered ${res?.status}`);
      else if (!stored) {
        if (r.known) problems.push(`${where}: committed write lost (record absent)`);
      } else if (r.known && stored.etag === r.known.etag) {
        if (!isDeepStrictEqual(stored.data, r.known.data))
          problems.push(`${where}: known ETag with other data ${JSON.stringify(stored.data)}`);
      } else if (!r.unanswered.some((d) => isDeepStrictEqual(d, stored.data))) {
        problems.push(
          `${where}: holds ${JSON.stringify(stored.data)}, neither the last ` +
            `known ${JSON.stringify(r.known?.data)} nor a later unanswered write`,
        );
      }
    }
    return { records: records.length, acknowledged, unanswered, problems };
  }

  return { write, read, list, verify, records: records.length };
}
type Ledger = ReturnType<typeof writeLedger>;

/**
 * Traffic around a fault: `writers` loops, each on its own records (so no two contend), writing (and, with
 * `readEvery`, reading every n-th step) for 1.5 s, then while `fault` runs (given the outcomes so far), then until
 * `successesAfter` answers after it were 2xx. A refused or failed step backs off 20 ms. Returns every outcome.
 */
export async function trafficAround(
  ledger: Ledger,
  fault: (so: Outcome[]) => Promise<void>,
  opts: { writers: number; successesAfter: number; readEvery?: number },
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let faultDone = false;
  let successesAfter = 0;
  const loops = Array.from({ length: opts.writers }, async (_, w) => {
    for (let n = 0; !faultDone || successesAfter < opts.successesAfter; n++) {
      const index = w + opts.writers * (n % Math.floor(ledger.records / opts.writers));
      const outcome = await (opts.readEvery && n % opts.readEvery === opts.readEvery - 1
        ? ledger.read(index)
        : ledger.write(index));
      outcomes.push(outcome);
      const ok = outcome.status >= 200 && outcome.status < 300;
      if (faultDone && ok) successesAfter++;
      if (!ok) await sleep(20);
    }
  });
  await sleep(1500);
  await fault(outcomes);
  faultDone = true;
  await Promise.all(loops);
  return outcomes;
}
