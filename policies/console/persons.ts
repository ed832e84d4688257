// The console's person pages: the tenant's persons (search, create, disable a login) and one person's page (name,
// username, login, relationship, consents and sessions, and its actions). Questions and notices name the person as
// the admin knows them: display name and username.
import type { Request, Response, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, locals, one, type ConsoleKit } from './kit.js';
import { STATUS_OF } from '../../wire/codes.js';
import { consentsOf, revokeSessions, updateAccount } from '../admin/accounts.js';
import { createPerson, endRelationship, findPerson, personPage, type PersonListItem } from '../admin/persons.js';
import { REFUSAL_TEXT } from './kit.js';
import { refusalWords } from './refusals.js';

/** A person as the admin knows them: "Ada Lovelace (ada)". */
export const personName = (p: Pick<PersonListItem, 'displayName' | 'username'>) =>
  p.username ? `${p.displayName} (${p.username})` : p.displayName;

const personPath = (tenantId: string, p: PersonListItem) =>
  tenantPath(tenantId, `persons/${encodeURIComponent(p.accountId ?? p.personId)}`);

/** The list of persons, with the search the admin had (an action from the list comes back to it). */
const listPath = (tenantId: string, q: string | undefined) =>
  `${tenantPath(tenantId, 'persons')}${q ? `?${new URLSearchParams({ q })}` : ''}`;

export function personRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, send, frameOf, notFound, refusedPage, goTo, confirmThenPerform, changeStatus } = kit;

  /** The person `:id` (person or login account id) names in this tenant; undefined when the 404 page is answered. */
  const personOf = async (req: Request<{ id: string }>, res: Response) => {
    const found = await findPerson(db, locals(res).tenant.tenantId, req.params.id);
    if (!found) notFound(res);
    return found;
  };

  tenant.get('/persons', async (req, res) => {
    const { session, tenant: current } = locals(res);
    const q = one(req.query.q)?.trim() || undefined;
    const listed = await personPage(db, current.tenantId, { q, cursor: one(req.query.cursor), limit: 50 });
    if (!listed.ok) return refusedPage(res, listed, { href: listPath(current.tenantId, undefined), label: 'persons' });
    send(res, pages.personsPage({ ...frameOf(res, 'Persons'), session, tenant: current }, listed.value, q));
  });

  tenant.post('/persons', async (req, res) => {
    const { session, tenant: current } = locals(res);
    const body = {
      displayName: one(req.body.displayName),
      username: one(req.body.username),
      password: one(req.body.password),
    };
    const created = await createPerson(db, current.tenantId, body);
    if (created.ok)
      return goTo(
        res,
        listPath(current.tenantId, body.username),
        `${created.value.displayName} can now sign in as ${body.username}.`,
      );
    // Refused: the form again with what was typed (never the password) and why, naming the field.
    const listed = await personPage(db, current.tenantId, { limit: 50 });
    const entered = {
      displayName: body.displayName,
      username: body.username,
      problem: refusalWords(created, `${REFUSAL_TEXT[created.error] ?? 'That could not be done'}.`),
    };
    send(
      res,
      pages.personsPage(
        { ...frameOf(res, 'Persons'), session, tenant: current },
        listed.ok ? listed.value : { items: [], nextCursor: null },
        undefined,
        entered,
      ),
      STATUS_OF[created.error],
    );
  });

  tenant.get('/persons/:id', async (req: Request<{ id: string }>, res) => {
    const { session, tenant: current } = locals(res);
    const person = await personOf(req, res);
    if (!person) return;
    const consents = person.accountId ? await consentsOf(db, current.tenantId, person.accountId) : [];
    send(
      res,
      pages.personPage(
        { ...frameOf(res, `Person: ${person.displayName}`), session, tenant: current },
        person,
        consents ?? [],
      ),
    );
  });

  tenant.post('/persons/:id/sessions/revoke', async (req: Request<{ id: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const person = await personOf(req, res);
    if (!person) return;
    const accountId = person.accountId ?? req.params.id;
    await confirmThenPerform(
      req,
      res,
      { method: 'POST', path: apiPath('accounts', accountId, 'sessions', 'revoke') },
      () => revokeSessions(db, accountId),
      {
        consequence:
          `End every session of ${personName(person)}? Every app's tokens for this person are refused ` +
          'from their next request, and each app needs a new consent.',
        back: { href: personPath(tenantId, person), label: personName(person) },
        said: () => `Every session of ${personName(person)} is ended.`,
      },
    );
  });

  // From the list (which sends its search as `q`) back to the list as it was; from the person's page back to it.
  tenant.post('/persons/:id/status', async (req: Request<{ id: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const person = await personOf(req, res);
    if (!person) return;
    const accountId = person.accountId ?? req.params.id;
    const q = one(req.body.q);
    const back =
      q === undefined
        ? { href: personPath(tenantId, person), label: personName(person) }
        : { href: listPath(tenantId, q.trim() || undefined), label: 'persons' };
    await changeStatus(req, res, apiPath('accounts', accountId), (body) => updateAccount(db, accountId, body), {
      consequence:
        `Disable the login of ${personName(person)}? They can no longer sign in, and their tokens are refused ` +
        'from their next request until it is enabled again.',
      back,
      ...(q !== undefined && { fields: { q } }),
      said: (account) =>
        account.status === 'disabled'
          ? `${personName(person)} can no longer sign in.`
          : `${personName(person)} can sign in again.`,
    });
  });

  tenant.post('/persons/:id/relationship/end', async (req: Request<{ id: string }>, res) => {
    const { tenantId } = locals(res).tenant;
    const person = await personOf(req, res);
    if (!person) return;
    await confirmThenPerform(
      req,
      res,
      { method: 'DELETE', path: apiPath('tenants', tenantId, 'persons', person.personId) },
      () => endRelationship(db, tenantId, person.personId),
      {
        consequence:
          `End this tenant's relationship with ${personName(person)}? Every app loses access to them ` +
          '(403 subject_revoked) from its next request; the person and the records about them are kept.',
        back: { href: personPath(tenantId, person), label: personName(person) },
        said: () => `The relationship with ${personName(person)} is ended.`,
      },
    );
  });
}
