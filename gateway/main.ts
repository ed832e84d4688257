// Entry: the gateway alone. Needs the issuer (AUTH_URL), the PDP and the backend reachable, and INTERNAL_SECRET.
import { requireInternalSecret, runService } from '../common/service.js';
import { gatewayTargetsFrom, startGateway } from './service.js';

await runService('gateway', (config, log) => startGateway(config, log, gatewayTargetsFrom(config, requireInternalSecret(config))));
