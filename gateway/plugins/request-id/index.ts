// Plugin `request-id`: runs before routing, so every answer (404s and refusals included) carries x-request-id
// (contract §1 rule 6). A caller's well-formed id is kept by default: it is the idempotency key for metering.
import { requestIdHandler } from '../../../common/http.js';
import { definePlugin } from '../plugin.js';
import { settings } from './schema.js';

export const requestId = definePlugin({
  name: 'request-id',
  settings,
  after: [],
  perRoute: false,
  start: (s) => ({ app: requestIdHandler({ trustClient: s.trustClientId }) }),
});
