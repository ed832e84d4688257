// `npm run soak`: mixed reads and writes through the whole chain for SOAK_DURATION_S seconds (default 120), every
// service its own process, on real PostgreSQL and Redis (a database of its own on DATABASE_URL's server and REDIS_URL
// when set; otherwise a private cluster and a private redis-server). Fails (exit 1) on any 5xx or connection error,
// on a lost or doubled write (every record read back), on metering that differs from the calls the API answered
// (usage_records against the request ids sent, retries included), or on a process whose resident memory grew.
import knexFactory from 'knex';
import { performance } from 'node:perf_hooks';
import { startStack } from '../tests/support/stack.js';
import { SERVICES, waitFor, type ServiceName } from '../tests/support/processes.js';
import { timedCall, writeLedger, type Outcome } from '../tests/support/write-ledger.js';
import { personApi, registerExtension } from '../tests/support/extensions.js';

const DURATION_S = Number(process.env.SOAK_DURATION_S ?? 120);
if (!Number.isInteger(DURATION_S) || DURATION_S < 60) {
  console.error(`SOAK_DURATION_S=${process.env.SOAK_DURATION_S}: an integer number of seconds, at least 60`);
  process.exit(2);
}
const CLIENTS = 4;
const RECORDS_PER_CLIENT = 6;
/** Memory is compared after this warm-up (JIT, pools, caches filled). */
const WARM_UP_S = Math.max(20, Math.round(DURATION_S * 0.15));
const SAMPLE_EVERY_MS = 5000;
/** Flat: the lowest sample of the second half after warm-up at most this much above the lowest of the first half. */
const allowedGrowthKiB = (startKiB: number) => Math.max(32 * 1024, startKiB * 0.2);
/** Access tokens live 15 minutes; a longer soak refreshes its token (strict rotation) this often. */
const REFRESH_EVERY_MS = 10 * 60_000;

const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  console.log(`soak: ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
};

const stack = await startStack({ persons: CLIENTS * RECORDS_PER_CLIENT, shared: true });
try {
  const where =
    `${process.env.DATABASE_URL ? 'DATABASE_URL' : 'a private PostgreSQL cluster'}, ` +
    `${process.env.REDIS_URL ? 'REDIS_URL' : 'a private Redis'}`;
  console.log(
    `soak: ${DURATION_S} s, ${CLIENTS} clients, ${stack.personIds.length} records, ` +
      `each service its own process, on ${where}`,
  );
  let token = stack.token;
  let refreshToken = stack.refreshToken;
  const refresher = setInterval(async () => {
    const res = await fetch(`${stack.system.authUrl}/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: stack.tenant.clientId,
        refresh_token: refreshToken,
      }),
    });
    const body = await res.json();
    if (res.status !== 200) failures.push(`token refresh answered ${res.status} ${JSON.stringify(body)}`);
    else ({ access_token: token, refresh_token: refreshToken } = body);
  }, REFRESH_EVERY_MS);

  const ledger = writeLedger(stack.system.baseUrl, () => token, stack.extensionId, stack.personIds, 'soak');
  const outcomes: Outcome[] = [];
  let retries = 0;

  // One record every client races on (read its revision, then a compare-and-set update): exactly one write may win
  // per revision, so the winners form one chain of revisions ending at the stored record.
  const api = personApi(stack.system.baseUrl);
  const hot = {
    personId: stack.personIds[0]!,
    extensionId: await registerExtension(stack.admin, stack.tenant.clientId),
  };
  let hotCalls = 0;
  /** One call on the raced record, with a request id of its own, its outcome recorded; a connection error throws. */
  const hotCall = async (
    kind: Outcome['kind'],
    send: (headers: Record<string, string>) => ReturnType<typeof api.get>,
  ) => {
    const { res, outcome } = await timedCall(kind, `soak-hot-${++hotCalls}-${Date.now().toString(36)}`, send);
    outcomes.push(outcome);
    if (!res) throw new Error(`hot record: ${kind} failed with ${outcome.error}`);
    return res;
  };
  const created = await hotCall('create', (h) =>
    api.put(
      token,
      hot.personId,
      hot.extensionId,
      { schemaVersion: 1, data: { note: 'hot 0' } },
      { 'if-none-match': '*', ...h },
    ),
  );
  if (created.status !== 201) throw new Error(`hot record: create answered ${created.status}`);
  const wins: { from: string; etag: string; data: unknown }[] = [];
  let conflicts = 0;
  async function race(c: number): Promise<void> {
    const read = await hotCall('read', (h) => api.get(token, hot.personId, hot.extensionId, h));
    if (read.status !== 200) return;
    const data = { note: `hot write ${c}-${hotCalls}` };
    const from = read.body.etag as string;
    const write = await hotCall('update', (h) =>
      api.put(token, hot.personId, hot.extensionId, { schemaVersion: 1, data }, { 'if-match': from, ...h }),
    );
    if (write.status === 200) wins.push({ from, etag: write.body.etag, data });
    else if (write.status === 409 && write.body.error === 'revision_conflict') conflicts++;
  }

  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let n = 0; elapsedS() < DURATION_S; n++) {
      const index = c + CLIENTS * (n % RECORDS_PER_CLIENT);
      const step = n % 10;
      if (step < 3) outcomes.push(await ledger.write(index));
      else if (step === 3) await race(c);
      else if (step < 8) outcomes.push(await ledger.read(index));
      else if (step === 8) outcomes.push(await ledger.list(index));
      else {
        // A client's retry with the same x-request-id: answered again, metered once.
        const first = await ledger.read(index);
        outcomes.push(first, await ledger.read(index, first.requestId));
        retries++;
      }
    }
  });
  const samples: Record<ServiceName, { atS: number; kib: number }[]> = {
    issuer: [],
    policies: [],
    backend: [],
    gateway: [],
  };
  const sampler = setInterval(() => {
    for (const s of SERVICES) samples[s].push({ atS: elapsedS(), kib: stack.system.services[s].rssKiB() });
  }, SAMPLE_EVERY_MS);
  await Promise.all(clients);
  clearInterval(sampler);
  clearInterval(refresher);
  const seconds = elapsedS();

  // Every answer
  const byStatus = new Map<number, number>();
  for (const o of outcomes) byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
  const latencies = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  console.log(
    `soak: ${outcomes.length} requests in ${seconds.toFixed(0)} s (${(outcomes.length / seconds).toFixed(0)}/s), ` +
      `statuses ${JSON.stringify(Object.fromEntries(byStatus))}, ` +
      `p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(0)} ms, ` +
      `p99 ${latencies[Math.floor(latencies.length * 0.99)]!.toFixed(0)} ms`,
  );
  check(
    outcomes.every((o) => o.status >= 200 && o.status < 500),
    `zero 5xx and zero connection errors (${outcomes.filter((o) => o.status >= 500 || o.status === 0).length})`,
  );
  check(
    outcomes.every((o) => [200, 201, 404].includes(o.status) || (o.status === 409 && o.error === 'revision_conflict')),
    'every answer 200, 201, 404 (a read before the first create) or 409 revision_conflict (the raced record)',
  );

  // Metering (before the read-backs, whose own reads are metered too): one usage row per request id the API answered,
  // none for anything else
  const answered = new Set(outcomes.filter((o) => o.status >= 200 && o.status < 500).map((o) => o.requestId));
  const knex = knexFactory({ client: 'pg', connection: stack.system.databaseUrl, pool: { min: 0, max: 1 } });
  let metered = new Set<string>();
  let rows = 0;
  try {
    // The gateway writes its batches every second; wait for the last one.
    await waitFor(
      'metering caught up',
      async () => {
        const found = await knex('usage_records').where('tenant_id', stack.tenant.tenantId).select('request_id');
        rows = found.length;
        metered = new Set(found.map((r) => r.request_id as string));
        return rows >= answered.size;
      },
      15_000,
      500,
    ).catch(() => undefined);
  } finally {
    await knex.destroy();
  }
  const missing = [...answered].filter((id) => !metered.has(id));
  const extra = [...metered].filter((id) => !answered.has(id));
  check(
    missing.length === 0 && extra.length === 0 && rows === answered.size,
    `zero double metering: ${rows} usage rows for ${answered.size} answered request ids ` +
      `(${outcomes.length} answers, ${retries} retries with a reused id); ` +
      `missing ${missing.length}, unexpected ${extra.length}`,
  );

  // The raced record: one winner per revision, one unbroken chain, the last winner stored
  const chain = new Map(wins.map((w) => [w.from, w]));
  let length = 0;
  for (let link = chain.get(created.body.etag as string); link && length <= wins.length; link = chain.get(link.etag))
    length++;
  const stored = await api.get(token, hot.personId, hot.extensionId);
  const end = wins.find((w) => w.etag === stored.body.etag);
  check(
    chain.size === wins.length &&
      length === wins.length &&
      end !== undefined &&
      JSON.stringify(end.data) === JSON.stringify(stored.body.data),
    `one writer wins per revision on the raced record: ${wins.length} wins over ${chain.size} revisions ` +
      `in one chain of ${length}, ${conflicts} 409 revision_conflict, the stored record is the last winner's write`,
  );

  // Every record read back
  const report = await ledger.verify();
  check(
    report.problems.length === 0,
    `zero lost or doubled writes: ${report.acknowledged} acknowledged writes, ${report.records} records read back` +
      `${report.problems.length ? `: ${report.problems.join('; ')}` : ''}`,
  );

  // Resident memory after the warm-up
  for (const s of SERVICES) {
    const kept = samples[s].filter((x) => x.atS >= WARM_UP_S).map((x) => x.kib);
    if (kept.length < 4) {
      check(false, `${s}: too few memory samples after the ${WARM_UP_S} s warm-up (${kept.length}); run longer`);
      continue;
    }
    // The floor of each half: what is still held after the collector ran. Garbage waiting for a collection is a
    // sawtooth that a floor ignores; a leak survives every collection and lifts the floor.
    const half = Math.floor(kept.length / 2);
    const start = Math.min(...kept.slice(0, half));
    const end = Math.min(...kept.slice(half));
    check(
      end - start <= allowedGrowthKiB(start),
      `${s} resident memory flat: floor ${mib(start)} in the first half, ${mib(end)} in the second ` +
        `(allowed growth ${mib(allowedGrowthKiB(start))}; ${kept.length} samples after a ${WARM_UP_S} s warm-up: ` +
        `${kept.map((k) => Math.round(k / 1024)).join(' ')} MiB)`,
    );
  }
} catch (err) {
  failures.push(String((err as Error).stack ?? err));
  console.error(err);
} finally {
  await stack.close();
}
console.log(failures.length ? `soak: FAILED (${failures.length})` : 'soak: passed');
process.exit(failures.length ? 1 : 0);
