import { Router } from 'express';
import { z } from 'zod';
import type { Knex } from 'knex';
import { sendProblem } from '../../common/http.js';
import { isId, newId } from '../../common/ids.js';
import { hashSecret, randomSecret } from '../../common/secrets.js';
import { DISPLAY_NAME, LABEL, createOrConflict, parse } from './support.js';

const KIND_PREFIX = { third_party: 'tp', first_party: 'fp', internal: 'int' } as const;
const REDIRECT_URI = z.url().refine((u) => !u.includes('#'), 'a redirect URI has no fragment');

const CreateClient = z.strictObject({
  slug: LABEL,
  name: DISPLAY_NAME,
  kind: z.enum(['third_party', 'first_party', 'internal']),
  type: z.enum(['confidential', 'public']),
  redirectUris: z.array(REDIRECT_URI).min(1).max(20),
  allowedOrigins: z.array(z.url()).max(20).optional(),
});
const UpdateClient = z.strictObject({ status: z.enum(['active', 'disabled']) });

interface ClientRow { id: string; tenant_id: string; slug: string; name: string; kind: string; type: string; status: string; redirect_uris: string[]; allowed_origins: string[] }
export const clientView = (c: ClientRow) => ({
  clientId: c.id, tenantId: c.tenant_id, slug: c.slug, name: c.name, kind: c.kind, type: c.type, status: c.status,
  redirectUris: c.redirect_uris, allowedOrigins: c.allowed_origins,
});

export function clientsRouter(knex: Knex): Router {
  const r = Router();
  r.post('/tenants/:tenantId/clients', async (req, res) => {
    const body = parse(CreateClient, req.body, res);
    if (!body) return;
    const tenantId = req.params.tenantId;
    const tenant = isId('ten', tenantId) ? await knex('tenants').where({ id: tenantId }).first() : undefined;
    if (!tenant) return sendProblem(res, 'not_found');
    const id = `${KIND_PREFIX[body.kind]}_${tenant.label}_${body.slug}`;
    const secret = body.type === 'confidential' ? randomSecret() : undefined;
    const secretHash = secret && (await hashSecret(secret));
    await createOrConflict(res, 'client slug is taken', async () => {
      const row = await knex.transaction(async (trx) => {
        const [client] = await trx('clients')
          .insert({
            id, tenant_id: tenantId, slug: body.slug, name: body.name, kind: body.kind, type: body.type,
            redirect_uris: JSON.stringify(body.redirectUris), allowed_origins: JSON.stringify(body.allowedOrigins ?? []),
          })
          .returning('*');
        if (secretHash) await trx('client_secrets').insert({ id: newId('key'), client_id: id, secret_hash: secretHash, state: 'current' });
        return client as ClientRow;
      });
      res.status(201).json({ ...clientView(row), ...(secret && { clientSecret: secret }) });
    });
  });
  r.patch('/clients/:clientId', async (req, res) => {
    const body = parse(UpdateClient, req.body, res);
    if (!body) return;
    const [row] = await knex('clients').where({ id: req.params.clientId }).update({ status: body.status }).returning('*');
    if (!row) return sendProblem(res, 'not_found');
    res.json(clientView(row));
  });
  return r;
}
