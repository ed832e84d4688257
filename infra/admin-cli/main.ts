// `npm run admin -- <command> [args] [options]`: the admin API from the command line. Exit codes for scripts:
// 0 done, 1 the API refused (4xx, Problem on stderr), 2 bad usage, 3 the API could not be reached or failed (5xx).
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { COMMANDS, type CommandSpec, type OptionSpec } from './commands.js';

const EXIT = { ok: 0, refused: 1, usage: 2, unavailable: 3 } as const;
const DEFAULT_URL = 'http://127.0.0.1:8181/admin/v1';

const GLOBAL_OPTIONS = {
  url: { type: 'string', help: `admin API base URL (env ADMIN_URL, default ${DEFAULT_URL})` },
  token: { type: 'string', help: 'operator token or tenant admin key (env ADMIN_TOKEN)' },
  output: { type: 'string', help: 'json (default) or table' },
  help: { type: 'boolean', help: 'show help' },
} as const;

class UsageError extends Error {}

function commandHelp(name: string, spec: CommandSpec): string {
  const lines = [`Usage: npm run admin -- ${name} ${spec.args.map((a) => `<${a}>`).join(' ')} [options]`, '', spec.summary, '', 'Options:'];
  for (const [opt, o] of Object.entries(spec.options)) lines.push(`  --${opt}${o.kind === 'strings' ? ' (repeatable)' : ''}${o.required ? ' (required)' : ''}  ${o.help}`);
  for (const [opt, o] of Object.entries(GLOBAL_OPTIONS)) lines.push(`  --${opt}  ${o.help}`);
  return lines.join('\n');
}

function generalHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return [
    'Usage: npm run admin -- <command> [args] [options]   (npm run admin -- <command> --help for its options)',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`),
    '',
    'Exit codes: 0 done, 1 refused by the API (4xx), 2 bad usage, 3 API unreachable or failing (5xx).',
  ].join('\n');
}

function optionValue(name: string, spec: OptionSpec, raw: unknown): unknown {
  switch (spec.kind) {
    case 'integer': {
      if (!/^-?\d+$/.test(String(raw))) throw new UsageError(`--${name} must be an integer`);
      return Number(raw);
    }
    case 'true-false': {
      if (raw !== 'true' && raw !== 'false') throw new UsageError(`--${name} must be true or false`);
      return raw === 'true';
    }
    case 'json-file': {
      try {
        return JSON.parse(readFileSync(String(raw), 'utf8'));
      } catch (err) {
        throw new UsageError(`--${name}: cannot read JSON from ${raw}: ${(err as Error).message}`);
      }
    }
    default:
      return raw;
  }
}

interface Invocation {
  spec: CommandSpec;
  name: string;
  url: string;
  token: string;
  output: 'json' | 'table';
  request: { method: string; path: string; body?: unknown };
}

/** The command line as a request; throws UsageError for anything a script author must fix. Undefined = help shown. */
function parse(argv: string[], env: NodeJS.ProcessEnv): Invocation | undefined {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === 'help') return void console.log(generalHelp());
  const spec = COMMANDS[name];
  if (!spec) throw new UsageError(`unknown command: ${name}\n\n${generalHelp()}`);
  const options: ParseArgsConfig['options'] = {};
  for (const [opt, o] of Object.entries(spec.options)) options[opt] = { type: 'string', multiple: o.kind === 'strings' };
  for (const [opt, o] of Object.entries(GLOBAL_OPTIONS)) options[opt] = { type: o.type };
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${commandHelp(name, spec)}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return void console.log(commandHelp(name, spec));
  if (positionals.length !== spec.args.length)
    throw new UsageError(`${name} takes ${spec.args.length} argument(s): ${spec.args.map((a) => `<${a}>`).join(' ') || 'none'}\n\n${commandHelp(name, spec)}`);
  const args = Object.fromEntries(spec.args.map((a, i) => [a, positionals[i]!]));
  const opts: Record<string, unknown> = {};
  for (const [opt, o] of Object.entries(spec.options)) {
    const raw = values[opt];
    if (raw === undefined) {
      if (o.required) throw new UsageError(`--${opt} is required\n\n${commandHelp(name, spec)}`);
      if (o.kind === 'strings' && o.field) opts[opt] = [];
      continue;
    }
    opts[opt] = optionValue(opt, o, raw);
  }
  const token = (values.token as string | undefined) ?? env.ADMIN_TOKEN;
  if (!token) throw new UsageError('no admin token: set ADMIN_TOKEN or pass --token');
  const output = (values.output as string | undefined) ?? 'json';
  if (output !== 'json' && output !== 'table') throw new UsageError('--output must be json or table');

  let body: unknown;
  if (spec.body === 'fields') {
    body = Object.fromEntries(Object.entries(spec.options).filter(([opt, o]) => o.field && opts[opt] !== undefined).map(([opt, o]) => [o.field!, opts[opt]]));
  } else if (spec.body) body = opts[spec.body.rawBody];
  return {
    spec, name, token, output,
    url: ((values.url as string | undefined) ?? env.ADMIN_URL ?? DEFAULT_URL).replace(/\/+$/, ''),
    request: { method: spec.method, path: spec.path(args, opts), ...(body !== undefined && { body }) },
  };
}

/** Rows for console.table: a list's items, or an object's fields one per row. */
function printTable(data: unknown): void {
  if (data && typeof data === 'object' && Array.isArray((data as { items?: unknown }).items)) {
    const { items, ...rest } = data as { items: unknown[] };
    if (Object.keys(rest).length) console.table([rest]);
    console.table(items);
  } else if (data && typeof data === 'object') {
    console.table(Object.entries(data).map(([field, value]) => ({ field, value: typeof value === 'object' ? JSON.stringify(value) : value })));
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let inv: Invocation | undefined;
  try {
    inv = parse(argv, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(err.message);
    return EXIT.usage;
  }
  if (!inv) return EXIT.ok;
  let res: Response;
  try {
    res = await fetch(`${inv.url}${inv.request.path}`, {
      method: inv.request.method,
      headers: { authorization: `Bearer ${inv.token}`, ...(inv.request.body !== undefined && { 'content-type': 'application/json' }) },
      body: inv.request.body === undefined ? undefined : JSON.stringify(inv.request.body),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    console.error(`cannot reach the admin API at ${inv.url}: ${(err as Error).message}`);
    return EXIT.unavailable;
  }
  const text = await res.text();
  if (!res.ok) {
    console.error(`${inv.name}: HTTP ${res.status}${text ? ` ${text}` : ''}`);
    return res.status >= 500 ? EXIT.unavailable : EXIT.refused;
  }
  if (!text) return EXIT.ok; // 204
  const data: unknown = JSON.parse(text);
  if (inv.output === 'table') printTable(data);
  else console.log(JSON.stringify(data, null, 2));
  return EXIT.ok;
}

process.exitCode = await run(process.argv.slice(2), process.env);
