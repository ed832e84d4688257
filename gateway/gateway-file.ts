// The gateway file: upstreams, routes and the ordered plugin list, read from YAML and validated before anything
// starts, against each plugin's settings schema and against the contract (docs/openapi/public-api.yaml). Every
// problem names the file, the line and the setting; `npm run gateway -- validate <file>` runs the same check.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../common/config.js';
import { locatedYaml, settingName, type YamlPath as Path } from '../common/yaml-lines.js';
import { CAPABILITIES, RESOURCE_TYPES } from '../wire/decision.js';
import { loadPublicApiDocument } from './openapi-document.js';
import { PLUGINS } from './plugins/index.js';
import type { AnyPlugin, RouteDefinition } from './plugins/plugin.js';

export const DEFAULT_GATEWAY_FILE = new URL('./gateway.yaml', import.meta.url).pathname;

/** Plugins every route must pass through, and the one that must run first (so every answer has a request id). */
const REQUIRED_PLUGINS = ['verify-token', 'authorize'];
const FIRST_PLUGIN = 'request-id';

const upstream = z
  .strictObject({
    /** A service of this deployment, reached at its configured URL (BACKEND_URL). */
    service: z.enum(['backend']).optional(),
    url: z.url({ protocol: /^https?$/ }).optional(),
    timeoutMs: z.number().int().positive().max(60_000).default(5000),
  })
  .refine((u) => (u.service === undefined) !== (u.url === undefined), 'set exactly one of service and url');

const route = z.strictObject({
  operationId: z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/),
  method: z.enum(['GET', 'PUT', 'DELETE']),
  path: z.string().regex(/^(\/(:[A-Za-z][A-Za-z0-9]*|[A-Za-z0-9._-]+))+$/, 'a path like /persons/:personId'),
  capability: z.enum(CAPABILITIES),
  resource: z.enum(RESOURCE_TYPES),
  upstream: z.string(),
  plugins: z.record(z.string(), z.unknown()).default({}),
});

/**
 * The plugins whose work is a span of its own in a sampled request's trace, as Kong's tracing_instrumentations: by
 * default those that wait on another service or on a signature check (the PDP call, Redis, the token's key); `all`
 * adds every plugin and each screen (the refusals decided from memory ahead of a plugin).
 */
export const DEFAULT_PLUGIN_SPANS = ['verify-token', 'authorize', 'rate-limit'];
const tracing = z.strictObject({
  pluginSpans: z.union([z.literal('all'), z.array(z.string())]).optional(),
});

const gatewayFile = z.strictObject({
  upstreams: z.record(z.string(), upstream),
  plugins: z.array(z.strictObject({ name: z.string(), config: z.unknown().optional() })).min(1),
  routes: z.array(route).min(1),
  tracing: tracing.default({}),
});

export type UpstreamDefinition = z.output<typeof upstream>;
export interface PluginUse {
  plugin: AnyPlugin;
  settings: unknown;
}
export interface GatewayDefinition {
  file: string;
  upstreams: Record<string, UpstreamDefinition>;
  /** In the order requests pass through them. */
  plugins: PluginUse[];
  routes: { route: RouteDefinition; settings: Record<string, unknown> }[];
  /** Which plugins' work is a span of its own in a sampled request (`all`: every plugin and screen). */
  pluginSpans: 'all' | ReadonlySet<string>;
}

/** A gateway file that cannot be used; the message lists every problem as file:line: setting: what is wrong. */
export class GatewayFileError extends ConfigError {}

/** The contract's operations: every operation of the public document that needs a token. */
function contractOperations() {
  const doc = loadPublicApiDocument() as {
    paths: Record<string, Record<string, { operationId: string; security?: { oauth2?: string[] }[] }>>;
  };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.security?.length)
      .map(([method, op]) => ({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path: path.replace(/\{(\w+)\}/g, ':$1'),
        capability: op.security!.flatMap((s) => s.oauth2 ?? [])[0],
      })),
  );
}

export function loadGatewayFile(file: string): GatewayDefinition {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new GatewayFileError(
      `${file}: cannot read the gateway file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  return parseGatewayFile(text, file);
}

export function parseGatewayFile(text: string, file: string): GatewayDefinition {
  const { doc, syntaxProblems, lineOf } = locatedYaml(text, file);
  const problems: string[] = [...syntaxProblems];
  const fail = () => new GatewayFileError(`${file}: invalid gateway file\n  ${problems.join('\n  ')}`);
  if (problems.length) throw fail();

  const at = (path: Path, problem: string) =>
    problems.push(`${file}:${lineOf(path)}: ${settingName(path)}: ${problem}`);
  const check = <T>(schema: z.ZodType<T>, value: unknown, base: Path): T | undefined => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const path = [...base, ...(issue.path as Path)];
      if (issue.code === 'unrecognized_keys') for (const key of issue.keys) at([...path, key], 'unknown setting');
      else at(path, issue.message);
    }
    return undefined;
  };

  const parsed = check(gatewayFile, doc.toJS(), []);
  if (!parsed) throw fail();

  // Plugins: known, once each, in an order where each one's inputs come first, with valid settings.
  const plugins: PluginUse[] = [];
  parsed.plugins.forEach(({ name, config }, i) => {
    const plugin = PLUGINS.get(name);
    if (!plugin)
      return at(['plugins', i, 'name'], `unknown plugin "${name}" (known: ${[...PLUGINS.keys()].join(', ')})`);
    if (plugins.some((u) => u.plugin.name === name))
      return at(['plugins', i, 'name'], `plugin "${name}" is listed twice`);
    for (const earlier of plugin.after)
      if (!plugins.some((u) => u.plugin.name === earlier))
        at(['plugins', i, 'name'], `"${name}" must come after "${earlier}"`);
    const settings = check(plugin.settings, config ?? {}, ['plugins', i, 'config']);
    if (settings !== undefined) plugins.push({ plugin, settings });
  });
  if (parsed.plugins[0]?.name !== FIRST_PLUGIN)
    at(['plugins', 0], `the first plugin must be "${FIRST_PLUGIN}", so every answer carries x-request-id`);
  for (const name of REQUIRED_PLUGINS)
    if (!parsed.plugins.some((p) => p.name === name))
      at(['plugins'], `"${name}" is missing: every route needs token verification and PDP authorization`);

  // Routes: each on a declared upstream, each plugin override valid for that plugin.
  const routes: GatewayDefinition['routes'] = [];
  parsed.routes.forEach(({ plugins: overrides, ...r }, i) => {
    if (!parsed.upstreams[r.upstream]) at(['routes', i, 'upstream'], `unknown upstream "${r.upstream}"`);
    const settings: Record<string, unknown> = {};
    for (const [name, override] of Object.entries(overrides)) {
      const use = plugins.find((u) => u.plugin.name === name);
      const path = ['routes', i, 'plugins', name];
      if (!use) at(path, unlisted(name, ', which sets the order'));
      else if (!use.plugin.perRoute)
        at(path, `"${name}" has one setting for the whole gateway; set it in the plugins list`);
      else if (override === null || typeof override !== 'object') at(path, "expected the plugin's settings (a map)");
      else settings[name] = check(use.plugin.settings, { ...(use.settings as object), ...override }, path);
    }
    routes.push({ route: r, settings });
  });

  // The contract: each of its operations routed exactly once, as it declares; no two routes on one method and path.
  const seen = new Map<string, number>();
  parsed.routes.forEach((r, i) => {
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) at(['routes', i, 'path'], `${key} is already routed by routes[${seen.get(key)}]`);
    seen.set(key, i);
  });
  for (const op of contractOperations()) {
    const found = parsed.routes.flatMap((r, i) => (r.operationId === op.operationId ? [i] : []));
    if (found.length === 0)
      at(['routes'], `contract operation ${op.operationId} (${op.method} ${op.path}) is not routed`);
    for (const i of found.slice(1)) at(['routes', i, 'operationId'], `${op.operationId} is routed more than once`);
    const r = parsed.routes[found[0]!];
    if (!r) continue;
    for (const field of ['method', 'path', 'capability'] as const)
      if (r[field] !== op[field])
        at(['routes', found[0]!, field], `the contract has ${op.operationId} with ${field} ${op[field]}`);
  }

  const { pluginSpans = DEFAULT_PLUGIN_SPANS } = parsed.tracing;
  if (parsed.tracing.pluginSpans && pluginSpans !== 'all')
    pluginSpans.forEach((name, i) => {
      if (!parsed.plugins.some((p) => p.name === name)) at(['tracing', 'pluginSpans', i], unlisted(name));
    });

  if (problems.length) throw fail();
  return {
    file,
    upstreams: parsed.upstreams,
    plugins,
    routes,
    pluginSpans: pluginSpans === 'all' ? 'all' : new Set(pluginSpans),
  };
}

/** What is wrong with naming a plugin the file's plugins list lacks: unknown altogether, or known but not listed. */
const unlisted = (name: string, why = '') =>
  PLUGINS.has(name) ? `"${name}" is not in the plugins list${why}` : `unknown plugin "${name}"`;
