// The audit trail in the admin's words (issue 51 point 4): one sentence per action code the admin operations write
// (grep `action:` in policies/admin), the target named as the console's lists name it, the changes as a field list
// with secrets and keys only "changed", and who made the change. The audit page's table and its action filter both
// read this one table, so the filter offers exactly the actions that can be recorded.
import type { AuditEntryView } from '../admin/audit.js';
import { REDACTED } from '../admin/audit.js';
import { html, type Html } from './html.js';
import type { Choice } from './pages.js';

/** The target of an entry: its words (a name, or the id in code when nothing names it) and, for accounts, whose. */
export interface NamedTarget {
  words: Html;
  /** A person's login account, a service account, or neither (the sentence then says "the account"). */
  kind?: 'person' | 'service_account' | undefined;
}

type Sentence = (t: NamedTarget) => Html;

const account =
  (person: (w: Html) => Html, service: (w: Html) => Html, other: (w: Html) => Html): Sentence =>
  (t) =>
    t.kind === 'person' ? person(t.words) : t.kind === 'service_account' ? service(t.words) : other(t.words);

/** Every action code written by policies/admin, with its sentence and the words the filter offers. */
export const AUDIT_ACTIONS: Record<string, { choice: string; sentence: Sentence }> = {
  'tenant.create': { choice: 'Tenant created', sentence: (t) => html`Created the tenant ${t.words}` },
  'tenant.rename': { choice: 'Tenant renamed', sentence: (t) => html`Renamed the tenant ${t.words}` },
  'tenant.plan_change': { choice: 'Plan changed', sentence: (t) => html`Changed the plan of ${t.words}` },
  'tenant.limits_change': {
    choice: 'Rate limits changed',
    sentence: (t) => html`Changed the rate limits of ${t.words}`,
  },
  'tenant.suspend': { choice: 'Tenant suspended', sentence: (t) => html`Suspended the tenant ${t.words}` },
  'tenant.activate': { choice: 'Tenant reactivated', sentence: (t) => html`Reactivated the tenant ${t.words}` },
  'person.create': { choice: 'Person added', sentence: (t) => html`Added the person ${t.words}` },
  'person.relationship_end': {
    choice: 'Relationship with a person ended',
    sentence: (t) => html`Ended the relationship with ${t.words}`,
  },
  'account.disable': {
    choice: 'Login or service account disabled',
    sentence: account(
      (w) => html`Disabled the login of ${w}`,
      (w) => html`Disabled ${w}`,
      (w) => html`Disabled the account ${w}`,
    ),
  },
  'account.enable': {
    choice: 'Login or service account enabled',
    sentence: account(
      (w) => html`Enabled the login of ${w}`,
      (w) => html`Enabled ${w}`,
      (w) => html`Enabled the account ${w}`,
    ),
  },
  'account.sessions_revoke': {
    choice: 'Every session ended',
    sentence: account(
      (w) => html`Ended every session of ${w}`,
      (w) => html`Ended every session of ${w}`,
      (w) => html`Ended every session of the account ${w}`,
    ),
  },
  'account.epoch_advance': {
    choice: 'Epoch advanced (tokens refused)',
    sentence: account(
      (w) => html`Advanced the epoch of ${w}: their earlier tokens are refused`,
      (w) => html`Advanced the epoch of ${w}: its earlier tokens are refused`,
      (w) => html`Advanced the epoch of the account ${w}: its earlier tokens are refused`,
    ),
  },
  'service_account.create': {
    choice: 'Service account created',
    sentence: account(
      (w) => html`Created ${w}`,
      (w) => html`Created ${w}`,
      (w) => html`Created the service account ${w}`,
    ),
  },
  'service_account.update': {
    choice: 'Service account changed',
    sentence: account(
      (w) => html`Changed ${w}`,
      (w) => html`Changed ${w}`,
      (w) => html`Changed the service account ${w}`,
    ),
  },
  'client.create': { choice: 'App registered', sentence: (t) => html`Registered the app ${t.words}` },
  'client.update': { choice: 'App changed', sentence: (t) => html`Changed the app ${t.words}` },
  'client.disable': { choice: 'App disabled', sentence: (t) => html`Disabled the app ${t.words}` },
  'client.enable': { choice: 'App enabled', sentence: (t) => html`Enabled the app ${t.words}` },
  'client.delete': { choice: 'App deleted', sentence: (t) => html`Deleted the app ${t.words}` },
  'client_secret.create': {
    choice: 'Next app secret issued',
    sentence: (t) => html`Issued a next secret for the app ${t.words}`,
  },
  'client_secret.promote': {
    choice: 'Next app secret made the only one',
    sentence: (t) => html`Made the next secret the only one of the app ${t.words}`,
  },
  'grant.replace': { choice: 'Grant set', sentence: (t) => html`Set the capabilities granted to ${t.words}` },
  'grant.withdraw': { choice: 'Grant withdrawn', sentence: (t) => html`Withdrew the grant of ${t.words}` },
  'extension.create': { choice: 'Extension registered', sentence: (t) => html`Registered the extension ${t.words}` },
  'extension.schema_add': {
    choice: 'Extension schema added',
    sentence: (t) => html`Added a schema version to the extension ${t.words}`,
  },
  'admin_key.create': { choice: 'Admin key created', sentence: (t) => html`Created the admin key ${t.words}` },
  'admin_key.revoke': { choice: 'Admin key revoked', sentence: (t) => html`Revoked the admin key ${t.words}` },
  'capability.open': { choice: 'Capability opened', sentence: (t) => html`Opened the capability ${t.words}` },
  'capability.close': { choice: 'Capability closed', sentence: (t) => html`Closed the capability ${t.words}` },
};

/** The action filter's choices, in the table's order: the words, then the code. */
export const AUDIT_ACTION_CHOICES: Choice[] = Object.entries(AUDIT_ACTIONS).map(([value, a]) => ({
  value,
  words: `${a.choice} (${value})`,
}));

/** The entry as a sentence; an action this table does not know reads as its code on the target. */
export function auditSentence(action: string, target: NamedTarget): Html {
  const known = AUDIT_ACTIONS[action];
  return known ? known.sentence(target) : html`<code>${action}</code> on ${target.words}`;
}

/** A recorded value as words: nothing as "none", a list joined, anything structured as its JSON. */
function valueWords(v: unknown): string {
  if (v === null || v === undefined || v === '') return 'none';
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.map(valueWords).join(', ');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The changes as a field list: "field: from → to", a secret or key only "changed" (its value is never recorded). */
export function changeList(changes: AuditEntryView['changes']): Html | undefined {
  const fields = Object.entries(changes ?? {});
  if (fields.length === 0) return undefined;
  return html`<ul class="changes">${fields.map(([field, c]) =>
    c.from === REDACTED || c.to === REDACTED
      ? html`<li>${field}: changed</li>`
      : c.from === null
        ? html`<li>${field}: ${valueWords(c.to)}</li>`
        : html`<li>${field}: ${valueWords(c.from)} → ${valueWords(c.to)}</li>`,
  )}</ul>`;
}

/** A day picked in the date filter (`YYYY-MM-DD`, UTC) as the API's `since`; anything else is passed on as it is. */
export function sinceOfDay(day: string | undefined): string | undefined {
  return day && /^\d{4}-\d{2}-\d{2}$/.test(day) ? `${day}T00:00:00Z` : day;
}
