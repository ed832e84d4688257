// Why an admin operation refused, as the console says it: a sentence about what the admin typed. The admin API's
// messages name JSON paths and carry zod's wording ("rateLimit.account.points: Too small: expected number to be
// >=1"); here each known path becomes the field's name on the form and each known phrasing plain words. A message
// the table does not know is shown as it came, as a sentence.
import type { Refusal } from '../../wire/outcome.js';
import { redirectUriProblem } from '../admin/redirect-uris.js';

/** The form field a body path names. Redirect URIs are worded by the app form itself. */
const FIELDS: Record<string, string> = {
  body: 'The form',
  displayName: 'The display name',
  name: 'The name',
  label: 'The label',
  slug: 'The slug',
  kind: 'The kind',
  type: 'The type',
  plan: 'The plan',
  status: 'The status',
  username: 'The username',
  password: 'The password',
  clientId: 'The app',
  capabilities: 'The capabilities',
  allowedOrigins: 'The web origins',
  rateLimit: 'The rate limits',
  'rateLimit.tenant': "The whole tenant's limit",
  'rateLimit.tenant.points': "The whole tenant's requests",
  'rateLimit.tenant.durationS': "The whole tenant's window",
  'rateLimit.account': "Each account's limit",
  'rateLimit.account.points': "Each account's requests",
  'rateLimit.account.durationS': "Each account's window",
};

/** zod's phrasings, as words; `$n` are its numbers. */
const PHRASES: [RegExp, (...m: string[]) => string][] = [
  [/^Too small: expected number to be >=?(\S+)$/, (n) => `must be at least ${n}`],
  [/^Too big: expected number to be <=?(\S+)$/, (n) => `must be at most ${n}`],
  [/^Too small: expected string to have >=?(\d+) characters?$/, (n) => `needs at least ${n} characters`],
  [/^Too big: expected string to have <=?(\d+) characters?$/, (n) => `may have at most ${n} characters`],
  [/^Too big: expected array to have <=?(\d+) items?$/, (n) => `may have at most ${n} entries`],
  [/^Invalid input: expected \w+, received undefined$/, () => 'is missing'],
  [/^Invalid input: expected (?:number|int), received \w+$/, () => 'must be a whole number'],
  [/^Invalid (?:option|input): expected one of .*$/, () => 'is not one of the choices offered'],
  [/^Invalid string: must match pattern .*$/, () => 'may hold only lower-case letters, digits and single dashes'],
  [/^Invalid URL$/, () => 'is not a URL'],
];

const words = (phrase: string) => {
  for (const [pattern, say] of PHRASES) {
    const m = pattern.exec(phrase.replace(/\.$/, ''));
    if (m) return say(...m.slice(1));
  }
  return phrase;
};

/** A path of the body (`rateLimit.account.points`, `allowedOrigins.0`) as the field's name, or undefined. */
function fieldOf(path: string): string | undefined {
  if (FIELDS[path]) return FIELDS[path];
  const item = /^(\w+)\.(\d+)$/.exec(path);
  return item && FIELDS[item[1]!] ? `${FIELDS[item[1]!]} (line ${Number(item[2]) + 1})` : undefined;
}

/** A save over an object another admin changed since the form was shown (If-Match failed: admin/etags.ts). */
export const CHANGED_MEANWHILE =
  'Someone changed this since you opened the page, so nothing was saved. ' +
  'Check what is stored now, then save again to replace it.';

const sentence = (text: string) => {
  const t = text.trim();
  return t && `${t[0]!.toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
};

/** `uri: why`, a redirect URI the rule refused (admin/redirect-uris.ts): already in words, and the URI as typed. */
const isRefusedRedirect = (text: string) =>
  [...text.matchAll(/: /g)].some(({ index }) => redirectUriProblem(text.slice(0, index)) === text.slice(index + 2));

/** One clause of an API message: `path: phrase`, `path phrase` or plain text (a path it does not know, kept). */
function clause(text: string): string {
  if (isRefusedRedirect(text)) return `${text}.`;
  const m = /^([\w.]*)(?:: | )(.*)$/s.exec(text);
  if (m?.[1] === '')
    return sentence(m[2]!.replace(/^Unrecognized key: (.*)$/, 'The form has a field $1 it should not'));
  const field = m && fieldOf(m[1]!);
  if (field) return sentence(`${field} ${words(m![2]!)}`);
  return m && /[.\d]/.test(m[1]!) ? `${text.replace(/\.$/, '')}.` : sentence(text);
}

/** The refusal as sentences about the form, without a JSON path; `fallback` when the API said nothing. */
export function refusalWords(refusal: Refusal, fallback = 'That could not be done.'): string {
  if (refusal.error === 'revision_conflict' && refusal.status === 412) return CHANGED_MEANWHILE;
  if (!refusal.message) return fallback;
  return refusal.message.split('; ').map(clause).join(' ');
}
