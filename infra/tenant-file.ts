// A tenant's configuration file (npm run admin -- dump | diff | apply): its shape (tenant-file.schema.json, checked
// with ajv) and the checks the schema cannot state (slugs once each, redirect URIs and token security settings the
// admin API accepts, capabilities of the catalogue, extension schemas that compile). Every problem is reported at once as `file:line: setting:
// problem`, as the gateway file's are (common/yaml-lines.ts), before anything is sent.
import { readFileSync } from 'node:fs';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { locatedYaml, settingName, type YamlPath } from '../common/yaml-lines.js';
import { redirectUriProblem } from '../policies/admin/redirect-uris.js';
import { securityProblems } from '../policies/admin/client-security.js';
import { compileExtensionSchema } from '../common/extension-schema.js';
import type { RateLimitPolicy } from '../wire/decision.js';

export const TENANT_FILE_SCHEMA = JSON.parse(
  readFileSync(new URL('./tenant-file.schema.json', import.meta.url), 'utf8'),
) as object;

export interface ExtensionSpec {
  name: string;
  /** JSON Schema by version ("1", "2", ...). */
  schemas: Record<string, object>;
}
export interface ServiceAccountSpec {
  name: string;
  status: 'active' | 'disabled';
  capabilities: string[];
}
export interface AppSpec {
  slug: string;
  name: string;
  kind: 'third_party' | 'first_party' | 'internal';
  type: 'confidential' | 'public';
  status: 'active' | 'disabled';
  redirectUris: string[];
  allowedOrigins?: string[];
  /** The admin API's token security fields (policies/admin/client-security.ts); only those that are not defaults. */
  security?: AppSecurity;
  grant?: string[];
  serviceAccount?: ServiceAccountSpec;
  extensions?: ExtensionSpec[];
}
export interface AppSecurity {
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  jwks?: { keys: Record<string, unknown>[] };
  dpopBoundAccessTokens?: boolean;
  requirePushedAuthorizationRequests?: boolean;
  securityProfile?: 'fapi2';
}
export interface TenantFile {
  tenant: string;
  displayName: string;
  plan: 'L1' | 'L2';
  status: 'active' | 'suspended';
  rateLimit?: RateLimitPolicy;
  apps: AppSpec[];
}

/** A file that has the schema's shape, with a way to report a problem at a setting's line. */
export interface CheckedFile {
  config: TenantFile;
  /** `file:line: setting: problem` for the setting at `path`. */
  problemAt(path: YamlPath, problem: string): string;
}

/** The file's problems, every one of them; or the file when it has none. */
export type FileReading = { ok: true; file: CheckedFile } | { ok: false; problems: string[] };

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validateShape = ajv.compile<TenantFile>(TENANT_FILE_SCHEMA);

/** The path an ajv error is about (an unknown key: that key). */
function errorPath(e: ErrorObject): YamlPath {
  const path: YamlPath = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  if (e.keyword === 'additionalProperties') path.push((e.params as { additionalProperty: string }).additionalProperty);
  if (e.keyword === 'required') path.push((e.params as { missingProperty: string }).missingProperty);
  return path;
}

function errorText(e: ErrorObject): string {
  if (e.keyword === 'additionalProperties') return 'unknown setting';
  if (e.keyword === 'required') return 'is missing';
  if (e.keyword === 'enum')
    return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return e.message ?? e.keyword;
}

/**
 * Reads `text` (from `file`) as a tenant's configuration: the schema's shape, then the rules beyond it with
 * `capabilities` the catalogue's ids.
 */
export function checkTenantFile(text: string, file: string, capabilities: ReadonlySet<string>): FileReading {
  const { doc, syntaxProblems, lineOf } = locatedYaml(text, file);
  if (syntaxProblems.length) return { ok: false, problems: syntaxProblems };
  const problemAt = (path: YamlPath, problem: string) => `${file}:${lineOf(path)}: ${settingName(path)}: ${problem}`;
  const value: unknown = doc.toJS();
  if (!validateShape(value)) {
    // An enum's or a oneOf's sub-errors repeat the same place: one line each.
    const lines = validateShape.errors!.map((e) => problemAt(errorPath(e), errorText(e)));
    return { ok: false, problems: [...new Set(lines)] };
  }
  const problems = ruleProblems(value, capabilities, problemAt);
  return problems.length ? { ok: false, problems } : { ok: true, file: { config: value, problemAt } };
}

/** Reads the file from disk, as checkTenantFile. */
export function readTenantFile(file: string, capabilities: ReadonlySet<string>): FileReading {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { ok: false, problems: [`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? err})`] };
  }
  return checkTenantFile(text, file, capabilities);
}

/** What the schema cannot say: slugs and extension names once each, redirect URIs, capabilities, schemas. */
function ruleProblems(
  config: TenantFile,
  capabilities: ReadonlySet<string>,
  problemAt: CheckedFile['problemAt'],
): string[] {
  const problems: string[] = [];
  const unknownCapabilities = (list: string[] | undefined, path: YamlPath) =>
    (list ?? []).forEach((c, i) => {
      if (!capabilities.has(c))
        problems.push(
          problemAt([...path, i], `unknown capability ${c} (the catalogue has ${[...capabilities].join(', ')})`),
        );
    });
  const firstOf = new Map<string, number>();
  config.apps.forEach((app, i) => {
    const first = firstOf.get(app.slug);
    if (first !== undefined) problems.push(problemAt(['apps', i, 'slug'], `slug ${app.slug} is also apps[${first}]'s`));
    else firstOf.set(app.slug, i);
    app.redirectUris.forEach((uri, j) => {
      const problem = redirectUriProblem(uri);
      if (problem) problems.push(problemAt(['apps', i, 'redirectUris', j], problem));
    });
    for (const problem of securityProblems({ type: app.type, redirectUris: app.redirectUris, ...app.security }))
      problems.push(problemAt(['apps', i, 'security'], problem));
    unknownCapabilities(app.grant, ['apps', i, 'grant']);
    unknownCapabilities(app.serviceAccount?.capabilities, ['apps', i, 'serviceAccount', 'capabilities']);
    const names = new Set<string>();
    (app.extensions ?? []).forEach((ext, j) => {
      if (names.has(ext.name))
        problems.push(
          problemAt(['apps', i, 'extensions', j, 'name'], `${app.slug} has two extensions named ${ext.name}`),
        );
      names.add(ext.name);
      for (const [version, schema] of Object.entries(ext.schemas)) {
        const compiled = compileExtensionSchema(schema);
        if (!compiled.ok) problems.push(problemAt(['apps', i, 'extensions', j, 'schemas', version], compiled.message!));
      }
    });
  });
  return problems;
}
