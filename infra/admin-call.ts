// How every `npm run admin` command reaches the admin API: where it is (--url, ADMIN_URL), with which token (--token,
// ADMIN_TOKEN), and how an answer becomes the CLI's exit code (0 done, 1 refused, 2 usage, 3 unreachable or failing).
// One place, so the generated commands, export and seed-load cannot answer the same failure differently.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8181/admin/v1';
export const COMMON_FLAGS_HELP = 'Common flags: --url <admin URL> (ADMIN_URL), --token <token> (ADMIN_TOKEN), --help';
const NO_TOKEN =
  'no admin token: set ADMIN_TOKEN or pass --token (the operator token npm start prints, or a tenant admin key)';

/** The flags every command takes besides its own. */
export const COMMON_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

export interface AdminTarget {
  base: string;
  token: string;
}

/** A refusal or failure of the admin API with its exit code: 1 refused (4xx), 3 unreachable or failing (5xx). */
export class AdminCallFailed extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 3,
    /** The answer's status; undefined when the API was not reached. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A command line the command cannot run: its message goes to stderr with the command's help, exit 2. */
export class UsageError extends Error {}

/**
 * node:util's strict parseArgs, throwing UsageError. The argument after a string option is its value even when it
 * starts with "-", as the POSIX utility conventions have it: parseArgs alone refuses `--token -x…` as ambiguous, and a
 * base64url token, secret or key id starts with "-" one time in 64.
 */
export function parseCommandLine<T extends ParseArgsConfig & { args: string[] }>(config: T) {
  const args: string[] = [];
  for (let i = 0; i < config.args.length; i++) {
    const arg = config.args[i]!;
    if (arg === '--') {
      args.push(...config.args.slice(i));
      break;
    }
    const takesValue = /^--[^=]+$/.test(arg) && config.options?.[arg.slice(2)]?.type === 'string';
    args.push(takesValue && i + 1 < config.args.length ? `${arg}=${config.args[++i]}` : arg);
  }
  try {
    return parseArgs({ ...config, args, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Parses a hand-written command's flags (its own and the common ones); throws UsageError on an unknown flag. */
export function parseFlags<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  return parseCommandLine({ args, options: { ...COMMON_OPTIONS, ...options } }).values;
}

/** The admin API and the token the flags or the environment name; UsageError when no token is given. */
export function adminTarget(
  flags: { url?: string | undefined; token?: string | undefined },
  env: Record<string, string | undefined>,
): AdminTarget {
  const token = flags.token ?? env.ADMIN_TOKEN;
  if (!token) throw new UsageError(NO_TOKEN);
  return { base: (flags.url ?? env.ADMIN_URL ?? DEFAULT_ADMIN_URL).replace(/\/+$/, ''), token };
}

/**
 * Sends one request and returns the answer with its body unread (a stream is read as it arrives); an unreachable API
 * and any non-2xx answer throw AdminCallFailed naming the request, with the answer's body (a Problem) pretty-printed.
 */
export async function adminFetch(
  { base, token }: AdminTarget,
  method: string,
  path: string,
  { body, timeoutMs, headers }: { body?: unknown; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      ...(timeoutMs !== undefined && { signal: AbortSignal.timeout(timeoutMs) }),
    });
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error) : (err as Error);
    throw new AdminCallFailed(`cannot reach the admin API at ${base}: ${cause.message}`, 3);
  }
  if (res.ok) return res;
  const answer = readable(await res.text());
  throw new AdminCallFailed(`${method} ${path} -> ${res.status}\n${answer}`, res.status >= 500 ? 3 : 1, res.status);
}

/** One request whose answer is JSON (or empty: undefined), within 30 s. */
export async function adminJson<T>(target: AdminTarget, method: string, path: string, body?: unknown): Promise<T> {
  const text = await (await adminFetch(target, method, path, { body, timeoutMs: 30_000 })).text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** An answer's body: parsed JSON, the text when it is not JSON, undefined when empty. */
export function jsonOrText(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A JSON answer indented for a person; any other text as it came. */
function readable(text: string): string {
  const answer = jsonOrText(text) ?? '';
  return typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2);
}

/**
 * Runs a command's body and turns what it throws into the exit code and a line on stderr: a UsageError exits 2 with
 * `help`, an AdminCallFailed with its own code; anything else is a defect and is thrown on.
 */
export async function exitCodeOf(
  run: () => Promise<number>,
  io: { err(text: string): void },
  help: string,
): Promise<number> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UsageError) return (io.err(`${err.message}\n\n${help}`), 2);
    if (err instanceof AdminCallFailed) return (io.err(err.message), err.exitCode);
    throw err;
  }
}
