// A tenant's configuration as the admin API holds it (read object by object, each with its ETag), as a file
// (tenant-file.ts), and the ordered changes that make the tenant what a file says, each made through the admin API
// with If-Match set to the ETag read, so an edit made meanwhile is refused (412) instead of overwritten.
import { stringify } from 'yaml';
import { canonicalJson } from '../common/canonical-json.js';
import { AdminCallFailed, adminFetch, type AdminTarget } from './admin-call.js';
import type {
  AppSecurity,
  AppSpec,
  CheckedFile,
  ExtensionSpec,
  ServiceAccountSpec,
  TenantFile,
} from './tenant-file.js';
import type { RateLimitPolicy } from '../wire/decision.js';

interface TenantAnswer {
  tenantId: string;
  label: string;
  displayName: string;
  plan: TenantFile['plan'];
  status: TenantFile['status'];
  rateLimit?: RateLimitPolicy;
}
interface ClientAnswer {
  clientId: string;
  slug: string;
  name: string;
  kind: AppSpec['kind'];
  type: AppSpec['type'];
  status: AppSpec['status'];
  redirectUris: string[];
  allowedOrigins: string[];
  /** policies/admin/client-security.ts securityView: every setting, defaults included. */
  tokenEndpointAuthMethod: string;
  jwks?: { keys: Record<string, unknown>[] };
  dpopBoundAccessTokens: boolean;
  requirePushedAuthorizationRequests: boolean;
  securityProfile: 'fapi2' | null;
}
interface AccountAnswer {
  accountId: string;
  clientId: string;
  name: string;
  status: ServiceAccountSpec['status'];
  capabilities: string[];
}
interface ExtensionAnswer {
  extensionId: string;
  clientId: string;
  name: string;
  schemas: Record<string, object>;
}
/** An object as GET answered it, with the ETag that answer carried. */
interface Tagged<T> {
  value: T;
  etag: string;
}
export interface AppState {
  client: Tagged<ClientAnswer>;
  grant: Tagged<{ capabilities: string[] }>;
  serviceAccount?: Tagged<AccountAnswer>;
  extensions: Tagged<ExtensionAnswer>[];
}
export interface TenantState {
  tenant: Tagged<TenantAnswer>;
  /** By slug. */
  apps: AppState[];
}

const enc = encodeURIComponent;
const bySlug = (a: AppState, b: AppState) => (a.client.value.slug < b.client.value.slug ? -1 : 1);

async function getTagged<T>(target: AdminTarget, path: string): Promise<Tagged<T>> {
  const res = await adminFetch(target, 'GET', path, { timeoutMs: 30_000 });
  return { value: (await res.json()) as T, etag: res.headers.get('etag') ?? '' };
}

/** Every item of a paged list. */
async function listAll<T>(target: AdminTarget, path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`;
    const res = await adminFetch(target, 'GET', `${path}${query}`, { timeoutMs: 30_000 });
    const page = (await res.json()) as { items: T[]; nextCursor: string | null };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** `work` over `items`, at most `width` at a time, answers in the items' order. */
async function inParallel<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}

/** The tenant's configuration: the tenant, then each app with its grant, service account and extensions, by id. */
export async function readTenantState(target: AdminTarget, tenantId: string): Promise<TenantState> {
  const base = `/tenants/${enc(tenantId)}`;
  const tenant = await getTagged<TenantAnswer>(target, base);
  const [clientIds, accountIds, extensionIds] = await Promise.all([
    listAll<{ clientId: string }>(target, `${base}/clients`),
    listAll<{ accountId: string }>(target, `${base}/service-accounts`),
    listAll<{ extensionId: string }>(target, `${base}/extensions`),
  ]);
  const apps = await inParallel(clientIds, 8, async ({ clientId }) => ({
    client: await getTagged<ClientAnswer>(target, `/clients/${enc(clientId)}`),
    grant: await getTagged<{ capabilities: string[] }>(target, `${base}/grants/${enc(clientId)}`),
    extensions: [] as Tagged<ExtensionAnswer>[],
  }));
  const appOf = new Map(apps.map((a: AppState) => [a.client.value.clientId, a]));
  for (const account of await inParallel(accountIds, 8, ({ accountId }) =>
    getTagged<AccountAnswer>(target, `/accounts/${enc(accountId)}`),
  ))
    appOf.get(account.value.clientId)!.serviceAccount = account;
  for (const extension of await inParallel(extensionIds, 8, ({ extensionId }) =>
    getTagged<ExtensionAnswer>(target, `/extensions/${enc(extensionId)}`),
  ))
    appOf.get(extension.value.clientId)!.extensions.push(extension);
  for (const app of apps) app.extensions.sort((a, b) => (a.value.name < b.value.name ? -1 : 1));
  return { tenant, apps: apps.sort(bySlug) };
}

/** A JSON value with its object keys sorted at every level: one spelling whatever order the store kept. */
const sortedKeys = (value: unknown): unknown => JSON.parse(canonicalJson(value));
const sorted = (list: string[]) => [...list].sort();

/**
 * An app's token security settings as the file names them: only those that are not registration's defaults, so an app
 * that uses none of them has no `security` entry and two spellings of the same settings compare equal.
 */
function normalSecurity(type: AppSpec['type'], s: AppSecurity): AppSecurity {
  const fapi = s.securityProfile === 'fapi2';
  const method = type === 'public' ? undefined : fapi ? 'private_key_jwt' : s.tokenEndpointAuthMethod;
  return {
    ...(method && method !== 'client_secret_basic' && { tokenEndpointAuthMethod: method }),
    ...(s.jwks && { jwks: sortedKeys(s.jwks) as AppSecurity['jwks'] }),
    ...((fapi || s.dpopBoundAccessTokens) && { dpopBoundAccessTokens: true }),
    ...((fapi || s.requirePushedAuthorizationRequests) && { requirePushedAuthorizationRequests: true }),
    ...(fapi && { securityProfile: 'fapi2' as const }),
  };
}
const securityOf = (c: ClientAnswer): AppSecurity =>
  normalSecurity(c.type, {
    tokenEndpointAuthMethod: c.tokenEndpointAuthMethod as AppSecurity['tokenEndpointAuthMethod'],
    ...(c.jwks && { jwks: c.jwks }),
    dpopBoundAccessTokens: c.dpopBoundAccessTokens,
    requirePushedAuthorizationRequests: c.requirePushedAuthorizationRequests,
    ...(c.securityProfile && { securityProfile: c.securityProfile }),
  });
const securityEntry = (security: AppSecurity) => (Object.keys(security).length ? { security } : {});

/** The tenant's configuration as its file holds it: every list in a fixed order, so two dumps are byte-identical. */
export function toFile({ tenant, apps }: TenantState): TenantFile {
  const t = tenant.value;
  return {
    tenant: t.tenantId,
    displayName: t.displayName,
    plan: t.plan,
    status: t.status,
    ...(t.rateLimit && { rateLimit: sortedKeys(t.rateLimit) as RateLimitPolicy }),
    apps: apps.map(({ client: { value: c }, grant, serviceAccount, extensions }) => ({
      slug: c.slug,
      name: c.name,
      kind: c.kind,
      type: c.type,
      status: c.status,
      redirectUris: c.redirectUris,
      allowedOrigins: c.allowedOrigins,
      ...securityEntry(securityOf(c)),
      grant: sorted(grant.value.capabilities),
      ...(serviceAccount && {
        serviceAccount: {
          name: serviceAccount.value.name,
          status: serviceAccount.value.status,
          capabilities: sorted(serviceAccount.value.capabilities),
        },
      }),
      ...(extensions.length && {
        extensions: extensions.map(({ value: e }) => ({
          name: e.name,
          schemas: Object.fromEntries(
            Object.entries(e.schemas)
              .sort(([a], [b]) => Number(a) - Number(b))
              .map(([v, s]) => [v, sortedKeys(s) as object]),
          ),
        })),
      }),
    })),
  };
}

export const FILE_HEADER =
  "# A tenant's configuration (infra/tenant-file.schema.json): review changes in pull requests,\n" +
  '# npm run admin -- diff <file> shows what would change, npm run admin -- apply <file> makes it so.\n';

export const toYaml = (file: TenantFile) => FILE_HEADER + stringify(file, { lineWidth: 0 });

/** One change: an admin API request, what it changes in words, and the ETag it requires (412 when it moved). */
export interface Change {
  summary: string;
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  /** If-Match: an ETag read for the diff, or `previous` for the one the previous change's answer carried. */
  ifMatch?: string;
  /** A change to make with the answer of this one (a service account created disabled is disabled next). */
  then?: (answer: Record<string, unknown>) => Change;
}
export interface Plan {
  /** Why the file cannot be applied (`file:line: ...`); nothing is changed when there is any. */
  problems: string[];
  changes: Change[];
  /** What the file leaves as it is although it differs (what the API cannot remove). */
  notes: string[];
}

const KIND_PREFIX = { third_party: 'tp', first_party: 'fp', internal: 'int' } as const;
const shown = (v: unknown) => JSON.stringify(v ?? null);
const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/** The fields of `wanted` (those it names) that differ from `current`: the body of a PATCH. */
function changedFields(current: object, wanted: object, fields: string[]): Record<string, unknown> {
  const c = current as Record<string, unknown>;
  const w = wanted as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => w[f] !== undefined && !same(c[f], w[f])).map((f) => [f, w[f]]));
}
const described = (current: object, body: Record<string, unknown>) =>
  Object.entries(body)
    .map(([f, to]) => `${f} ${shown((current as Record<string, unknown>)[f])} -> ${shown(to)}`)
    .join('; ');

/**
 * The changes that make the tenant `state` what `file` says, in the order they are made: the tenant, then per app its
 * settings, grant, service account and extensions, then (with `prune`) what the file does not name. A tenant admin key
 * (`tenantKey`) may not change plan or status: the plan's problems say so, with the file's lines.
 */
export function planChanges(
  state: TenantState,
  { config, problemAt }: CheckedFile,
  { prune, tenantKey }: { prune: boolean; tenantKey: boolean },
): Plan {
  const plan: Plan = { problems: [], changes: [], notes: [] };
  const tenant = state.tenant.value;
  const tenantBody = changedFields(tenant, config, ['displayName', 'plan', 'status', 'rateLimit']);
  if (tenantKey)
    for (const f of ['plan', 'status'] as const)
      if (f in tenantBody) plan.problems.push(problemAt([f], `only the operator changes a tenant's ${f}`));
  if (Object.keys(tenantBody).length)
    plan.changes.push({
      summary: `~ tenant ${tenant.tenantId}: ${described(tenant, tenantBody)}`,
      method: 'PATCH',
      path: `/tenants/${enc(tenant.tenantId)}`,
      body: tenantBody,
      ifMatch: state.tenant.etag,
    });
  const existing = new Map(state.apps.map((a) => [a.client.value.slug, a]));
  config.apps.forEach((spec, i) => {
    const app = existing.get(spec.slug);
    if (app) planApp(plan, tenant.tenantId, spec, app, (path, p) => problemAt(['apps', i, ...path], p), prune);
    else plan.changes.push(...newApp(tenant, spec));
  });
  const named = new Set(config.apps.map((a) => a.slug));
  for (const app of state.apps.filter((a) => !named.has(a.client.value.slug))) {
    const c = app.client.value;
    if (prune)
      plan.changes.push({
        summary: `- app ${c.slug}: delete ${c.clientId} with its grant, service account and extensions`,
        method: 'DELETE',
        path: `/clients/${enc(c.clientId)}`,
      });
  }
  return plan;
}

/** Registering an app the tenant lacks, with everything the file gives it. */
function newApp(tenant: TenantAnswer, spec: AppSpec): Change[] {
  const clientId = `${KIND_PREFIX[spec.kind]}_${tenant.label}_${spec.slug}`;
  const { slug, name, kind, type, redirectUris, allowedOrigins, security } = spec;
  const changes: Change[] = [
    {
      summary: `+ app ${slug}: ${kind} ${type} app ${clientId}, redirect URIs ${shown(redirectUris)}`,
      method: 'POST',
      path: `/tenants/${enc(tenant.tenantId)}/clients`,
      body: { slug, name, kind, type, redirectUris, ...(allowedOrigins && { allowedOrigins }), ...security },
    },
  ];
  if (spec.status === 'disabled')
    changes.push({
      summary: `~ app ${slug}: status "active" -> "disabled"`,
      method: 'PATCH',
      path: `/clients/${enc(clientId)}`,
      body: { status: 'disabled' },
    });
  if (spec.grant?.length) changes.push(grantChange(tenant.tenantId, spec, clientId, []));
  if (spec.serviceAccount) changes.push(newServiceAccount(tenant.tenantId, spec, clientId, spec.serviceAccount));
  for (const ext of spec.extensions ?? []) changes.push(newExtension(spec.slug, clientId, ext));
  return changes;
}

function grantChange(tenantId: string, spec: AppSpec, clientId: string, current: string[], ifMatch?: string): Change {
  const capabilities = sorted(spec.grant!);
  return {
    summary: `~ grant ${spec.slug}: ${shown(current)} -> ${shown(capabilities)}`,
    method: 'PUT',
    path: `/tenants/${enc(tenantId)}/grants/${enc(clientId)}`,
    body: { capabilities },
    ...(ifMatch && { ifMatch }),
  };
}

function newServiceAccount(tenantId: string, spec: AppSpec, clientId: string, sa: ServiceAccountSpec): Change {
  return {
    summary:
      `+ service account ${spec.slug}: ${shown(sa.name)}, capabilities ${shown(sorted(sa.capabilities))}` +
      (sa.status === 'disabled' ? ', then disabled' : ''),
    method: 'POST',
    path: `/tenants/${enc(tenantId)}/service-accounts`,
    body: { clientId, name: sa.name, capabilities: sorted(sa.capabilities) },
    ...(sa.status === 'disabled' && {
      then: (created) => ({
        summary: `~ service account ${spec.slug}: status "active" -> "disabled"`,
        method: 'PATCH',
        path: `/accounts/${enc(String(created.accountId))}`,
        body: { status: 'disabled' },
      }),
    }),
  };
}

const newExtension = (slug: string, clientId: string, ext: ExtensionSpec): Change => ({
  summary: `+ extension ${slug}/${ext.name}: schema versions ${Object.keys(ext.schemas).join(', ')}`,
  method: 'POST',
  path: `/clients/${enc(clientId)}/extensions`,
  body: { name: ext.name, schemas: ext.schemas },
});

/** The changes to an app the tenant has: its settings, grant, service account and extensions. */
function planApp(
  plan: Plan,
  tenantId: string,
  spec: AppSpec,
  app: AppState,
  problemAt: CheckedFile['problemAt'],
  prune: boolean,
): void {
  const c = app.client.value;
  for (const fixed of ['kind', 'type'] as const)
    if (spec[fixed] !== c[fixed])
      plan.problems.push(
        problemAt([fixed], `${c.clientId} is ${c[fixed]}, which never changes (a new slug registers a new app)`),
      );
  const held = securityOf(c);
  if (canonicalJson(normalSecurity(spec.type, spec.security ?? {})) !== canonicalJson(held))
    plan.problems.push(
      problemAt(
        ['security'],
        `${c.clientId}'s token security settings are ${canonicalJson(held)}, fixed at registration ` +
          '(a new slug registers a new app)',
      ),
    );
  const body = changedFields(c, spec, ['name', 'status', 'redirectUris', 'allowedOrigins']);
  if (Object.keys(body).length)
    plan.changes.push({
      summary: `~ app ${spec.slug}: ${described(c, body)}`,
      method: 'PATCH',
      path: `/clients/${enc(c.clientId)}`,
      body,
      ifMatch: app.client.etag,
    });
  const granted = sorted(app.grant.value.capabilities);
  if (spec.grant && !same(sorted(spec.grant), granted))
    plan.changes.push(grantChange(tenantId, spec, c.clientId, granted, app.grant.etag));
  if (!spec.grant && prune && granted.length)
    plan.changes.push({
      summary: `- grant ${spec.slug}: withdraw ${shown(granted)}`,
      method: 'DELETE',
      path: `/tenants/${enc(tenantId)}/grants/${enc(c.clientId)}`,
    });
  planServiceAccount(plan, tenantId, spec, app, prune);
  planExtensions(plan, spec, app, problemAt, prune);
}

function planServiceAccount(plan: Plan, tenantId: string, spec: AppSpec, app: AppState, prune: boolean): void {
  const sa = app.serviceAccount;
  if (!spec.serviceAccount) {
    if (sa && prune)
      plan.notes.push(
        `service account ${spec.slug} (${sa.value.accountId}) is not in the file but stays: the admin API deletes ` +
          'no service account (set its status to disabled instead)',
      );
    return;
  }
  if (!sa)
    return void plan.changes.push(newServiceAccount(tenantId, spec, app.client.value.clientId, spec.serviceAccount));
  const wanted = { ...spec.serviceAccount, capabilities: sorted(spec.serviceAccount.capabilities) };
  const current = { ...sa.value, capabilities: sorted(sa.value.capabilities) };
  const body = changedFields(current, wanted, ['name', 'status', 'capabilities']);
  if (Object.keys(body).length)
    plan.changes.push({
      summary: `~ service account ${spec.slug}: ${described(current, body)}`,
      method: 'PATCH',
      path: `/accounts/${enc(sa.value.accountId)}`,
      body,
      ifMatch: sa.etag,
    });
}

function planExtensions(
  plan: Plan,
  spec: AppSpec,
  app: AppState,
  problemAt: CheckedFile['problemAt'],
  prune: boolean,
): void {
  const registered = new Map(app.extensions.map((e) => [e.value.name, e]));
  (spec.extensions ?? []).forEach((ext, j) => {
    const found = registered.get(ext.name);
    if (!found) return void plan.changes.push(newExtension(spec.slug, app.client.value.clientId, ext));
    const e = found.value;
    let ifMatch: string = found.etag;
    for (const [version, schema] of Object.entries(ext.schemas)) {
      const stored = e.schemas[version];
      if (stored && !same(stored, schema))
        plan.problems.push(
          problemAt(
            ['extensions', j, 'schemas', version],
            `version ${version} of ${ext.name} is registered with another schema, and a registered version never ` +
              'changes: add the new schema as the next version',
          ),
        );
      if (stored) continue;
      plan.changes.push({
        summary: `~ extension ${spec.slug}/${ext.name}: add schema version ${version}`,
        method: 'PUT',
        path: `/extensions/${enc(e.extensionId)}/schemas/${version}`,
        body: schema,
        ifMatch,
      });
      ifMatch = 'previous';
    }
  });
  if (prune) {
    const named = new Set((spec.extensions ?? []).map((e) => e.name));
    for (const e of app.extensions.filter((x) => !named.has(x.value.name)))
      plan.notes.push(
        `extension ${spec.slug}/${e.value.name} (${e.value.extensionId}) is not in the file but stays: ` +
          'the admin API deletes no extension (its app can be deleted once it owns no records)',
      );
  }
}

/** How an apply ended: every change made, or the one refused (after the ones made before it). */
export type ApplyResult = { ok: true; applied: number } | { ok: false; applied: number; failed: Change; error: Error };

/**
 * Makes `changes` in order through the admin API, telling `onApplied` of each (with its answer, which for a new
 * confidential app holds its secret); stops at the first refusal, leaving what follows it undone.
 */
export async function applyChanges(
  target: AdminTarget,
  changes: Change[],
  onApplied: (change: Change, answer: Record<string, unknown>) => void,
): Promise<ApplyResult> {
  const queue = [...changes];
  let applied = 0;
  let lastEtag = '';
  for (let change = queue.shift(); change; change = queue.shift()) {
    const ifMatch = change.ifMatch === 'previous' ? lastEtag : change.ifMatch;
    try {
      const res = await adminFetch(target, change.method, change.path, {
        body: change.body,
        timeoutMs: 30_000,
        ...(ifMatch && { headers: { 'if-match': ifMatch } }),
      });
      const text = await res.text();
      const answer = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      lastEtag = res.headers.get('etag') ?? '';
      applied++;
      onApplied(change, answer);
      if (change.then) queue.unshift(change.then(answer));
    } catch (err) {
      if (!(err instanceof AdminCallFailed)) throw err;
      return { ok: false, applied, failed: change, error: err };
    }
  }
  return { ok: true, applied };
}
