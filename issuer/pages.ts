// Server-rendered login, consent and error pages: no scripts, no external assets, every interpolated value escaped,
// and a Content-Security-Policy that allows only the page's own inline style and form posts.
import escapeHtml from 'escape-html';
import type { Response } from 'express';
import { pageSecurityHeaders } from '../common/page-security.js';
import { whatTheAppSees } from './consent-words.js';

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2230}
main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;
box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 1rem}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #8a93a6;border-radius:4px}
button{font:inherit;padding:.5rem 1.25rem;border-radius:4px;border:1px solid #2448b8;background:#2c56d6;color:#fff;
cursor:pointer;margin-top:1rem}
button.secondary{background:#fff;color:#2448b8}
button:focus,input:focus{outline:3px solid #f0b400;outline-offset:1px}
.error{color:#a01c1c;font-weight:600}
ul{padding-left:1.2rem}
code{font-size:.9em;background:#eef0f4;padding:0 .25em;border-radius:3px}
.capability-id{display:block;font-size:.75rem;color:#5a6275}
.actions{display:flex;gap:.75rem}
`;
const securityHeaders = pageSecurityHeaders(STYLE);

export interface PageOptions {
  status?: number;
  /** Extra response headers (retry-after on a throttled sign-in). */
  headers?: Record<string, string>;
  /**
   * Origin the browser may be redirected to after a form post (the app's redirect URI): Chromium applies
   * form-action to the redirects that follow a submission, so 'self' alone would block the final redirect.
   */
  redirectOrigin?: string | undefined;
}

/** Headers of every page; `redirectOrigin` see PageOptions. */
export const pageHeaders = (redirectOrigin?: string): Record<string, string> => ({
  'content-type': 'text/html; charset=utf-8',
  ...securityHeaders(redirectOrigin ? [redirectOrigin] : []),
});

export const pageHtml = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;

export function sendPage(res: Response, title: string, body: string, opts: PageOptions = {}): void {
  res
    .status(opts.status ?? 200)
    .set({ ...pageHeaders(opts.redirectOrigin), ...opts.headers })
    .send(pageHtml(title, body));
}

export interface LoginView {
  uid: string;
  appName: string;
  error?: string | undefined;
  username?: string | undefined;
}

/** The sign-in form every page uses: inputs `username` and `password`, one submit button. */
function loginForm(action: string, v: { error?: string | undefined; username?: string | undefined }): string {
  return `${v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" required
value="${escapeHtml(v.username ?? '')}"${v.username ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password"
autocomplete="current-password" required${v.username ? ' autofocus' : ''}>
<button type="submit">Sign in</button>
</form>`;
}

export function loginPage(v: LoginView): string {
  return `<h1>Sign in</h1>
<p>Sign in to continue to <strong>${escapeHtml(v.appName)}</strong>.</p>
${loginForm(`/interaction/${encodeURIComponent(v.uid)}/login`, v)}`;
}

/**
 * A capability as a person reads it: what the app will see, in plain words; the catalogue's description and the id
 * after, in small type, for whoever needs to match it to the app's documentation.
 */
const capabilityItem = (tenantName: string) => (c: { id: string; description: string }) => {
  const words = whatTheAppSees(c.id, tenantName);
  const catalogue = `${words ? `${escapeHtml(c.description)} · ` : ''}<code>${escapeHtml(c.id)}</code>`;
  return `<li>${escapeHtml(words ?? c.description)} <small class="capability-id">${catalogue}</small></li>`;
};

export interface ConsentView {
  uid: string;
  appName: string;
  tenantName: string;
  capabilities: { id: string; description: string }[];
}

/**
 * Names the app, the tenant and each capability; the person acts only as themselves, so there is no "act for"
 * choice.
 */
export function consentPage(v: ConsentView): string {
  const items = v.capabilities.map(capabilityItem(v.tenantName)).join('\n');
  return `<h1>Allow access?</h1>
<p><strong>${escapeHtml(v.appName)}</strong> asks to access your data at <strong>${escapeHtml(v.tenantName)}</strong>,
as you, with these permissions:</p>
<ul>
${items}
</ul>
<form method="post" action="/interaction/${encodeURIComponent(v.uid)}/confirm">
<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`;
}

export function accountSignInPage(v: { error?: string | undefined; username?: string | undefined }): string {
  return `<h1>Sign in</h1>
<p>Sign in to see the apps you allowed to act for you, and to revoke their access.</p>
${loginForm('/account/apps', v)}`;
}

export interface ConnectedApp {
  clientId: string;
  name: string;
  tenant: string;
  capabilities: { id: string; description: string }[];
  /** When the latest consent was given, and when a token was last issued (ISO 8601, UTC). */
  allowedAt: string;
  lastTokenAt?: string | undefined;
}

const when = (iso: string) =>
  `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>`;

/** Each app in its own labelled section with its own revoke form; the button names the app for screen readers. */
export function connectedAppsPage(v: { apps: ConnectedApp[]; csrf: string; notice?: string | undefined }): string {
  const csrf = `<input type="hidden" name="_csrf" value="${escapeHtml(v.csrf)}">`;
  const apps = v.apps
    .map(
      (a, i) => `<section aria-labelledby="app-${i}">
<h2 id="app-${i}">${escapeHtml(a.name)}</h2>
<p>At <strong>${escapeHtml(a.tenant)}</strong>. Allowed ${when(a.allowedAt)}; ${
        a.lastTokenAt ? `last token issued ${when(a.lastTokenAt)}` : 'no token issued yet'
      }.</p>
<ul>${a.capabilities.map(capabilityItem(a.tenant)).join('')}</ul>
<form method="post" action="/account/apps/revoke">${csrf}<input type="hidden" name="clientId"
value="${escapeHtml(a.clientId)}">
<button type="submit" aria-describedby="app-${i}">Revoke access</button></form>
</section>`,
    )
    .join('\n');
  return `<h1>Connected apps</h1>
${v.notice ? `<p role="status">${escapeHtml(v.notice)}</p>` : ''}
${v.apps.length ? apps : '<p>You have not allowed any app to act for you.</p>'}
<form method="post" action="/account/sign-out">${csrf}<button type="submit" class="secondary">Sign out</button></form>`;
}

/** The retry-after of a page answered while a store the issuer needs fails. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/** What a person reads while a store the issuer needs fails: try again shortly, not start over. */
export const unavailablePageBody = (what: string): string =>
  `<h1>Try again shortly</h1><p>${escapeHtml(what)} is unavailable just now. Reload this page in a few seconds.</p>`;

/**
 * When a store the sign-in needs fails (the database, Redis): the platform's 503 with retry-after, as every service
 * answers a failing dependency.
 */
export function sendUnavailablePage(res: Response, what = 'Signing in'): void {
  sendPage(res, 'Try again shortly', unavailablePageBody(what), {
    status: 503,
    headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) },
  });
}

export function errorPage(message: string, detail?: string): string {
  return `<h1>Something went wrong</h1><p>${escapeHtml(message)}</p>${
    detail ? `<p><code>${escapeHtml(detail)}</code></p>` : ''
  }<p>Return to the application and start again.</p>`;
}
