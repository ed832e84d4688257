// Real processes for fault tests and the soak: each service as its own Node process (`node --import tsx
// <service>/main.ts`, one process per service, so its pid is the service itself), a private PostgreSQL cluster and a
// private redis-server, each on a free port. A test may stop, pause (SIGSTOP: "slower than any deadline"), kill and
// restart any of them without touching the machine's shared servers.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomSecret } from '../../common/secrets.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const START_TIMEOUT_MS = 60_000;

/**
 * Where ports for child processes come from: below the kernel's ephemeral range (ip_local_port_range), which is where
 * every outgoing connection gets its source port. A port the kernel handed out with listen(0) and released here could
 * be taken by any process's connect() before the child bound it, and the child then fails to start. Each
 * jest worker draws from a slice of its own (the soak and the bench, outside jest, from slice 0), in turn from a random
 * start, and a port is handed out once per process: neither two workers nor two systems of one worker get the same.
 */
const PORT_SLICES = 9;
const portSlice = (() => {
  const low = 15_000;
  const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  // A machine whose ephemeral range starts lower has no port safe from it: the common default's bound then.
  const high = ephemeralLow - low >= PORT_SLICES * 100 ? ephemeralLow : 32_768;
  const size = Math.floor((high - low) / PORT_SLICES);
  const slice = Number(process.env.JEST_WORKER_ID ?? 0) % PORT_SLICES;
  return { first: low + slice * size, size, next: Math.floor(Math.random() * size) };
})();

/** Whether nothing listens on `port` of 127.0.0.1 right now: the server that proves it is returned, still listening. */
const tryListen = (port: number) =>
  new Promise<Server | undefined>((ok) => {
    const server = createServer();
    server.once('error', () => ok(undefined)).listen(port, '127.0.0.1', () => ok(server));
  });

/**
 * `n` distinct ports nobody listens on right now, for processes that bind them themselves. All are held open together
 * until each is known, so one call never hands out the same port twice.
 */
export async function freePorts(n: number): Promise<number[]> {
  const held: Server[] = [];
  try {
    for (let tried = 0; held.length < n; tried++) {
      if (tried === portSlice.size) throw new Error(`no free port left in ${portSlice.first}+${portSlice.size}`);
      const port = portSlice.first + (portSlice.next++ % portSlice.size);
      const server = await tryListen(port);
      if (server) held.push(server);
    }
    return held.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(held.map((server) => new Promise((ok) => server.close(ok))));
  }
}

export const freePort = async (): Promise<number> => (await freePorts(1))[0]!;

/** Fields of /proc/<pid>/stat after the command name (which may contain spaces): index 0 is the state, 1 the parent. */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // the process is gone
  }
}

/** The live children of `parent`. */
export function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => Number(statFields(pid)?.[1]) === parent);
}

export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** One line of figures for the CI log: `faults: <what>: name value, ...`. */
export const printFigures = (what: string, values: Record<string, unknown>) =>
  console.log(
    `faults: ${what}: ${Object.entries(values)
      .map(([k, v]) => `${k} ${typeof v === 'number' ? Math.round(v) : v}`)
      .join(', ')}`,
  );

export interface ChildOptions {
  env: NodeJS.ProcessEnv;
  /** A line of its output that says it is up; without one, start() returns once the process is spawned. */
  readyLine?: RegExp;
  /** An IPC channel, for a child that reports to its parent with process.send. */
  ipc?: boolean;
}

/**
 * `node --import tsx <entry>`: the child's pid is the process doing the work (npx and tsx's CLI would put a wrapper in
 * between).
 */
export const nodeEntry = (entry: string, args: string[] = [], nodeArgs: string[] = []): [string, string[]] => [
  process.execPath,
  [...nodeArgs, '--import', 'tsx', entry, ...args],
];

const OUTPUT_KEPT_CHARS = 65_536;

/**
 * One child process (a service, a server, a load generator), its output kept (the last 64 KiB) for failure messages
 * and log checks, started again on demand. The one launcher of the tests, fault suites and benchmark.
 */
export class Child {
  private proc: ChildProcess | undefined;
  private chunks: string[] = [];
  private kept = 0;
  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly opts: ChildOptions,
  ) {}

  get pid(): number {
    if (!this.proc?.pid || this.proc.exitCode !== null || this.proc.signalCode !== null)
      throw new Error(`${this.name} is not running`);
    return this.proc.pid;
  }

  get process(): ChildProcess {
    if (!this.proc) throw new Error(`${this.name} was never started`);
    return this.proc;
  }

  /** The last 64 KiB of its standard output and error. */
  get output(): string {
    return this.chunks.join('');
  }

  private keep(chunk: string): void {
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept - this.chunks[0]!.length >= OUTPUT_KEPT_CHARS) this.kept -= this.chunks.shift()!.length;
  }

  /** Starts the process and, when it has a ready line, waits until its output shows it. */
  async start(): Promise<void> {
    this.chunks = [];
    this.kept = 0;
    const proc = spawn(this.command, this.args, {
      cwd: ROOT,
      env: this.opts.env,
      stdio: ['ignore', 'pipe', 'pipe', ...(this.opts.ipc ? ['ipc' as const] : [])],
    });
    this.proc = proc;
    const { readyLine } = this.opts;
    let ready!: () => void;
    let isUp = !readyLine;
    const up = new Promise<void>((ok) => (ready = ok));
    const onData = (chunk: Buffer) => {
      this.keep(chunk.toString());
      if (isUp || !readyLine!.test(this.output)) return;
      isUp = true;
      ready();
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    if (!readyLine) return;
    let timer: NodeJS.Timeout | undefined;
    const failed = new Promise<never>((_ok, fail) => {
      timer = setTimeout(
        () => fail(new Error(`${this.name} did not start in ${START_TIMEOUT_MS} ms:\n${this.output}`)),
        START_TIMEOUT_MS,
      );
      proc.once('exit', (code, signal) =>
        fail(new Error(`${this.name} exited (${code ?? signal}) before it was ready:\n${this.output}`)),
      );
    });
    failed.catch(() => undefined); // an exit after the ready line is not a failed start
    try {
      await Promise.race([up, failed]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal` and waits for the exit (SIGKILL after 15 s); `process.exitCode` then tells how it ended. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((ok) => proc.once('exit', ok));
    proc.kill('SIGCONT'); // a paused process cannot act on its signal
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }

  pause(): void {
    process.kill(this.pid, 'SIGSTOP');
  }

  resume(): void {
    process.kill(this.pid, 'SIGCONT');
  }

  /** Resident set size in KiB, from /proc. */
  rssKiB(): number {
    const line = readFileSync(`/proc/${this.pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Number(line!.replace(/\D+/g, ''));
  }
}

/** Runs `command` as the user PostgreSQL needs: initdb and postgres refuse root, so root runs them as `postgres`. */
const asPostgresUser = (command: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0
    ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--clear-groups', '--', command, ...args]]
    : [command, args];

export interface PrivatePostgres {
  url: string;
  server: Child;
  /** Stops every process of the cluster (SIGSTOP): a database that hangs rather than one that is gone. */
  pause(): void;
  resume(): void;
  destroy(): Promise<void>;
}

/**
 * A throwaway PostgreSQL cluster (initdb into a temp directory) on a free port, trust authentication. `settings`
 * override the server settings below (the benchmark keeps fsync on and loads pg_stat_statements).
 */
export async function privatePostgres(settings: Record<string, string> = {}): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'tp-pg-'));
  if (process.getuid?.() === 0) {
    const idOf = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout);
    chownSync(dir, idOf('-u'), idOf('-g'));
  }
  const data = join(dir, 'data');
  const [initdb, initArgs] = asPostgresUser(join(PG_BIN, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  const init = spawnSync(initdb, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  // fsync off: the tests crash the server process, never the machine, so whatever was written to the OS survives.
  const serverSettings = { listen_addresses: '127.0.0.1', fsync: 'off', max_connections: '200', ...settings };
  const [postgres, args] = asPostgresUser(join(PG_BIN, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    ...Object.entries(serverSettings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ]);
  const server = new Child('postgres', postgres, args, {
    env: { PATH: process.env.PATH },
    readyLine: /database system is ready to accept connections/,
  });
  await server.start();
  // Every process of the cluster: each connection has a backend process of its own, which pausing the postmaster
  // alone would leave answering.
  const signalAll = (signal: NodeJS.Signals) => {
    for (const pid of [server.pid, ...childrenOf(server.pid)]) {
      try {
        process.kill(pid, signal);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // a backend that ended meanwhile
      }
    }
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    server,
    pause: () => signalAll('SIGSTOP'),
    resume: () => signalAll('SIGCONT'),
    async destroy() {
      await server.stop('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server of its own on a free port, without persistence. */
export async function privateRedis(): Promise<{ url: string; server: Child }> {
  const port = await freePort();
  const server = new Child(
    'redis',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { env: { PATH: process.env.PATH }, readyLine: /Ready to accept connections/ },
  );
  await server.start();
  return { url: `redis://127.0.0.1:${port}`, server };
}

export type ServiceName = 'issuer' | 'policies' | 'backend' | 'gateway';
export const SERVICES: ServiceName[] = ['issuer', 'policies', 'backend', 'gateway'];

export interface ProcessSystem {
  authUrl: string;
  gatewayUrl: string;
  /** base_url, with /v1. */
  baseUrl: string;
  pdpUrl: string;
  backendUrl: string;
  /** Each service's management listener (/livez, /readyz, /metrics). */
  managementUrls: Record<ServiceName, string>;
  adminToken: string;
  internalSecret: string;
  databaseUrl: string;
  services: Record<ServiceName, Child>;
  close(): Promise<void>;
}

export interface ProcessOptions {
  databaseUrl: string;
  redisUrl?: string | undefined;
  /** Settings for every service beyond ports, stores and secrets (a gateway file, lifted limits). */
  settings?: Record<string, string>;
  /** Settings for one service only (each service's own tracing protocol). */
  serviceSettings?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Node flags for every service (CPU profiles). */
  nodeArgs?: string[];
  /** Fixed secrets instead of fresh random ones. */
  secrets?: { adminToken: string; internalSecret: string };
  /** All four start at once and migrate the fresh database together; otherwise the PDP migrates it first. */
  together?: boolean;
}

/**
 * The four services, each its own process with its management listener, on free ports, sharing `databaseUrl` (and
 * `redisUrl` when given), as docs/operations.md's "Running each service alone" runs them. The one launcher of the fault suites,
 * the shutdown suite, the soak and the benchmark's deployed shape.
 */
export async function startProcesses(opts: ProcessOptions): Promise<ProcessSystem> {
  const free = await freePorts(2 * SERVICES.length);
  const port = Object.fromEntries(SERVICES.map((s, i) => [s, free[i]!])) as Record<ServiceName, number>;
  const management = Object.fromEntries(SERVICES.map((s, i) => [s, free[SERVICES.length + i]!])) as Record<
    ServiceName,
    number
  >;
  const url = (p: number) => `http://127.0.0.1:${p}`;
  const { adminToken, internalSecret } = opts.secrets ?? { adminToken: randomSecret(), internalSecret: randomSecret() };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: opts.databaseUrl,
    ...(opts.redisUrl && { REDIS_URL: opts.redisUrl }),
    INTERNAL_SECRET: internalSecret,
    ADMIN_TOKEN: adminToken,
    ISSUER_PORT: String(port.issuer),
    AUTH_URL: url(port.issuer),
    PDP_PORT: String(port.policies),
    BACKEND_PORT: String(port.backend),
    GATEWAY_PORT: String(port.gateway),
    LOG_LEVEL: 'info', // the "<service> listening" line says the process is up
    ...opts.settings,
  };
  const service = (name: ServiceName) =>
    new Child(name, ...nodeEntry(`${name}/main.ts`, [], opts.nodeArgs), {
      env: { ...env, ...opts.serviceSettings?.[name], MANAGEMENT_PORT: String(management[name]) },
      readyLine: new RegExp(`"msg":"${name}[^"]*listening"`),
    });
  const services = Object.fromEntries(SERVICES.map((name) => [name, service(name)])) as Record<ServiceName, Child>;
  try {
    if (opts.together) await Promise.all(SERVICES.map((s) => services[s].start()));
    else {
      // Migrations first, in one process, so four concurrent starts do not all wait on knex's migration lock; then
      // the other three together (the gateway needs nobody at start: it fetches the key set on its first request).
      await services.policies.start();
      await Promise.all([services.issuer.start(), services.backend.start(), services.gateway.start()]);
    }
  } catch (err) {
    await Promise.all(SERVICES.map((s) => services[s].stop('SIGKILL')));
    throw err;
  }
  return {
    authUrl: url(port.issuer),
    gatewayUrl: url(port.gateway),
    baseUrl: `${url(port.gateway)}/v1`,
    pdpUrl: url(port.policies),
    backendUrl: url(port.backend),
    managementUrls: Object.fromEntries(SERVICES.map((s) => [s, url(management[s])])) as Record<ServiceName, string>,
    adminToken,
    internalSecret,
    databaseUrl: opts.databaseUrl,
    services,
    async close() {
      await Promise.all(SERVICES.map((s) => services[s].stop()));
    },
  };
}

/**
 * A request that got no answer: the connection was refused, reset or cut. By name and message, since undici's errors
 * come from another realm under jest.
 */
export function isConnectionError(err: unknown): boolean {
  const e = err as Error | undefined;
  return e?.name === 'TypeError' && /^(fetch failed|terminated)$/.test(e.message);
}

/**
 * Polls `probe` until it returns true (or throws after `timeoutMs`); returns the milliseconds it took. A probe whose
 * request gets no answer counts as "not yet"; any other error (an undeclared answer, a failed expectation) is thrown.
 */
export async function waitFor(
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  everyMs = 200,
): Promise<number> {
  const started = Date.now();
  const attempt = async () => {
    try {
      return await probe();
    } catch (err) {
      if (isConnectionError(err)) return false;
      throw err;
    }
  };
  while (!(await attempt())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
  return Date.now() - started;
}

/**
 * Waits until the child's management listener reports ready (`/readyz` 200); fails with its output if it exits first or
 * never does.
 */
export async function untilReady(child: Child, managementUrl: string, timeoutMs = 60_000): Promise<void> {
  const exited = () => child.process.exitCode !== null;
  const ready = () =>
    fetch(`${managementUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
  await waitFor(`${child.name} ready`, async () => exited() || ready(), timeoutMs, 200).catch((err: Error) => {
    throw new Error(`${err.message}:\n${child.output}`);
  });
  if (exited()) throw new Error(`${child.name} exited before it was ready:\n${child.output}`);
}
