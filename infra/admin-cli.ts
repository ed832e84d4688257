// `npm run admin -- <command> [args] [--flags]`: the admin API from a shell, for operators and tenant admins.
// The commands are read from docs/openapi/admin-api.yaml, so every operation the document describes is a command
// and the CLI cannot drift from the API: the operationId names it (createTenant -> create-tenant), path parameters
// are positional arguments in path order, query parameters and the top-level fields of the JSON body are --flags
// (camelCase -> kebab-case; arrays repeat the flag, objects take JSON), and --body takes a whole JSON body (or
// @file). Exit codes: 0 done, 1 the API refused (4xx, its Problem on stderr), 2 usage error (nothing sent), 3 the API
// unreachable or failing (5xx): scripts may retry on 3, never on 1 or 2.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Writable } from 'node:stream';
import {
  COMMON_FLAGS_HELP,
  DEFAULT_ADMIN_URL,
  UsageError,
  adminFetch,
  adminTarget,
  exitCodeOf,
  jsonOrText,
  parseCommandLine,
} from './admin-call.js';
import { runExport } from './admin-export.js';
import { runKeys } from './admin-keys.js';
import { runSeedLoad } from './admin-seed-load.js';
import { runConfigCommand } from './admin-config.js';

type Schema = Record<string, any>;
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Where a streamed answer (export) is written as it arrives; process.stdout unless given. */
  stdout?: Writable;
}
export interface Command {
  name: string;
  operationId: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  positional: { name: string; description: string }[];
  query: Map<string, Schema>;
  body: Schema | undefined;
  bodyRequired: boolean;
}

const DOCS = new URL('../docs/openapi/', import.meta.url);
const documents = new Map<string, Schema>();
const load = (file: string) =>
  documents.get(file) ?? documents.set(file, parseYaml(readFileSync(new URL(file, DOCS), 'utf8'))).get(file)!;

/** Follows `$ref`s (within a document and to its sibling documents) until a schema or parameter object remains. */
function deref(node: Schema, file: string): [Schema, string] {
  while (typeof node?.$ref === 'string') {
    const [target, pointer = ''] = node.$ref.split('#');
    if (target) file = target.replace(/^\.\//, '');
    node = pointer
      .split('/')
      .filter(Boolean)
      .reduce((at: Schema, key: string) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')], load(file));
  }
  return [node, file];
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export function loadCommands(): Command[] {
  const file = 'admin-api.yaml';
  const commands: Command[] = [];
  for (const [path, item] of Object.entries<Schema>(load(file).paths)) {
    for (const [method, op] of Object.entries<Schema>(item)) {
      if (method === 'parameters') continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => deref(p, file)[0]);
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      commands.push({
        // An operation with a hand-written command (a stream, say) names it with x-cli-command.
        name: op['x-cli-command'] ?? kebab(op.operationId),
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? '',
        description: op.description ?? '',
        positional: [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
          name: name!,
          description: parameters.find((p) => p.name === name)?.description ?? '',
        })),
        query: new Map(parameters.filter((p) => p.in === 'query').map((p) => [p.name, deref(p.schema, file)[0]])),
        body: bodySchema && deref(bodySchema, file)[0],
        bodyRequired: op.requestBody?.required === true,
      });
    }
  }
  return commands;
}

/** The body's top-level fields that can be flags, with their resolved schemas. */
function bodyFields(command: Command): Map<string, Schema> {
  const properties = command.body?.properties as Record<string, Schema> | undefined;
  if (!properties) return new Map();
  return new Map(Object.entries(properties).map(([name, s]) => [name, deref(s, 'admin-api.yaml')[0]]));
}

function describeType(schema: Schema): string {
  if (schema.enum) return schema.enum.join('|');
  if (schema.type === 'array')
    return `${describeType(deref(schema.items ?? {}, 'admin-api.yaml')[0])} (repeat the flag)`;
  if (schema.type === 'object') return 'JSON object';
  return schema.type ?? 'value';
}

function commandHelp(command: Command): string {
  const required = new Set<string>(command.body?.required ?? []);
  const lines = [
    `npm run admin -- ${command.name}${command.positional.map((p) => ` <${p.name}>`).join('')} [flags]`,
    '',
    `${command.summary}. ${command.method} /admin/v1${command.path}`,
    ...(command.description ? [command.description.trim()] : []),
    '',
  ];
  for (const p of command.positional) lines.push(`  <${p.name}>  ${p.description.split('\n')[0]}`);
  for (const [name, schema] of command.query)
    lines.push(`  --${kebab(name)} <${describeType(schema)}>  ${(schema.description ?? '').split('\n')[0]}`);
  for (const [name, schema] of bodyFields(command))
    lines.push(
      (
        `  --${kebab(name)} <${describeType(schema)}>${required.has(name) ? '  (required)' : ''}  ` +
        `${(schema.description ?? '').split('\n')[0]}`
      ).trimEnd(),
    );
  if (command.body)
    lines.push(
      '  --body <JSON | @file>  the whole request body instead of' +
        `${bodyFields(command).size ? ' (or merged under) the field flags' : ' flags'}`,
    );
  lines.push('', `${COMMON_FLAGS_HELP}, --output json|table`);
  return lines.join('\n');
}

function overview(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'npm run admin -- <command> [arguments] [flags]      (npm run admin -- <command> --help for one command)',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    `  ${'audit'.padEnd(width)}  The audit trail: --tenant <tenantId> for one tenant (list-tenant-audit), ` +
      'else all (list-audit)',
    `  ${'keys'.padEnd(width)}  The issuer's signing-key set, on this machine: ` +
      'generate | rotate | retire --kid <kid> (keys --help)',
    `  ${'seed-load'.padEnd(width)}  Persons, raised limits and the users file for a k6 run: ` +
      '--tenant --client --persons N (seed-load --help)',
    `  ${'dump'.padEnd(width)}  A tenant's configuration as YAML: --tenant <tenantId> > tenant.yaml (dump --help)`,
    `  ${'diff'.padEnd(width)}  What apply would change: diff <file> (exit 0 nothing, 4 something; diff --help)`,
    `  ${'apply'.padEnd(width)}  Makes a tenant what its file says: apply <file> [--prune] (apply --help)`,
    '',
    `Environment: ADMIN_URL (default ${DEFAULT_ADMIN_URL}), ADMIN_TOKEN (operator token or tenant admin key).`,
    'Exit codes: 0 done, 1 the API refused the request (4xx), 2 usage error, ' +
      '3 the admin API unreachable or failing (5xx): retry only on 3.',
  ].join('\n');
}

function coerce(flag: string, raw: string, schema: Schema): unknown {
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n))
        throw new UsageError(`--${flag} takes a number, not ${JSON.stringify(raw)}`);
      return n;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false')
        throw new UsageError(`--${flag} takes true or false, not ${JSON.stringify(raw)}`);
      return raw === 'true';
    case 'object':
      return parseJson(flag, raw);
    default:
      return raw;
  }
}

function parseJson(flag: string, raw: string): unknown {
  const text = raw.startsWith('@') ? readFileSync(raw.slice(1), 'utf8') : raw;
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--${flag} is not valid JSON${raw.startsWith('@') ? ` (file ${raw.slice(1)})` : ''}`);
  }
}

/** Builds the HTTP request for `command` from the command line's remaining arguments. */
function buildRequest(command: Command, args: string[]) {
  const fields = bodyFields(command);
  const flags = new Map<string, { key: string; where: 'query' | 'body'; schema: Schema }>();
  for (const [key, schema] of command.query) flags.set(kebab(key), { key, where: 'query', schema });
  for (const [key, schema] of fields) flags.set(kebab(key), { key, where: 'body', schema });
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {
    url: { type: 'string' },
    token: { type: 'string' },
    output: { type: 'string' },
    help: { type: 'boolean' },
    ...(command.body && { body: { type: 'string' } }),
  };
  for (const [flag, { schema }] of flags) options[flag] = { type: 'string', multiple: schema.type === 'array' };

  const { values, positionals } = parseCommandLine({ args, options, allowPositionals: true });
  if (values.help) return { help: true as const };
  if (positionals.length !== command.positional.length)
    throw new UsageError(
      `${command.name} takes ${command.positional.length} argument(s): ` +
        `${command.positional.map((p) => `<${p.name}>`).join(' ') || 'none'}`,
    );

  const path = command.positional.reduce(
    (p, { name }, i) => p.replace(`{${name}}`, encodeURIComponent(positionals[i]!)),
    command.path,
  );
  const query = new URLSearchParams();
  let body: unknown = values.body === undefined ? undefined : parseJson('body', values.body as string);
  for (const [flag, { key, where, schema }] of flags) {
    const raw = values[flag] as string | string[] | undefined;
    if (raw === undefined) continue;
    if (where === 'query') query.set(key, String(coerce(flag, raw as string, schema)));
    else {
      const itemSchema = schema.type === 'array' ? deref(schema.items ?? {}, 'admin-api.yaml')[0] : schema;
      const value = Array.isArray(raw) ? raw.map((r) => coerce(flag, r, itemSchema)) : coerce(flag, raw, schema);
      if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body)))
        throw new UsageError('--body must be a JSON object to combine with field flags');
      body = { ...(body as object | undefined), [key]: value };
    }
  }
  if (command.bodyRequired && body === undefined)
    throw new UsageError(`${command.name} needs a body: see npm run admin -- ${command.name} --help`);
  const output = (values.output as string | undefined) ?? 'json';
  if (output !== 'json' && output !== 'table') throw new UsageError('--output is json or table');
  return {
    help: false as const,
    method: command.method,
    path: `${path}${query.size ? `?${query}` : ''}`,
    body,
    url: values.url as string | undefined,
    token: values.token as string | undefined,
    output: output as 'json' | 'table',
  };
}

/** An answer as rows and columns: a list (`items`) as one row per item, anything else as field/value pairs. */
function renderTable(body: unknown): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const items = (body as { items?: unknown })?.items;
  let rows: string[][];
  if (Array.isArray(items)) {
    const columns = [...new Set(items.flatMap((i) => Object.keys(i as object)))];
    rows = [columns, ...items.map((i) => columns.map((c) => cell((i as Record<string, unknown>)[c])))];
  } else if (body && typeof body === 'object')
    rows = [['field', 'value'], ...Object.entries(body).map(([k, v]) => [k, cell(v)])];
  else return cell(body);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map((r) =>
      r
        .map((v, c) => v.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Commands platform-interfaces.md names that act on one tenant with `--tenant`, and on every tenant without it. */
const TENANT_ALIASES: Record<string, [everyTenant: string, oneTenant: string]> = {
  audit: ['list-audit', 'list-tenant-audit'],
  'verify-audit': ['verify-audit', 'verify-tenant-audit'],
};

/**
 * `audit [--tenant <tenantId>] [flags]`: the audit trail as platform-interfaces.md names the command, for a tenant
 * (list-tenant-audit) or, without --tenant, across tenants (list-audit, operator); `verify-audit [--tenant <id>]`
 * the same way (a tenant admin key checks its tenant's entries).
 */
function tenantAlias(name: string, args: string[]): string[] {
  const [every, one] = TENANT_ALIASES[name]!;
  const at = args.findIndex((a) => a === '--tenant' || a.startsWith('--tenant='));
  if (at < 0) return [every, ...args];
  const [flag] = args.slice(at, at + 1);
  const tenant = flag!.includes('=') ? flag!.slice('--tenant='.length) : args[at + 1];
  const rest = args.filter((_, i) => i !== at && (flag!.includes('=') || i !== at + 1));
  return [one, tenant ?? '', ...rest];
}

/**
 * True when the arguments name no tenant and the token is a tenant admin key (`key_...`): the API would refuse the
 * every-tenant command to it.
 */
function withTenantKeyAlone(args: string[], env: Record<string, string | undefined>): boolean {
  if (args.some((a) => a === '--tenant' || a.startsWith('--tenant='))) return false;
  const flag = args.findIndex((a) => a === '--token' || a.startsWith('--token='));
  const token = flag < 0 ? env.ADMIN_TOKEN : args[flag]!.includes('=') ? args[flag]!.split('=')[1] : args[flag + 1];
  return token?.startsWith('key_') === true;
}

/** Runs one command line; returns the exit code. */
export async function main(argv: string[], env: Record<string, string | undefined>, io: Io): Promise<number> {
  if (argv[0] === 'keys') return runKeys(argv.slice(1), env, io);
  if (argv[0] === 'seed-load') return runSeedLoad(argv.slice(1), env, io);
  if (argv[0] === 'dump' || argv[0] === 'diff' || argv[0] === 'apply')
    return runConfigCommand(argv[0], argv.slice(1), env, io);
  const commands = loadCommands();
  const aliased = argv[0] && Object.hasOwn(TENANT_ALIASES, argv[0]) ? argv[0] : undefined;
  if (aliased && withTenantKeyAlone(argv.slice(1), env)) {
    io.err(`a tenant admin key reads its own tenant only: ${aliased} --tenant <tenantId>`);
    return 2;
  }
  const [name, ...rest] = aliased ? tenantAlias(aliased, argv.slice(1)) : argv;
  if (!name || name === '--help' || name === 'help') {
    io.out(overview(commands));
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`unknown command ${JSON.stringify(name)}; npm run admin -- --help lists them`);
    return 2;
  }
  if (command.name === 'export' || command.name === 'export-tenant')
    return runExport(rest, env, { stdout: io.stdout ?? process.stdout, err: io.err }, command.name === 'export-tenant');
  return exitCodeOf(
    async () => {
      const request = buildRequest(command, rest);
      if (request.help) return (io.out(commandHelp(command)), 0);
      const target = adminTarget(request, env);
      const res = await adminFetch(target, request.method, request.path, { body: request.body, timeoutMs: 30_000 });
      const answer = jsonOrText(await res.text());
      if (answer === undefined) io.out(`${request.method} ${request.path} -> ${res.status}`);
      else io.out(request.output === 'table' ? renderTable(answer) : JSON.stringify(answer, null, 2));
      return 0;
    },
    io,
    commandHelp(command),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2), process.env, {
    out: (t) => console.log(t),
    err: (t) => console.error(t),
  });
}
