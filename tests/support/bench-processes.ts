// `npm run bench`: the processes of a run, and the two shapes of the product: each service in its own process as
// deployed (the headline), and the four in one process (`npm start`).
import { Child, freePort, nodeEntry, untilReady } from './processes.js';

/** With BENCH_CPU_PROF=<dir>, the services write V8 CPU profiles there when they stop. */
const PROFILE_ARGS = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];

/**
 * A process of the run (`node --import tsx <entry>`), with an IPC channel for those that report to the run, CPU
 * profiles when BENCH_CPU_PROF asks for them, and a word on standard error if it dies before the run stops it.
 */
export async function spawnChild(name: string, entry: string, env: Record<string, string>, args: string[] = [], profile = false): Promise<Child> {
  const child = new Child(name, ...nodeEntry(entry, args, profile ? PROFILE_ARGS : []), { env: { ...process.env, ...env }, ipc: true });
  await child.start();
  let stopping = false;
  child.process.once('exit', (code, signal) => {
    if (!stopping) console.error(`bench: ${name} exited (${code ?? signal}) before the run ended\n${child.output.slice(-4000)}`);
  });
  const stop = child.stop.bind(child);
  child.stop = (signal) => ((stopping = true), stop(signal));
  return child;
}

/** The first IPC message of a child that reports itself ready. */
export const readyMessage = <T>(child: Child): Promise<T> =>
  new Promise((resolve, reject) => {
    child.process.once('message', (m) => resolve(m as T));
    child.process.once('exit', (code) => reject(new Error(`${child.name} exited (${code}) before it was ready`)));
  });

export interface Shape {
  name: string;
  authUrl: string;
  gatewayUrl: string;
  pdpUrl: string;
  backendUrl: string;
  /** The product's processes, measured for CPU. */
  processes: Child[];
  stop(): Promise<void>;
}

export interface ShapeEnv {
  DATABASE_URL: string;
  REDIS_URL: string;
  INTERNAL_SECRET: string;
  ADMIN_TOKEN: string;
}

/** What the bench needs from any shape: limits that let the load through, per-request logs as in production. */
const benchEnv = (env: ShapeEnv) => ({ ...env, TOKEN_RATE_LIMIT_PER_CLIENT: '100000000', TOKEN_RATE_LIMIT_PER_ADDRESS: '100000000' });

async function portsFor() {
  const [issuer, pdp, backend, gateway] = [await freePort(), await freePort(), await freePort(), await freePort()];
  return {
    ports: { ISSUER_PORT: String(issuer), PDP_PORT: String(pdp), BACKEND_PORT: String(backend), GATEWAY_PORT: String(gateway), AUTH_URL: `http://127.0.0.1:${issuer}` },
    urls: { authUrl: `http://127.0.0.1:${issuer}`, gatewayUrl: `http://127.0.0.1:${gateway}`, pdpUrl: `http://127.0.0.1:${pdp}`, backendUrl: `http://127.0.0.1:${backend}` },
  };
}

/** Each service as its own process, as .ci/run's "each service as its own process" step starts them. */
export async function startDeployed(env: ShapeEnv): Promise<Shape> {
  const { ports, urls } = await portsFor();
  const services = [['issuer', 'issuer/main.ts'], ['pdp', 'policies/main.ts'], ['backend', 'backend/main.ts'], ['gateway', 'gateway/main.ts']] as const;
  const started: Child[] = [];
  try {
    for (const [name, entry] of services) {
      const management = await freePort();
      const child = await spawnChild(name, entry, { ...benchEnv(env), ...ports, MANAGEMENT_PORT: String(management) }, [], true);
      started.push(child);
      await untilReady(child, `http://127.0.0.1:${management}`, 120_000);
    }
  } catch (err) {
    await Promise.all(started.map((c) => c.stop()));
    throw err;
  }
  return { name: 'deployed', ...urls, processes: started, stop: async () => void (await Promise.all(started.map((c) => c.stop()))) };
}

/** The four services in one process, as `npm start` runs them. */
export async function startAllInOne(env: ShapeEnv): Promise<Shape> {
  const { ports, urls } = await portsFor();
  const management = await freePort();
  const child = await spawnChild('all-in-one', 'infra/start.ts', { ...benchEnv(env), ...ports, MANAGEMENT_PORT: String(management) }, [], true);
  // Ready before it seeds the demo data: the run starts once it says it is up.
  const up = new Promise<void>((resolve) => child.process.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('is up') && resolve()));
  try {
    await untilReady(child, `http://127.0.0.1:${management}`, 120_000);
    await up;
  } catch (err) {
    await child.stop();
    throw err;
  }
  return { name: 'all-in-one', ...urls, processes: [child], stop: () => child.stop() };
}
