// `npm run bench`: the load generator, in a process of its own so its CPU is not counted with any service's.
// The parent sends one measurement at a time over IPC ({ origin, spec, connections, durationS, rate? }) and gets
// the figures back. Each connection is one keep-alive undici Client sending one request after another (closed loop),
// or, with `rate`, on a fixed schedule shared by the connections, latency counted from the scheduled time.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'undici';
import { connectionOf, type Connection, type ScenarioSpec } from './scenarios.js';

export interface LoadRequest {
  /** Connections keep their state across runs with the same key (a warm-up continues the refresh chains it used). */
  key: string;
  origin: string;
  spec: ScenarioSpec;
  connections: number;
  durationS: number;
  /** Requests per second over all connections; unset = as fast as answers come. */
  rate?: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  /** Answers the scenario did not expect, by status (0 = transport error). */
  unexpected: Record<string, number>;
  /** Requests of the run that did their preparation in the timed phase (a DPoP pool run dry); absent when none. */
  preparedLate?: number;
}

/** Requests a second of a key's last run (the preparation of the next one is sized by it). */
const lastRps = new Map<string, number>();
/** With no run of the key yet: the rate the preparation assumes. */
const FIRST_RPS = 4000;
/** How much faster than its last run a run may go before its preparation runs out. */
const HEADROOM = 2.5;

const connectionsByKey = new Map<string, Connection[]>();
const connectionsFor = ({ key, spec, connections }: LoadRequest) => {
  const known = connectionsByKey.get(key) ?? [];
  while (known.length < connections) known.push(connectionOf(spec, known.length));
  connectionsByKey.set(key, known);
  return known;
};

async function run(request: LoadRequest): Promise<LoadResult> {
  const { origin, connections, durationS, rate } = request;
  const states = connectionsFor(request);
  // Ahead of the timed phase: what each connection may need for a run at up to HEADROOM times the key's last rate.
  const expectedRps = rate ?? (lastRps.get(request.key) ?? FIRST_RPS) * HEADROOM;
  const perConnection = Math.ceil((expectedRps * durationS) / connections) + 20;
  let preparedLate = 0;
  await Promise.all(states.slice(0, connections).map(async (c) => void (await c.prepare?.(perConnection))));
  const latencies: number[] = [];
  const unexpected: Record<string, number> = {};
  const start = performance.now();
  const deadline = start + durationS * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, n) => {
      const client = new Client(origin, { pipelining: 1, keepAliveTimeout: 30_000 });
      const connection = states[n]!;
      try {
        for (let k = 0; ; k++) {
          const scheduled = rate ? start + ((k * connections + n) * 1000) / rate : performance.now();
          if (scheduled >= deadline) break;
          // A timer may fire a little early; sending before the scheduled time would count a negative latency.
          while (scheduled > performance.now()) await sleep(Math.max(1, scheduled - performance.now()));
          const { method, path, headers, body } = await connection.next();
          let status = 0;
          try {
            const res = await client.request({ method, path, headers, body });
            status = res.statusCode;
            if (!connection.answer(status, res.headers, await res.body.text()))
              unexpected[status] = (unexpected[status] ?? 0) + 1;
          } catch {
            unexpected[status] = (unexpected[status] ?? 0) + 1;
          }
          latencies.push(performance.now() - scheduled);
        }
      } finally {
        await client.close();
      }
    }),
  );
  const elapsedS = (performance.now() - start) / 1000;
  // How many requests of this run signed in the timed phase: asked of each connection by an empty preparation.
  for (const c of states.slice(0, connections)) preparedLate += (await c.prepare?.(0)) ?? 0;
  lastRps.set(request.key, latencies.length / elapsedS);
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 100) / 100;
  return {
    requests: latencies.length,
    rps: Math.round(latencies.length / elapsedS),
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    unexpected,
    ...(preparedLate > 0 && { preparedLate }),
  };
}

process.on('message', (message: LoadRequest) => {
  run(message).then(
    (result) => process.send!({ result }),
    (err: Error) => process.send!({ error: err.stack ?? String(err) }),
  );
});
process.send!({ ready: true });
