// `npm run bench`: the processes of a run, and the two shapes of the product: each service in its own process as
// deployed (the headline), and the four in one process (`npm start`).
import { Child, freePorts, nodeEntry, SERVICES, startProcesses, untilReady } from '../tests/support/processes.js';

/** With BENCH_CPU_PROF=<dir>, the services write V8 CPU profiles there when they stop. */
const PROFILE_ARGS = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];

/**
 * A process of the run (`node --import tsx <entry>`), with an IPC channel for those that report to the run, CPU
 * profiles when BENCH_CPU_PROF asks for them, and a word on standard error if it dies before the run stops it.
 */
export async function spawnChild(
  name: string,
  entry: string,
  env: Record<string, string>,
  args: string[] = [],
  profile = false,
): Promise<Child> {
  const child = new Child(name, ...nodeEntry(entry, args, profile ? PROFILE_ARGS : []), {
    env: { ...process.env, ...env },
    ipc: true,
  });
  await child.start();
  return reportingEarlyExit(child);
}

/** Says so on standard error when `child` exits before the run stops it (its figures would be missing). */
function reportingEarlyExit(child: Child): Child {
  let stopping = false;
  child.process.once('exit', (code, signal) => {
    if (!stopping)
      console.error(
        `bench: ${child.name} exited (${code ?? signal}) before the run ended\n${child.output.slice(-4000)}`,
      );
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
  /** The gateway's Prometheus metrics (its management listener). */
  gatewayMetricsUrl: string;
  /** The product's processes, measured for CPU. */
  processes: Child[];
  stop(): Promise<void>;
}

export interface ShapeEnv {
  DATABASE_URL: string;
  REDIS_URL: string;
  INTERNAL_SECRET: string;
  ADMIN_TOKEN: string;
  /** More settings for every service (the traced R1 run's OTEL_ settings). */
  settings?: Record<string, string>;
}

/**
 * What the bench needs from any shape: limits that let the load through, per-request logs as in production, and the
 * client_credentials grant (C1).
 */
const BENCH_SETTINGS = {
  TOKEN_RATE_LIMIT_PER_CLIENT: '100000000',
  TOKEN_RATE_LIMIT_PER_ADDRESS: '100000000',
  ISSUER_ENABLE_CLIENT_CREDENTIALS: 'true',
};

/** Each service as its own process, as .ci/run's "each service as its own process" step starts them. */
export async function startDeployed(env: ShapeEnv): Promise<Shape> {
  const system = await startProcesses({
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    secrets: { adminToken: env.ADMIN_TOKEN, internalSecret: env.INTERNAL_SECRET },
    settings: { ...BENCH_SETTINGS, ...env.settings },
    nodeArgs: PROFILE_ARGS,
  });
  const processes = SERVICES.map((s) => reportingEarlyExit(system.services[s]));
  const { authUrl, gatewayUrl, pdpUrl, backendUrl } = system;
  return {
    name: 'deployed',
    authUrl,
    gatewayUrl,
    pdpUrl,
    backendUrl,
    gatewayMetricsUrl: `${system.managementUrls.gateway}/metrics`,
    processes,
    stop: () => system.close(),
  };
}

/** The four services in one process, as `npm start` runs them. */
export async function startAllInOne({ settings, ...env }: ShapeEnv): Promise<Shape> {
  const [issuer, pdp, backend, gateway, management] = (await freePorts(5)) as [number, number, number, number, number];
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const urls = { authUrl: url(issuer), gatewayUrl: url(gateway), pdpUrl: url(pdp), backendUrl: url(backend) };
  const ports = {
    ISSUER_PORT: String(issuer),
    PDP_PORT: String(pdp),
    BACKEND_PORT: String(backend),
    GATEWAY_PORT: String(gateway),
    AUTH_URL: urls.authUrl,
  };
  const child = await spawnChild(
    'all-in-one',
    'infra/start.ts',
    { ...env, ...BENCH_SETTINGS, ...settings, ...ports, MANAGEMENT_PORT: String(management) },
    [],
    true,
  );
  // Ready before it seeds the demo data: the run starts once it says it is up.
  const up = new Promise<void>((resolve) =>
    child.process.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('is up') && resolve()),
  );
  try {
    await untilReady(child, `http://127.0.0.1:${management}`, 120_000);
    await up;
  } catch (err) {
    await child.stop();
    throw err;
  }
  return {
    name: 'all-in-one',
    ...urls,
    gatewayMetricsUrl: `http://127.0.0.1:${management}/metrics`,
    processes: [child],
    stop: () => child.stop(),
  };
}
