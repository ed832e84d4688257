// The console's extension page: the registered extensions and registering one (the form kept on refusal).
import type { Response, Router } from 'express';
import * as pages from './pages.js';
import { tenantPath } from './pages.js';
import { apiPath, locals, one, type ConsoleKit } from './kit.js';
import { MAX_BODY_DEPTH } from '../admin/support.js';
import { type Refusal } from '../../wire/outcome.js';
import { STATUS_OF } from '../../wire/codes.js';
import { jsonInputProblem } from '../../common/json-input.js';
import { listClients } from '../admin/clients.js';
import { reads } from '../admin/audit.js';
import { listExtensions, registerExtension } from '../admin/extensions.js';

export function extensionRoutes(tenant: Router, kit: ConsoleKit): void {
  const { db, send, frameOf, notFound, goTo, enteredFrom, permitted } = kit;
  const extensionsPage = async (res: Response, entered?: pages.Entered, status = 200) => {
    const { session, tenant: current } = locals(res);
    const [extensions, apps] = await reads(
      () => listExtensions(db, current.tenantId),
      () => listClients(db, current.tenantId),
    );
    send(
      res,
      pages.extensionsPage({ ...frameOf(res, 'Extensions'), session, tenant: current }, extensions, apps, entered),
      status,
    );
  };

  tenant.get('/extensions', async (_req, res) => extensionsPage(res));

  tenant.post('/extensions', async (req, res) => {
    const { tenantId } = locals(res).tenant;
    const clientId = one(req.body.clientId) ?? '';
    // Refused: the form again as it was sent, saying which part was not accepted.
    const again = (refusal: Refusal) =>
      extensionsPage(res, enteredFrom(req, refusal, ['clientId', 'name', 'schema']), STATUS_OF[refusal.error]);
    let schema: unknown;
    try {
      schema = JSON.parse(one(req.body.schema) ?? '');
    } catch (err) {
      return again({
        ok: false,
        error: 'schema_invalid',
        message: `the schema is not valid JSON (${(err as Error).message})`,
      });
    }
    const body = { name: req.body.name, schemas: { 1: schema } };
    // The same limits as the admin API's body, checked on the same body.
    const problem = jsonInputProblem(body, MAX_BODY_DEPTH);
    if (problem) return again({ ok: false, error: 'schema_invalid', message: `the schema ${problem}` });
    const op = { method: 'POST', path: apiPath('clients', clientId, 'extensions'), body } as const;
    if (!(await permitted(res, op))) return;
    const registered = await registerExtension(db, clientId, body);
    if (!registered.ok)
      return registered.error === 'not_found'
        ? notFound(res)
        : again({ ...registered, message: registered.message?.replace(/^schemas\.1: /, 'the JSON Schema: ') });
    await goTo(
      res,
      tenantPath(tenantId, 'extensions'),
      `Registered ${registered.value.name} as ${registered.value.extensionId}.`,
    );
  });
}
