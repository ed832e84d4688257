// The admin console's pages: plain server-rendered HTML, landmarks, labelled forms and tables with header cells.
// Every value from the database passes through `html`, which escapes it. No external assets; one small script (the
// Copy button of a shown-once secret, html.ts) that every page works without.
import type { AuditEntryView } from '../admin/audit.js';
import type { AuditPage, AuditVerification } from '../admin/audit-trail.js';
import type { AdminCaller } from '../admin/authority.js';
import type { ClientView } from '../admin/clients.js';
import type { CatalogueEntryView } from '../admin/capabilities.js';
import { redirectUriProblem } from '../admin/redirect-uris.js';
import { etagOf } from '../admin/etags.js';
import type { ConsentView } from '../admin/accounts.js';
import type { PersonListItem } from '../admin/persons.js';
import type { TenantView } from '../admin/tenants.js';
import type { RegisteredExtension } from '../admin/extensions.js';
import type { DailyUsage, DecisionFilters, DecisionView } from '../admin/observability.js';
import { SCRIPT_ELEMENT, STYLE_ELEMENT, html, type Html } from './html.js';
import type { ConsoleSession } from './sessions.js';
import type { RateLimitPolicy } from '../../wire/decision.js';
import { STATUS_CODES } from 'node:http';

export const CONSOLE_PATH = '/admin/console';
export const tenantPath = (tenantId: string, page = '') =>
  `${CONSOLE_PATH}/tenants/${encodeURIComponent(tenantId)}${page && `/${page}`}`;
export const appPath = (tenantId: string, clientId: string) =>
  tenantPath(tenantId, `apps/${encodeURIComponent(clientId)}`);

export interface Frame {
  title: string;
  session?: ConsoleSession | undefined;
  /** The tenant whose pages the navigation links to. */
  tenant?: TenantView | undefined;
}

const csrfField = (session: Pick<ConsoleSession, 'csrf'>) =>
  html`<input type="hidden" name="_csrf" value="${session.csrf}">`;

/** A form that posts to `action` with the session's CSRF token. */
export const postForm = (session: Pick<ConsoleSession, 'csrf'>, action: string, body: Html, cls = '') =>
  html`<form method="post" action="${action}"${cls && html` class="${cls}"`}>${csrfField(session)}${body}</form>`;

/**
 * The ETag of the object an edit form was rendered with: the save sends it as If-Match, so a change another admin made
 * meanwhile is reported (412) instead of overwritten.
 */
export const etagField = (etag: string) => html`<input type="hidden" name="etag" value="${etag}">`;

function navigation(session: ConsoleSession, tenant: TenantView | undefined): Html {
  const links: [string, string][] = [];
  if (session.caller?.kind === 'operator') links.push([`${CONSOLE_PATH}/tenants`, 'Tenants']);
  if (tenant)
    links.push(
      [tenantPath(tenant.tenantId, 'apps'), 'Apps'],
      [tenantPath(tenant.tenantId, 'persons'), 'Persons'],
      [tenantPath(tenant.tenantId, 'service-accounts'), 'Service accounts'],
      [tenantPath(tenant.tenantId, 'extensions'), 'Extensions'],
      [tenantPath(tenant.tenantId, 'decisions'), 'Decisions'],
      [tenantPath(tenant.tenantId, 'usage'), 'Usage'],
      [tenantPath(tenant.tenantId, 'audit'), 'Audit'],
      [tenantPath(tenant.tenantId, 'export'), 'Export'],
      [tenantPath(tenant.tenantId, 'settings'), 'Settings'],
    );
  return html`<nav aria-label="Console"><ul>${links.map(
    ([href, label]) => html`<li><a href="${href}">${label}</a></li>`,
  )}</ul></nav>`;
}

function who(caller: AdminCaller, tenant: TenantView | undefined): Html {
  const role = caller.kind === 'operator' ? 'operator' : 'tenant admin';
  return html`<p>Signed in as ${role}${
    tenant && html` · tenant <strong>${tenant.displayName}</strong> (${tenant.label})`
  }</p>`;
}

export function layout({ title, session, tenant }: Frame, content: Html): Html {
  const signedIn = session?.caller;
  const notice = session?.notice;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Admin console</title>${STYLE_ELEMENT}</head>
<body><header><p class="brand">Admin console</p>${
    signedIn &&
    html`${navigation(session!, tenant)}${who(signedIn, tenant)}${postForm(
      session!,
      `${CONSOLE_PATH}/sign-out`,
      html`<button type="submit">Sign out</button>`,
    )}`
  }</header>
<main><h1>${title}</h1>${notice && html`<p class="notice" role="status">${notice}</p>`}
${content}</main>${SCRIPT_ELEMENT}</body></html>`;
}

/** The sign-in form, with the token of its double-submit cookie (sign-in-csrf.ts): no session exists yet. */
export function signInPage(form: Pick<ConsoleSession, 'csrf'>, problem?: string, why?: string): Html {
  return layout(
    { title: 'Sign in', session: undefined },
    html`
${problem && html`<p class="problem" role="alert">${problem}</p>`}
${why && html`<p class="notice" role="status">${why}</p>`}
<p>Sign in with your tenant admin key, or with the operator token.</p>
${postForm(
  form,
  `${CONSOLE_PATH}/sign-in`,
  html`
<label for="key">Admin key or operator token</label>
<input id="key" name="key" type="password" autocomplete="off" required>
<div><button type="submit">Sign in</button></div>`,
)}`,
  );
}

export const signedOutPage = () =>
  layout(
    { title: 'Signed out', session: undefined },
    html`<p>You are signed out. <a href="${CONSOLE_PATH}/sign-in">Sign in again</a>.</p>`,
  );

/** A link to a page, named by what it shows (a refusal's way back, a confirmation's Cancel). */
export interface Link {
  href: string;
  label: string;
}

export function problemPage(frame: Frame, message: string, requestId: string, back?: Link): Html {
  return layout(
    frame,
    html`<p class="problem" role="alert">${message}</p><p>Reference: <code>${requestId}</code></p>
<p>${
      back
        ? html`<a href="${back.href}">Back to ${back.label}</a>`
        : html`<a href="${CONSOLE_PATH}/">Back to the console</a>`
    }</p>`,
  );
}

export function tenantsPage(session: ConsoleSession, tenants: TenantView[], entered?: Entered): Html {
  const v = entered?.values ?? {};
  return layout(
    { title: 'Tenants', session },
    html`${
      tenants.length === 0
        ? html`<p id="no-tenants">No tenants yet: each tenant is listed here once created with
<a href="#new-tenant">Create a tenant</a> below.</p>`
        : html`<p>Pick the tenant to manage.</p>
<table><caption>Tenants</caption>
<thead><tr><th scope="col">Tenant</th><th scope="col">Label</th><th scope="col">Plan</th><th scope="col">Status</th>
<th scope="col">Settings</th></tr></thead>
<tbody>${tenants.map(
            (t) => html`<tr><th scope="row"><a href="${tenantPath(t.tenantId, 'apps')}">${t.displayName}</a></th>
<td>${t.label}</td><td>${t.plan}</td><td>${t.status}</td>
<td><a href="${tenantPath(t.tenantId, 'settings')}">Settings<span class="vh"> of ${t.displayName}</span></a></td></tr>`,
          )}</tbody></table>`
    }
<h2 id="new-tenant">Create a tenant</h2>
${entered && html`<p class="problem" role="alert">${entered.problem}</p>`}
${postForm(
  session,
  `${CONSOLE_PATH}/tenants`,
  html`<label for="tenant-name">Display name</label>
<input id="tenant-name" name="displayName" type="text" required maxlength="200" value="${v.displayName ?? ''}">
<label for="tenant-label">Label: lower-case letters, digits and dashes, part of every client id</label>
<input id="tenant-label" name="label" type="text" required value="${v.label ?? ''}">
${planSelect(v.plan ?? 'L1')}
<div><button type="submit">Create tenant</button></div>`,
)}`,
  );
}

const PLANS = [
  ['L1', 'L1 (self and tenant reads)'],
  ['L2', 'L2 (adds persons and their records)'],
] as const;
const planSelect = (chosen: string) => html`<label for="tenant-plan">Plan</label>
<select id="tenant-plan" name="plan">${PLANS.map(
  ([value, label]) => html`<option value="${value}"${chosen === value && html` selected`}>${label}</option>`,
)}</select>`;

/** A tenant's settings: name and limits (tenant admins too), plan and status and admin keys (the operator only). */
export function tenantSettingsPage(
  frame: Frame & { session: ConsoleSession; tenant: TenantView },
  { limits, ceiling }: { limits: RateLimitPolicy; ceiling: RateLimitPolicy },
  keys: { keyId: string; label?: string; createdAt: string }[] | undefined,
  entered?: Entered,
  /** The save was refused because the tenant changed meanwhile: its stored settings are shown beside the form. */
  changedMeanwhile = false,
): Html {
  const { session, tenant } = frame;
  const operator = session.caller?.kind === 'operator';
  const v = entered?.values ?? {
    displayName: tenant.displayName,
    plan: tenant.plan,
    status: tenant.status,
    tenantPoints: String(limits.tenant.points),
    tenantDurationS: String(limits.tenant.durationS),
    accountPoints: String(limits.account.points),
    accountDurationS: String(limits.account.durationS),
  };
  const number = (id: string, label: string, max: number, note?: Html) =>
    html`<div><label for="${id}">${label}</label><input id="${id}" name="${id}" type="number" min="1" max="${max}"
required value="${v[id] ?? ''}"${note && html` aria-describedby="${id}-ceiling"`}>${
      note && html` <span id="${id}-ceiling" class="ceiling">${note}</span>`
    }</div>`;
  /**
   * A layer's fields with the plan's ceiling beside them. A tenant admin is held to it (the field's maximum; a window
   * is within it unless it allows a faster average rate), the operator is not.
   */
  const layer = (key: 'tenant' | 'account', name: string) => {
    const c = ceiling[key];
    const binds = operator ? ' (binds tenant admins, not the operator)' : '';
    return html`${number(
      `${key}Points`,
      `${name}: requests`,
      operator ? 1_000_000 : c.points,
      html`plan ${tenant.plan} ceiling: ${c.points} requests${binds}`,
    )}
${number(
  `${key}DurationS`,
  `${name}: window in seconds`,
  86_400,
  html`at most ${c.points} requests per ${c.durationS} s on average${binds}`,
)}`;
  };
  const base = tenantPath(tenant.tenantId, 'settings');
  return layout(
    frame,
    html`
${entered && html`<p class="problem" role="alert">${entered.problem}</p>`}
${
  changedMeanwhile &&
  html`<dl id="stored-now"><dt>Display name stored now</dt><dd>${tenant.displayName}</dd>
<dt>Rate limits stored now</dt><dd>whole tenant: ${limits.tenant.points} requests per ${limits.tenant.durationS} s;
each account: ${limits.account.points} requests per ${limits.account.durationS} s</dd>${
    operator && html`<dt>Plan and status stored now</dt><dd>${tenant.plan}, ${tenant.status}</dd>`
  }</dl>`
}
${postForm(
  session,
  base,
  html`${etagField(etagOf(tenant))}<label for="displayName">Display name</label>
<input id="displayName" name="displayName" type="text" required maxlength="200" value="${v.displayName ?? ''}">
${
  operator &&
  html`${planSelect(v.plan ?? tenant.plan)}
<label for="tenant-status">Status</label>
<select id="tenant-status" name="status">${['active', 'suspended'].map(
    (st) => html`<option value="${st}"${v.status === st && html` selected`}>${st}</option>`,
  )}</select>`
}
<fieldset><legend>Rate limits: requests per window${!operator && ", up to the plan's ceiling"}</legend>
${layer('tenant', 'Whole tenant')}
${layer('account', 'Each account')}
</fieldset>
<div><button type="submit">Save settings</button></div>`,
)}
${
  keys &&
  html`<section aria-labelledby="keys-h"><h2 id="keys-h">Admin keys</h2>
<p>A tenant admin key manages this tenant only (its apps, persons, grants, service accounts and extensions), never
its plan or status.</p>
<table><caption>Live admin keys</caption>
<thead><tr><th scope="col">Label</th><th scope="col">Key id</th><th scope="col">Created (UTC)</th>
<th scope="col">Action</th></tr></thead>
<tbody>${keys.map(
    (k) =>
      html`<tr><th scope="row">${k.label ?? 'no label'}</th><td><code>${k.keyId}</code></td><td>${
        k.createdAt
      }</td><td>${postForm(
        session,
        `${tenantPath(tenant.tenantId, 'admin-keys')}/${encodeURIComponent(k.keyId)}/revoke`,
        html`<button type="submit">Revoke<span class="vh"> ${k.label ? `${k.label} ` : ''}${k.keyId}</span></button>`,
        'inline',
      )}</td></tr>`,
  )}</tbody></table>
${keys.length === 0 && html`<p>No live admin keys.</p>`}
${postForm(
  session,
  tenantPath(tenant.tenantId, 'admin-keys'),
  html`<label for="key-label">Label (optional: who or what the key is for, shown wherever the key is named)</label>
<input id="key-label" name="label" type="text" maxlength="100">
<div><button type="submit">Create an admin key</button></div>`,
)}
</section>`
}`,
  );
}

/** A new tenant admin key, shown once. */
export function adminKeyPage(
  frame: Frame & { tenant: TenantView },
  issued: { keyId: string; key: string; label?: string },
): Html {
  return layout(
    frame,
    html`<p>A new admin key${issued.label && html`, <strong>${issued.label}</strong>,`} for
<strong>${frame.tenant.displayName}</strong> (id <code>${issued.keyId}</code>).
It is shown only this once; give it to the tenant's admin now.</p>
<p><output id="new-key" class="secret" aria-label="New admin key">${issued.key}</output>
<button type="button" data-copy="new-key" hidden>Copy</button></p>
<p>It works until it is revoked.
<a href="${tenantPath(frame.tenant.tenantId, 'settings')}">Back to the settings</a></p>`,
  );
}

/** What a refused form had in it, and why, to show the form again as it was sent. */
export interface Entered {
  values: Record<string, string | undefined>;
  problem: string;
}

const lines = (list: readonly string[]) => list.join('\n');
const KINDS = [
  ['third_party', 'Third-party'],
  ['first_party', 'First-party'],
  ['internal', 'Internal'],
] as const;
/** An app's kind in words ("Third-party"), as the register form offers it. */
const kindWords = (kind: string) => KINDS.find(([value]) => value === kind)?.[1] ?? kind;

export function appsPage(
  frame: Frame & { session: ConsoleSession; tenant: TenantView },
  apps: { client: ClientView; capabilities: string[] }[],
  entered?: Entered,
): Html {
  const v = entered?.values ?? {};
  const type = v.type ?? 'public';
  return layout(
    frame,
    html`
${
  apps.length === 0
    ? html`<p id="no-apps">No apps yet: the apps this tenant serves are listed here once registered with
<a href="#new-app">Register an app</a> below.</p>`
    : html`<table><caption>Apps of this tenant and the capabilities it grants them</caption>
<thead><tr><th scope="col">App</th><th scope="col">Client id</th><th scope="col">Kind</th><th scope="col">Type</th>
<th scope="col">Status</th><th scope="col">Granted capabilities</th></tr></thead>
<tbody>${apps.map(
        ({
          client: c,
          capabilities,
        }) => html`<tr><th scope="row"><a href="${appPath(c.tenantId, c.clientId)}">${c.name}</a></th>
<td><code>${c.clientId}</code></td><td>${kindWords(c.kind)}</td><td>${c.type}</td><td>${c.status}</td>
<td>${capabilities.length ? html`<ul>${capabilities.map((cap) => html`<li>${cap}</li>`)}</ul>` : 'none'}</td></tr>`,
      )}</tbody></table>`
}
<h2 id="new-app">Register an app</h2>
${entered && html`<p class="problem" role="alert">${entered.problem}</p>`}
${postForm(
  frame.session,
  tenantPath(frame.tenant.tenantId, 'apps'),
  html`<label for="app-name">Name people see on the consent page</label>
<input id="app-name" name="name" type="text" required maxlength="200" value="${v.name ?? ''}">
<label for="app-slug">Slug: lower-case letters, digits and dashes (the client id is
<code>tp_${frame.tenant.label}_</code>slug for a third-party app,
<code>fp_</code> or <code>int_</code> for the others)</label>
<input id="app-slug" name="slug" type="text" required maxlength="40" pattern="[a-z0-9]+(-[a-z0-9]+)*"
value="${v.slug ?? ''}">
<label for="app-kind">Kind</label>
<select id="app-kind" name="kind">${KINDS.map(
    ([value, label]) =>
      html`<option value="${value}"${(v.kind ?? 'third_party') === value && html` selected`}>${label}</option>`,
  )}</select>
<fieldset><legend>Type</legend>
<input type="radio" id="type-public" name="type" value="public"${
    type === 'public' && html` checked`
  }><label for="type-public">Public (a browser or mobile app: no secret, PKCE only)</label>
<input type="radio" id="type-confidential" name="type" value="confidential"${
    type === 'confidential' && html` checked`
  }><label for="type-confidential">Confidential (a server: gets a client secret)</label>
</fieldset>
<label for="app-redirects">Redirect URIs, one per line</label>
<textarea id="app-redirects" name="redirectUris" rows="3" required>${v.redirectUris ?? ''}</textarea>
<label for="app-origins">Web origins allowed to call the token endpoint from a browser, one per line (optional)</label>
<textarea id="app-origins" name="allowedOrigins" rows="2">${v.allowedOrigins ?? ''}</textarea>
${securityFieldset(v)}
<div><button type="submit">Register app</button></div>`,
)}`,
  );
}

/** Each method: its choice on the register form, and what the app's page says of it. */
const AUTH_METHODS = [
  ['client_secret_basic', 'Client secret, sent with HTTP Basic or in the form (the default)', 'client secret'],
  ['client_secret_post', 'Client secret, sent in the form', 'client secret, sent in the form'],
  [
    'private_key_jwt',
    'Private key JWT: the app signs with a key whose public half is pasted below; no secret',
    'private key JWT, with a registered public key; no secret',
  ],
] as const;

/** The register form's sender-constraint settings (issue 49); every one optional, the defaults keep today's apps. */
function securityFieldset(v: Record<string, string | undefined>): Html {
  const checkbox = (name: string, value: string, label: Html | string, hint: string) =>
    html`<div><input type="checkbox" id="app-${name}" name="${name}" value="${value}" aria-describedby="app-${name}-d"${
      v[name] === value && html` checked`
    }><label for="app-${name}">${label}</label> <span id="app-${name}-d">${hint}</span></div>`;
  return html`<fieldset><legend>Token security (optional)</legend>
<label for="app-auth">How a confidential app authenticates at the token endpoint</label>
<select id="app-auth" name="tokenEndpointAuthMethod">${AUTH_METHODS.map(
    ([value, label]) =>
      html`<option value="${value}"${
        (v.tokenEndpointAuthMethod ?? 'client_secret_basic') === value && html` selected`
      }>${label}</option>`,
  )}</select>
<label for="app-jwks">Public keys for private key JWT, as a JSON key set <code>{"keys": [...]}</code> (EC or RSA
public keys only; a private key is refused)</label>
<textarea id="app-jwks" name="jwks" rows="4" data-json spellcheck="false">${v.jwks ?? ''}</textarea>
${checkbox(
  'dpopBoundAccessTokens',
  'yes',
  'Require DPoP-bound tokens',
  'a token request without a DPoP proof gets no token (RFC 9449).',
)}
${checkbox(
  'requirePushedAuthorizationRequests',
  'yes',
  'Require pushed authorization requests',
  'an authorization request must be pushed first (PAR, RFC 9126).',
)}
${checkbox(
  'securityProfile',
  'fapi2',
  'FAPI 2.0 Security Profile',
  'confidential apps only: private key JWT, DPoP-bound tokens, pushed requests and https redirect URIs together.',
)}
</fieldset>`;
}

/** The app's security settings in words, for its page. */
function securityFacts(c: ClientView): Html {
  const method = AUTH_METHODS.find(([value]) => value === c.tokenEndpointAuthMethod)?.[2];
  const kids = (c.jwks?.keys ?? []).map((k, i) => (k as { kid?: unknown }).kid ?? `key ${i + 1}`);
  return html`<dt>Token endpoint authentication</dt><dd>${
    c.tokenEndpointAuthMethod === 'none' ? 'none (a public app: PKCE only)' : (method ?? c.tokenEndpointAuthMethod)
  }</dd>${kids.length > 0 && html`<dt>Registered public keys</dt><dd>${kids.map((kid) => html`<code>${String(kid)}</code> `)}</dd>`}
<dt>DPoP-bound tokens</dt><dd>${c.dpopBoundAccessTokens ? 'required' : 'when the app sends a proof'}</dd>
<dt>Pushed authorization requests</dt><dd>${c.requirePushedAuthorizationRequests ? 'required' : 'optional'}</dd>
<dt>Security profile</dt><dd>${c.securityProfile === 'fapi2' ? 'FAPI 2.0' : 'none'}</dd>`;
}

/**
 * The app's stored redirect URIs that the rule (admin/redirect-uris.ts) refuses today, each with why: registered
 * before it, they keep working until the app's redirect URIs are next saved, which needs them replaced.
 */
function redirectUrisToReplace(uris: readonly string[]): Html | undefined {
  const refused = uris.flatMap((uri) => {
    const problem = redirectUriProblem(uri);
    return problem ? [{ uri, problem }] : [];
  });
  if (!refused.length) return undefined;
  return html`<div class="problem" role="note" aria-labelledby="redirects-refused-h">
<p id="redirects-refused-h"><strong>${
    refused.length === 1 ? 'This redirect URI would be refused today' : 'These redirect URIs would be refused today'
  }</strong>: registered before the current rule, ${refused.length === 1 ? 'it keeps' : 'they keep'} working until
the settings below are saved, and saving needs ${refused.length === 1 ? 'it' : 'them'} replaced.</p>
<ul>${refused.map(({ uri, problem }) => html`<li><code>${uri}</code>: ${problem}</li>`)}</ul></div>`;
}

/** What an app's page shows beside the app itself. */
export interface AppFacts {
  granted: string[];
  secretPending: boolean;
  /** When the current secret stops working, while a next one is pending. */
  oldSecretEnds?: Date | undefined;
  /** The capability catalogue as it stands for this tenant's plan. */
  catalogue: CatalogueEntryView[];
  /** Records about persons the app's extensions hold: such an app is disabled, never deleted. */
  records: number;
  /** The ETags the settings and grant forms were rendered with. */
  etags: { client: string; grant: string };
}

/** A form of the app's page that comes back refused. */
export interface RefusedForms {
  /** The settings as entered (or, for the grant form, only the sentence), and why they were refused. */
  entered?: Entered | undefined;
  /** The grant form's boxes as the admin ticked them. */
  ticked?: string[] | undefined;
  /** The form whose save was refused because the app changed meanwhile: its stored state is shown beside it. */
  changedMeanwhile?: 'settings' | 'grant' | undefined;
  /** Delete was refused (asked or confirmed) because the app owns stored records. */
  deleteRefused?: boolean | undefined;
}

/** The app of `clientId` among `apps` by its name (client id in small type); the id alone once it is deleted. */
const appNamed = (apps: readonly ClientView[], clientId: string) => {
  const app = apps.find((a) => a.clientId === clientId);
  return app ? appName(app) : html`<code>${clientId}</code>`;
};

/** `n` of a countable `noun`, in words: "1 stored record", "2 stored records". */
export const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** An app as questions and refusals name it: by its name, its client id after it in small type. */
export const appName = (c: Pick<ClientView, 'name' | 'clientId'>) =>
  html`<strong>${c.name}</strong> <small><code>${c.clientId}</code></small>`;

/**
 * The notice of a saved grant: what is granted, and which of those the tenant's plan refuses until it includes them
 * (or, for storing records, refuses new ones), in words.
 */
export function grantSaved(c: ClientView, capabilities: readonly string[], catalogue: readonly CatalogueEntryView[]) {
  const saved = catalogue.filter((cap) => capabilities.includes(cap.id));
  const below = (kind: CatalogueEntryView['belowPlan']) =>
    saved.filter((cap) => cap.belowPlan === kind).map((cap) => `${cap.id} (needs plan ${cap.minPlan})`);
  const excluded = below('excluded');
  const writes = below('writes');
  return [
    `Granted capabilities saved for ${c.name}: ${capabilities.join(', ') || 'none'}.`,
    excluded.length > 0 &&
      `The tenant's plan does not include ${excluded.join(', ')}: ${c.name}'s calls that need ` +
        `${excluded.length === 1 ? 'it' : 'them'} will be refused until the plan does.`,
    writes.length > 0 &&
      `Until the plan includes ${writes.join(', ')}, ${c.name} can read and delete the records it stored but not ` +
        'store new ones.',
  ]
    .filter(Boolean)
    .join(' ');
}

/** What the tenant's plan means for a capability, said beside it before it is ticked. */
const planNote = (cap: CatalogueEntryView) =>
  cap.belowPlan === 'excluded'
    ? html` <strong class="plan">needs plan ${cap.minPlan}</strong>: refused until the tenant's plan includes it.`
    : cap.belowPlan === 'writes'
      ? html` <strong class="plan">needs plan ${cap.minPlan}</strong> to store new records; reading and deleting stored
ones works on any plan.`
      : '';

/**
 * Capabilities to tick, each with its catalogue description and, before it is ticked, whether it is closed on this
 * deployment and what the tenant's plan means for it; only `chosen` are ticked. Inputs are `<prefix>-<id>`; `anchor`
 * names each choice's block (a link to one capability of the grant form).
 */
function capabilityChoices(
  entries: readonly CatalogueEntryView[],
  chosen: readonly string[],
  { prefix, anchor }: { prefix: string; anchor?: string },
): Html {
  return html`${entries.map(
    (cap) => html`<div${anchor && html` id="${anchor}-${cap.id}"`}><input type="checkbox" id="${prefix}-${cap.id}"
name="capabilities" value="${cap.id}" aria-describedby="${prefix}-${cap.id}-d"${
      chosen.includes(cap.id) && html` checked`
    }><label for="${prefix}-${cap.id}"><code>${cap.id}</code></label>
<span id="${prefix}-${cap.id}-d">${cap.description}${
      !cap.enabled && ' (closed on this deployment: refused until the operator opens it)'
    }${planNote(cap)}</span></div>`,
  )}`;
}

export function appPage(
  frame: Frame & { session: ConsoleSession },
  c: ClientView,
  { granted, secretPending, oldSecretEnds, catalogue, records, etags }: AppFacts,
  { entered, ticked, changedMeanwhile, deleteRefused }: RefusedForms = {},
): Html {
  const { session } = frame;
  const base = appPath(c.tenantId, c.clientId);
  const next = c.status === 'active' ? 'disabled' : 'active';
  const settingsRefused = changedMeanwhile !== 'grant' && entered;
  const grantRefused = changedMeanwhile === 'grant' && entered;
  const v = (settingsRefused && entered.values) || {
    name: c.name,
    redirectUris: lines(c.redirectUris),
    allowedOrigins: lines(c.allowedOrigins),
  };
  const statusForm = postForm(
    session,
    `${base}/status`,
    html`<input type="hidden" name="status" value="${next}"><button type="submit">${
      next === 'disabled' ? 'Disable app' : 'Enable app'
    }</button>`,
  );
  // An app that owns records can only be disabled: said up front, before any button, so nothing is offered that
  // would be refused.
  const kept =
    records > 0 &&
    html`<section aria-labelledby="delete-h"><h2 id="delete-h">Disable instead of delete</h2>
${
  deleteRefused &&
  html`<p class="problem" role="alert">${c.name} was not deleted: it owns ${counted(records, 'stored record')}
about persons now.</p>`
}
<p id="kept-records">${c.name} owns ${counted(records, 'stored record')} about
persons, which the platform never deletes, so it cannot be deleted. ${
      c.status === 'active'
        ? 'Disable it instead: its tokens are refused on their next request, and it gets no new ones.'
        : 'It is disabled: its tokens are refused, and its records stay exportable.'
    }</p>
${statusForm}
</section>`;
  return layout(
    frame,
    html`
<dl><dt>Client id</dt><dd><code>${c.clientId}</code></dd><dt>Kind and type</dt><dd>${kindWords(c.kind)}, ${c.type}</dd>
<dt>Status</dt><dd>${c.status}</dd><dt>Stored records about persons</dt><dd>${records}</dd>
${securityFacts(c)}</dl>
${kept}
<section aria-labelledby="grant-h"><h2 id="grant-h">Granted capabilities</h2>
${
  grantRefused &&
  html`<p class="problem" role="alert">${grantRefused.problem}</p>
<p id="granted-now">Granted now: ${granted.join(', ') || 'none'}. The boxes below are as you ticked them.</p>`
}
${postForm(
  session,
  `${base}/grant`,
  html`<fieldset><legend>Capabilities this tenant grants to ${c.name}</legend>
${capabilityChoices(catalogue, ticked ?? granted, { prefix: 'cap', anchor: 'capability' })}
</fieldset>${etagField(etags.grant)}<button type="submit">Save granted capabilities</button>`,
)}
</section>
<section aria-labelledby="settings-h"><h2 id="settings-h">Settings</h2>
${redirectUrisToReplace(c.redirectUris)}
${settingsRefused && html`<p class="problem" role="alert">${settingsRefused.problem}</p>`}
${
  changedMeanwhile === 'settings' &&
  html`<dl id="stored-now"><dt>Name stored now</dt><dd>${c.name}</dd><dt>Redirect URIs stored now</dt><dd>${lines(
    c.redirectUris,
  )}</dd><dt>Web origins stored now</dt><dd>${lines(c.allowedOrigins) || 'none'}</dd></dl>`
}
${postForm(
  session,
  `${base}/settings`,
  html`${etagField(etags.client)}<label for="app-name">Name people see on the consent page</label>
<input id="app-name" name="name" type="text" required maxlength="200" value="${v.name ?? ''}">
<label for="app-redirects">Redirect URIs, one per line (the next authorization request uses them)</label>
<textarea id="app-redirects" name="redirectUris" rows="3" required>${v.redirectUris ?? ''}</textarea>
<label for="app-origins">Web origins allowed to call the token endpoint from a browser, one per line</label>
<textarea id="app-origins" name="allowedOrigins" rows="2">${v.allowedOrigins ?? ''}</textarea>
<div><button type="submit">Save settings</button></div>`,
)}
</section>
${
  records === 0 &&
  html`<section aria-labelledby="status-h"><h2 id="status-h">Status</h2>
<p>A disabled app's tokens are refused on their next request, and it gets no new ones.</p>
${statusForm}
</section>`
}
${
  c.type === 'confidential' &&
  c.tokenEndpointAuthMethod !== 'private_key_jwt' &&
  html`<section aria-labelledby="secret-h"><h2 id="secret-h">Client secret</h2>
${
  secretPending
    ? html`<p>A next secret is pending: both it and the current secret work until you promote it${
        oldSecretEnds && html`, and the current one at most until <strong>${when(oldSecretEnds)}</strong>`
      }.</p>
${postForm(session, `${base}/secrets/promote`, html`<button type="submit">Promote the next secret</button>`)}`
    : html`<p>Rotation: create a next secret (shown once), deploy it, then promote it; promotion ends the old secret
at once.</p>
${postForm(session, `${base}/secrets`, html`<button type="submit">Create a next secret</button>`)}`
}
</section>`
}
${
  records === 0 &&
  html`<section aria-labelledby="delete-h"><h2 id="delete-h">Delete</h2>
<p>Deleting removes the app with its secrets, grant, consents and service account.</p>
${postForm(session, `${base}/delete`, html`<button type="submit">Delete app</button>`)}
</section>`
}`,
  );
}

const DATE_TIME = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });
/** A moment as the admin reads it: "5 December 2026 at 08:01 UTC". */
const when = (at: Date) => `${DATE_TIME.format(at)} UTC`;

/** What a destructive action asks before it acts: its consequence, and the page Cancel (or a refusal) goes back to. */
export interface Confirmation {
  consequence: Html | string;
  back: Link;
}

/** The question page: the same form (fields kept) with `confirmed=yes` behind a Confirm button, and Cancel. */
export function confirmPage(
  frame: Frame & { session: ConsoleSession },
  action: string,
  fields: Record<string, string>,
  c: Confirmation,
): Html {
  return layout(
    frame,
    html`<p role="alert">${c.consequence}</p>
${postForm(
  frame.session,
  action,
  html`${Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}<input type="hidden" name="confirmed" value="yes">
<button type="submit">Confirm</button> <a href="${c.back.href}">Cancel</a>`,
)}`,
  );
}

/** A secret shown once: the first of a new app, or the next of a rotation. */
export function secretPage(
  frame: Frame,
  c: ClientView,
  secret: string,
  /** A rotation's next secret (not the first), with when the current one stops working. */
  rotation?: { oldSecretEnds: Date | undefined },
): Html {
  const first = !rotation;
  return layout(
    frame,
    html`<p>The ${first ? 'client secret' : 'next secret'} of <strong>${c.name}</strong> (<code>${c.clientId}</code>).
It is shown only this once; copy it now.</p>
<p><output id="new-secret" class="secret" aria-label="New client secret">${secret}</output>
<button type="button" data-copy="new-secret" hidden>Copy</button></p>
<p>${
      first
        ? 'The app authenticates at the token endpoint with its client id and this secret.'
        : html`Both this and the current secret work until you promote this one${
            rotation.oldSecretEnds &&
            html`, and the current one at most until <strong id="old-secret-ends">${when(rotation.oldSecretEnds)}</strong>`
          }; after that only this one does.`
    } <a href="${appPath(c.tenantId, c.clientId)}">Back to ${c.name}</a></p>`,
  );
}

/**
 * The tenant's persons, a page at a time, with a search by the start of a username or display name, a form to create
 * one (the form keeps what was typed when it is refused, except the password), and a button per login to disable or
 * enable it.
 */
export function personsPage(
  frame: Frame & { session: ConsoleSession; tenant: TenantView },
  page: { items: PersonListItem[]; nextCursor: string | null },
  q: string | undefined,
  entered: { displayName?: string | undefined; username?: string | undefined; problem?: string | undefined } = {},
): Html {
  const { session, tenant } = frame;
  const base = tenantPath(tenant.tenantId, 'persons');
  const next = page.nextCursor && `${base}?${new URLSearchParams({ ...(q && { q }), cursor: page.nextCursor })}`;
  return layout(
    frame,
    html`<form method="get" action="${base}" role="search"><label for="q">Find by username or name</label>
<input id="q" name="q" value="${q ?? ''}" maxlength="100"> <button type="submit">Find</button></form>
<table><caption>Persons${q && html` whose username or name contains “${q}”`}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Username</th><th scope="col">Person id</th>
<th scope="col">Login</th><th scope="col">Relationship</th><th scope="col">Actions</th></tr></thead>
<tbody>${page.items.map((p) => {
      const action =
        p.accountId &&
        p.relationship === 'active' &&
        postForm(
          session,
          tenantPath(tenant.tenantId, `persons/${encodeURIComponent(p.accountId)}/status`),
          html`<input type="hidden" name="q" value="${q ?? ''}"><input type="hidden" name="status" value="${
            p.accountStatus === 'active' ? 'disabled' : 'active'
          }"><button type="submit">${
            p.accountStatus === 'active' ? 'Disable login' : 'Enable login'
          }<span class="vh"> of ${p.displayName}</span></button>`,
          'inline',
        );
      const name = html`<a href="${tenantPath(
        tenant.tenantId,
        `persons/${encodeURIComponent(p.accountId ?? p.personId)}`,
      )}">${p.displayName}</a>`;
      return html`<tr><th scope="row">${name}</th><td>${p.username ?? '—'}</td><td><code>${p.personId}</code></td>
<td>${p.accountStatus ?? 'none'}</td><td>${p.relationship}</td><td>${action || ''}</td></tr>`;
    })}</tbody></table>
${page.items.length === 0 && html`<p>No persons${q && ' match'}.</p>`}
${next && html`<p><a href="${next}">Next page</a></p>`}
<h2 id="new-person">New person</h2>
${entered.problem && html`<p class="problem" role="alert">${entered.problem}</p>`}
${postForm(
  session,
  base,
  html`<label for="displayName">Display name</label>
<input id="displayName" name="displayName" required maxlength="200" value="${entered.displayName ?? ''}">
<label for="username">Username (unique in this tenant)</label>
<input id="username" name="username" required minlength="3" maxlength="100" autocomplete="off"
value="${entered.username ?? ''}">
<label for="password">Password (at least 8 characters)</label>
<input id="password" name="password" type="password" required minlength="8" maxlength="200" autocomplete="new-password">
<div><button type="submit">Create person</button></div>`,
)}`,
  );
}

export interface AccountRowView {
  accountId: string;
  clientId?: string | null;
  name?: string | null;
  capabilities?: string[];
  status: string;
  epoch: number;
}

/**
 * The service-account create form: apps that may have one, and the app picked in its first step with the capabilities
 * of its grant (as the catalogue states them for the tenant's plan) and those the admin ticked.
 */
export interface ServiceAccountForm {
  eligible: ClientView[];
  chosen?: { app: ClientView; offered: CatalogueEntryView[]; ticked: string[] } | undefined;
  entered?: Entered | undefined;
  /** Whether the issuer offers the client_credentials grant (ISSUER_ENABLE_CLIENT_CREDENTIALS). */
  clientCredentials: boolean;
}

/** Said wherever a service account's token request is offered while the issuer does not offer its grant. */
const CLIENT_CREDENTIALS_OFF = html`<p class="problem" role="note" id="grant-off">This deployment's token endpoint does
not offer the client_credentials grant yet (it is off by default while the contract is a draft), so a service account
cannot get a token: the request is refused. The operator turns it on by setting
<code>ISSUER_ENABLE_CLIENT_CREDENTIALS=true</code> for the issuer and restarting it.</p>`;

export function serviceAccountsPage(
  frame: Frame & { session: ConsoleSession; tenant: TenantView },
  accounts: AccountRowView[],
  form: ServiceAccountForm,
): Html {
  const { session, tenant } = frame;
  const base = tenantPath(tenant.tenantId, 'service-accounts');
  const table = html`<p>Advancing an epoch or disabling an account refuses its tokens from their next request on.</p>
<table><caption>Service accounts</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Account id</th><th scope="col">App</th>
<th scope="col">Capabilities</th><th scope="col">Status</th><th scope="col">Epoch</th>
<th scope="col">Actions</th></tr></thead>
<tbody>${accounts.map((a) => {
    const path = `${base}/${encodeURIComponent(a.accountId)}`;
    const next = a.status === 'active' ? 'disabled' : 'active';
    return html`<tr><th scope="row">${a.name}</th><td><code>${a.accountId}</code></td>
<td><code>${a.clientId}</code></td>
<td>${(a.capabilities ?? []).join(' ') || 'none'}</td><td>${a.status}</td><td>${a.epoch}</td>
<td>${postForm(
      session,
      `${path}/epoch`,
      html`<button type="submit">Advance epoch<span class="vh"> of ${a.name}</span></button>`,
      'inline',
    )}
${postForm(
  session,
  `${path}/status`,
  html`<input type="hidden" name="status" value="${next}"><button type="submit">${
    next === 'disabled' ? 'Disable' : 'Enable'
  }<span class="vh"> ${a.name}</span></button>`,
  'inline',
)}</td></tr>`;
  })}</tbody></table>`;
  const { eligible, chosen, entered, clientCredentials } = form;
  const create = chosen
    ? postForm(
        session,
        base,
        html`<input type="hidden" name="clientId" value="${chosen.app.clientId}">
<p>For <strong>${chosen.app.name}</strong> (<code>${chosen.app.clientId}</code>).
<a href="${base}">Choose another app</a></p>
<label for="sa-name">Name (what the account does, e.g. nightly sync)</label>
<input id="sa-name" name="name" type="text" required maxlength="200" value="${entered?.values.name ?? ''}">
<fieldset><legend>Capabilities its tokens may use (from the app's grant)</legend>
${capabilityChoices(chosen.offered, chosen.ticked, { prefix: 'sa-cap' })}${
          chosen.offered.length === 0 &&
          html`<p>The tenant grants ${chosen.app.name} no capabilities yet: grant them on
<a href="${appPath(tenant.tenantId, chosen.app.clientId)}">its page</a> first.</p>`
        }
</fieldset>
<div><button type="submit">Create service account</button></div>`,
      )
    : eligible.length > 0
      ? html`<form method="get" action="${base}"><label for="sa-app">App</label>
<select id="sa-app" name="clientId">${eligible.map(
          (a) => html`<option value="${a.clientId}">${a.name} (${a.clientId})</option>`,
        )}</select>
<div><button type="submit">Next: name and capabilities</button></div></form>`
      : html`<p>Every confidential app of this tenant has its service account already, or there is none:
<a href="${tenantPath(tenant.tenantId, 'apps')}#new-app">register a confidential app</a> first.</p>`;
  return layout(
    frame,
    html`<p>A service account is how an app acts as itself rather than for a person: a server job (a nightly sync,
a report) asks the token endpoint for a token with the app's own client id and secret (the client_credentials grant)
and calls the API with the capabilities given here, within what the tenant grants the app. Each confidential app can
have one.</p>
${!clientCredentials && CLIENT_CREDENTIALS_OFF}
${
  accounts.length > 0
    ? table
    : html`<p id="no-service-accounts">No service accounts yet. Each one is listed here, with its app and
capabilities, once created with <a href="#new-sa-h">Create a service account</a> below.</p>`
}
<section aria-labelledby="new-sa-h"><h2 id="new-sa-h">Create a service account</h2>
${entered && html`<p class="problem" role="alert">${entered.problem}</p>`}
${create}
</section>`,
  );
}

/** A new service account: its id and the next step, the token request with the app's credentials. */
export function newServiceAccountPage(
  frame: Frame & { tenant: TenantView },
  a: { accountId: string; clientId: string; name: string; capabilities: string[] },
  { tokenEndpoint, clientCredentials }: { tokenEndpoint: string; clientCredentials: boolean },
): Html {
  const scope = a.capabilities.join(' ');
  const curl =
    `curl -u '${a.clientId}:<client secret>' -d grant_type=client_credentials` +
    `${scope ? ` -d 'scope=${scope}'` : ''} ${tokenEndpoint}`;
  return layout(
    frame,
    html`<p><strong>${a.name}</strong> is created: service account <code id="new-account">${a.accountId}</code> of
<code>${a.clientId}</code>, with ${scope ? html`<code>${scope}</code>` : 'no capabilities'}.</p>
<h2>Next: request a token</h2>
${
  clientCredentials
    ? html`<p>The app's server asks the token endpoint for a token with its client id and client secret
(client_credentials); the token's subject is this account. For example:</p>
<pre id="token-request">${curl}</pre><button type="button" data-copy="token-request" hidden>Copy</button>
<p>Then call the API with <code>Authorization: Bearer &lt;access_token&gt;</code>.</p>`
    : CLIENT_CREDENTIALS_OFF
}
<p><a href="${tenantPath(frame.tenant.tenantId, 'service-accounts')}">Back to the service accounts</a></p>`,
  );
}

export function extensionsPage(
  frame: Frame & { session: ConsoleSession; tenant: TenantView },
  extensions: RegisteredExtension[],
  apps: ClientView[],
  entered?: Entered,
): Html {
  const { session, tenant } = frame;
  const v = entered?.values ?? {};
  return layout(
    frame,
    html`
${
  extensions.length === 0
    ? html`<p id="no-extensions">No extensions yet: the kinds of record an app keeps about persons are listed here
once registered with <a href="#register-h">Register an extension</a> below.</p>`
    : html`<table><caption>Registered extensions</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Extension id</th><th scope="col">Owning app</th>
<th scope="col">Schema versions</th></tr></thead>
<tbody>${extensions.map(
        (e) => html`<tr><th scope="row">${e.name}</th><td><code>${e.extensionId}</code></td>
<td>${appNamed(apps, e.clientId)}</td><td>${e.schemaVersions.join(', ')}</td></tr>`,
      )}</tbody></table>`
}
<section aria-labelledby="register-h"><h2 id="register-h">Register an extension</h2>
${entered && html`<p class="problem" role="alert" id="ext-problem">${entered.problem}</p>`}
${postForm(
  session,
  tenantPath(tenant.tenantId, 'extensions'),
  html`
<label for="ext-app">Owning app</label>
<select id="ext-app" name="clientId" required>${apps.map(
    (a) =>
      html`<option value="${a.clientId}"${
        v.clientId === a.clientId && html` selected`
      }>${a.name} (${a.clientId})</option>`,
  )}</select>
<label for="ext-name">Name</label>
<input id="ext-name" name="name" type="text" required maxlength="200" value="${v.name ?? ''}">
<label for="ext-schema">JSON Schema for version 1</label>
<textarea id="ext-schema" name="schema" rows="10" cols="70" required${
    entered && html` aria-invalid="true" aria-describedby="ext-problem"`
  }>${v.schema ?? '{"type": "object"}'}</textarea>
<div><button type="submit">Register extension</button></div>`,
)}
</section>`,
  );
}

/** An option of a select: the value sent and the words shown. */
export interface Choice {
  value: string;
  words: string;
}

/** A select of `options` (a value shown as it is, or a Choice), with `any` first. */
const select = (
  id: string,
  name: string,
  label: string,
  options: readonly (string | Choice)[],
  chosen: string | undefined,
  any: string,
) => html`<div><label for="${id}">${label}</label>
<select id="${id}" name="${name}"><option value="">${any}</option>${options.map((o) => {
  const { value, words } = typeof o === 'string' ? { value: o, words: o } : o;
  return html`<option value="${value}"${chosen === value && html` selected`}>${words}</option>`;
})}</select></div>`;

/**
 * A decision as the admin reads it: the app and the subject by name, the check in words, when allowed the status the
 * API then answered (once metered), and when denied why in words and where that is fixed.
 */
export type DecisionRow = DecisionView & {
  app: string;
  who: string;
  check: string;
  answered?: number | undefined;
  why?: { sentence: string; fix?: Link | undefined } | undefined;
};

/** The outcome filter's choices, in the words of the table's Outcome column. */
const OUTCOMES: readonly Choice[] = [
  { value: 'allow', words: 'allowed' },
  { value: 'deny', words: 'denied' },
];

/** An allowed decision with the API's answer beside it: a refused request is not shown as a success. */
const outcomeOf = (d: DecisionRow) =>
  !d.allow
    ? 'denied'
    : d.answered === undefined
      ? 'allowed'
      : d.answered < 400
        ? html`allowed <small>answered ${d.answered}</small>`
        : html`allowed, <strong class="refused">then refused: ${d.answered} ${STATUS_CODES[d.answered] ?? ''}</strong>`;

export function decisionsPage(
  frame: Frame & { tenant: TenantView },
  page: { items: DecisionRow[]; nextCursor: string | null },
  filters: DecisionFilters,
  /** `denials`: each deny code with the table's sentence for it. */
  choices: { apps: readonly Choice[]; denials: readonly Choice[]; capabilities: readonly string[] },
): Html {
  const base = tenantPath(frame.tenant.tenantId, 'decisions');
  const kept = Object.fromEntries(Object.entries(filters).filter((e): e is [string, string] => Boolean(e[1])));
  const older = page.nextCursor && `${base}?${new URLSearchParams({ ...kept, cursor: page.nextCursor })}`;
  const filtered = Object.keys(kept).length > 0;
  return layout(
    frame,
    html`
<form method="get" action="${base}" role="search" aria-label="Filter decisions">
<div><label for="request-id">Request id</label>
<input id="request-id" name="requestId" type="search" value="${filters.requestId ?? ''}" maxlength="128"></div>
${select('f-app', 'clientId', 'App', choices.apps, filters.clientId, 'Any app')}
${select('f-outcome', 'outcome', 'Outcome', OUTCOMES, filters.outcome, 'Allowed or denied')}
${select('f-code', 'code', 'Why denied', choices.denials, filters.code, 'Any reason')}
${select('f-capability', 'capability', 'Capability', choices.capabilities, filters.capability, 'Any capability')}
<button type="submit">Search</button>${filtered && html` <a href="${base}">Clear filters</a>`}</form>
<table><caption>${
      filters.requestId
        ? html`Decisions for request ${filters.requestId}`
        : filtered
          ? 'Decisions matching the filters, newest first'
          : 'Recent decisions, newest first'
    }</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Request id</th><th scope="col">App</th>
<th scope="col">Subject</th><th scope="col">Capability</th><th scope="col">Outcome</th><th scope="col">Why denied</th>
<th scope="col">Check that decided</th></tr></thead>
<tbody>${page.items.map(
      (d) => html`<tr><td>${d.createdAt}</td><th scope="row"><code>${d.requestId}</code></th>
<td>${d.app}</td><td>${d.who}</td>
<td>${d.capability}</td><td>${outcomeOf(d)}</td><td>${
        d.why &&
        html`${d.why.sentence}${
          d.why.fix && html` <a href="${d.why.fix.href}">Fix it: ${d.why.fix.label}</a>`
        } <small><code>${d.code}</code></small>`
      }</td><td>${d.check}</td></tr>`,
    )}</tbody></table>
${page.items.length === 0 && html`<p>No decisions found.</p>`}
${older && html`<p><a href="${older}">Older decisions</a></p>`}`,
  );
}

export function usagePage(frame: Frame, total: number, days: DailyUsage[], apps: readonly ClientView[]): Html {
  return layout(
    frame,
    html`<p>Metered API calls in total: <strong>${total}</strong>. A retried request with the same request id counts
once.</p>
${
  days.length === 0
    ? html`<p id="no-usage">No metered calls in the last 30 days: each day's calls are listed here, per app, once an
app calls the API with a token.</p>`
    : html`<table><caption>Metered calls per day (UTC) and app, last 30 days</caption>
<thead><tr><th scope="col">Day</th><th scope="col">App</th><th scope="col">Calls</th></tr></thead>
<tbody>${days.map(
        (d) => html`<tr><th scope="row">${d.day}</th><td>${appNamed(apps, d.clientId)}</td><td>${d.calls}</td></tr>`,
      )}</tbody></table>`
}`,
  );
}

/** The export page: how many records there are before any download, the records file, and the whole tenant. */
export function exportPage(
  frame: Frame & { tenant: TenantView },
  extensions: RegisteredExtension[],
  records: number,
): Html {
  const base = tenantPath(frame.tenant.tenantId, 'export');
  return layout(
    frame,
    html`<section aria-labelledby="records-h"><h2 id="records-h">Records</h2>
<p id="record-count">${
      records === 0
        ? "This tenant's apps have stored no records about persons, so there is no records file to download."
        : html`This tenant's apps have stored <strong>${counted(records, 'record')}</strong>
about persons. The file holds one JSON object a line (NDJSON), from one consistent snapshot, whatever the plan or
quota.`
    }</p>
${
  records > 0 &&
  html`<form method="get" action="${base}/download">
<label for="export-extension">Extension</label>
<select id="export-extension" name="extensionId"><option value="">All extensions</option>${extensions.map(
    (e) => html`<option value="${e.extensionId}">${e.name} (${e.extensionId})</option>`,
  )}</select>
<div><button type="submit">Download records</button></div></form>`
}</section>
<section aria-labelledby="tenant-h"><h2 id="tenant-h">The whole tenant</h2>
<p>One NDJSON file from one snapshot, every line with a <code>type</code>: the tenant, its persons (with the
relationship), apps (without secrets), grants, service accounts, extensions (with their schema versions), records and
audit entries. No password, secret or key is in it.</p>
<form method="get" action="${base}/tenant"><button type="submit">Download the whole tenant</button></form>
</section>`,
  );
}

/** An audit entry as the page shows it: a sentence, the changes as a field list, and who made it. */
export type AuditLine = AuditEntryView & { sentence: Html; changeList: Html | undefined; by: Html };

/** The tenant's audit trail, newest first, with the admin API's filters and its cursor as an "Older entries" link. */
export function auditPage(
  frame: Frame & { tenant: TenantView },
  page: Omit<AuditPage, 'items'> & { items: AuditLine[] },
  /** `since` is a day (YYYY-MM-DD), the date picker's value. */
  filters: { action?: string | undefined; since?: string | undefined },
  actions: readonly Choice[],
  /** What Verify checks: the whole chain (the operator) or this tenant's entries (a tenant admin). */
  scope: 'chain' | 'tenant',
  verified?: AuditVerification,
): Html {
  const base = tenantPath(frame.tenant.tenantId, 'audit');
  const query = (extra: Record<string, string>) =>
    `?${new URLSearchParams({
      ...(filters.action && { action: filters.action }),
      ...(filters.since && { since: filters.since }),
      ...extra,
    })}`;
  const checked = (n: number) => (n === 1 ? '1 entry checked' : `${n} entries checked`);
  const [what, is, fails] =
    scope === 'chain' ? ['The whole audit trail', 'is', 'fails'] : ["This tenant's audit entries", 'are', 'fail'];
  return layout(
    frame,
    html`
<section aria-labelledby="verify-h"><h2 id="verify-h">Verify</h2>
<p>Every entry is chained to the one before it by a SHA-256 hash: an entry changed after it was written, or one
removed, breaks the chain there. ${
      scope === 'chain'
        ? 'Verify checks the whole chain, every tenant.'
        : "Verify checks this tenant's entries, each against the entry stored before it."
    }</p>
${
  verified &&
  (verified.ok
    ? html`<p class="notice" role="status" id="verification">${what} ${is} intact (${checked(verified.entries)}).</p>`
    : html`<p class="problem" role="alert" id="verification">${what} ${fails} at entry
<code>${verified.brokenAt}</code>:
it was changed after it was written, or the entry before it was removed (${checked(verified.entries)}).</p>`)
}
<form method="get" action="${base}/verify"><button type="submit">Verify</button></form></section>
<form method="get" action="${base}" role="search">
${select('audit-action', 'action', 'Action', actions, filters.action, 'Any action')}
<div><label for="audit-since">Since (day, UTC)</label>
<input id="audit-since" name="since" type="date" value="${
      /^\d{4}-\d{2}-\d{2}/.exec(filters.since ?? '')?.[0] ?? ''
    }"></div>
<button type="submit">Filter</button></form>
<table><caption>Administrative changes, newest first</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">What was done</th>
<th scope="col">Changes</th><th scope="col">By</th><th scope="col">Request id</th>
<th scope="col">Address</th></tr></thead>
<tbody>${page.items.map(
      (e) => html`<tr><td>${e.at}</td><th scope="row">${e.sentence} <small><code>${e.action}</code></small></th>
<td>${e.changeList}</td><td>${e.by}</td>
<td><code>${e.requestId}</code></td><td>${e.ip}</td></tr>`,
    )}</tbody></table>
${
  page.items.length === 0 &&
  html`<p>No changes recorded${filters.action || filters.since ? ' for these filters' : ''}.</p>`
}
${page.nextCursor && html`<p><a href="${base}${query({ cursor: page.nextCursor })}">Older entries</a></p>`}`,
  );
}

/**
 * One person of this tenant as the admin knows them: name, username, login status and relationship, the apps they let
 * in (consents, each with its session's state), and the actions on them.
 */
export function personPage(
  frame: Frame & { session: ConsoleSession; tenant: TenantView },
  p: PersonListItem,
  consents: ConsentView[],
): Html {
  const { session, tenant } = frame;
  const base = tenantPath(tenant.tenantId, `persons/${encodeURIComponent(p.accountId ?? p.personId)}`);
  const live = consents.filter((c) => !c.revokedAt);
  const related = p.relationship === 'active';
  return layout(
    frame,
    html`<dl><dt>Name</dt><dd>${p.displayName}</dd><dt>Username</dt><dd>${p.username ?? 'no login here'}</dd>
<dt>Login</dt><dd>${p.accountStatus ?? 'none'}</dd><dt>Relationship with this tenant</dt><dd>${
      related ? 'active' : 'ended'
    }</dd><dt>Person id</dt><dd><code>${p.personId}</code></dd></dl>
<p><a href="${tenantPath(tenant.tenantId, 'persons')}">Back to the persons</a></p>
<table><caption>Apps ${p.displayName} let in (consents) and their sessions, newest first</caption>
<thead><tr><th scope="col">App</th><th scope="col">Client id</th><th scope="col">Since (UTC)</th>
<th scope="col">Session</th></tr></thead>
<tbody>${consents.map(
      (c) => html`<tr><th scope="row">${c.appName}</th><td><code>${c.clientId}</code></td><td>${c.since}</td>
<td>${c.revokedAt ? `ended ${c.revokedAt}` : 'active'}</td></tr>`,
    )}</tbody></table>
${consents.length === 0 && html`<p>${p.displayName} has not let any app in.</p>`}
${
  p.accountId &&
  related &&
  html`<section aria-labelledby="login-h"><h2 id="login-h">Login</h2>
<p>A disabled login cannot sign in, and its tokens are refused from their next request.</p>
${postForm(
  session,
  `${base}/status`,
  html`<input type="hidden" name="status" value="${p.accountStatus === 'active' ? 'disabled' : 'active'}">
<button type="submit">${p.accountStatus === 'active' ? 'Disable login' : 'Enable login'}</button>`,
)}</section>`
}
${
  live.length > 0 &&
  html`<section aria-labelledby="end-h"><h2 id="end-h">End every session</h2>
<p>Every app loses this person's tokens from its next request (403 subject_revoked) and needs a new consent; the
person signs in again.</p>
${postForm(session, `${base}/sessions/revoke`, html`<button type="submit">End every session</button>`)}</section>`
}
${
  related &&
  html`<section aria-labelledby="relationship-h"><h2 id="relationship-h">End the relationship</h2>
<p>This tenant stops serving ${p.displayName}: every app loses access to them. The person and the records about them
are kept.</p>
${postForm(session, `${base}/relationship/end`, html`<button type="submit">End the relationship</button>`)}</section>`
}`,
  );
}
