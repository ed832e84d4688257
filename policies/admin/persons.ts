import { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { newId, isId } from '../../common/ids.js';
import { hashSecret } from '../../common/secrets.js';
import { DISPLAY_NAME, createOrConflict, parse } from './support.js';
import { REDACTED, recordChange } from './audit.js';

const CreatePerson = z.strictObject({
  displayName: DISPLAY_NAME,
  username: z.string().trim().min(3).max(100),
  password: z.string().min(8).max(200),
});

export function personsRouter(knex: Knex): Router {
  const r = Router();
  /** Creates the person, their login account and the tenant's relationship to them, in one transaction. */
  r.post('/tenants/:tenantId/persons', async (req, res) => {
    const body = parse(CreatePerson, req.body, res);
    if (!body) return;
    const tenantId = req.params.tenantId;
    if (!isId('ten', tenantId) || !(await knex('tenants').where({ id: tenantId }).first())) return sendProblem(res, 'not_found');
    const passwordHash = await hashSecret(body.password);
    await createOrConflict(res, 'username is taken in this tenant', async () => {
      const created = await knex.transaction(async (trx) => {
        const [person] = await trx('persons').insert({ id: newId('psn'), display_name: body.displayName }).returning('*');
        const accountId = newId('acc');
        await trx('accounts').insert({
          id: accountId, tenant_id: tenantId, kind: 'person', person_id: person.id, username: body.username, password_hash: passwordHash,
        });
        await trx('tenant_person_relationships').insert({ tenant_id: tenantId, person_id: person.id });
        return { personId: person.id, accountId, displayName: person.display_name, createdAt: new Date(person.created_at).toISOString() };
      });
      await recordChange({
        action: 'person.create', target: { type: 'person', id: created.personId }, tenantId,
        changes: { displayName: { from: null, to: created.displayName }, username: { from: null, to: body.username }, password: { from: null, to: REDACTED } },
      });
      res.status(201).json(created);
    });
  });
  /** Ends the tenant's relationship to the person; the person and their data are kept. */
  r.delete('/tenants/:tenantId/persons/:personId', async (req, res) => {
    const { tenantId, personId } = req.params;
    const ended = isId('psn', personId)
      ? await knex('tenant_person_relationships').where({ tenant_id: tenantId, person_id: personId }).whereNull('ended_at').update({ ended_at: knex.fn.now() })
      : 0;
    if (!ended) return sendProblem(res, 'not_found');
    await recordChange({ action: 'person.relationship_end', target: { type: 'person', id: personId }, tenantId });
    res.status(204).end();
  });
  return r;
}
