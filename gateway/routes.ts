// The gateway's route table: behaviour per route is data (capability, resource type), as in declarative gateways.
import type { Capability, ResourceType } from '../policies/decision.js';

export interface RouteSpec {
  operationId: string;
  method: 'GET' | 'PUT' | 'DELETE';
  /** Express path under /v1; the backend serves the same path. */
  path: string;
  capability: Capability;
  resource: ResourceType;
}

const EXTENSION = '/persons/:personId/extensions/:extensionId';

export const ROUTES: readonly RouteSpec[] = [
  { operationId: 'getMe', method: 'GET', path: '/me', capability: 'svc.profile.self.read', resource: 'self' },
  { operationId: 'getTenant', method: 'GET', path: '/tenant', capability: 'svc.tenant.info.read', resource: 'tenant' },
  { operationId: 'getPerson', method: 'GET', path: '/persons/:personId', capability: 'svc.person.read', resource: 'person' },
  { operationId: 'listPersonExtensions', method: 'GET', path: '/persons/:personId/extensions', capability: 'svc.person.metadata.read', resource: 'person_extension' },
  { operationId: 'getPersonExtension', method: 'GET', path: EXTENSION, capability: 'svc.person.metadata.read', resource: 'person_extension' },
  { operationId: 'putPersonExtension', method: 'PUT', path: EXTENSION, capability: 'svc.person.metadata.write', resource: 'person_extension' },
  { operationId: 'deletePersonExtension', method: 'DELETE', path: EXTENSION, capability: 'svc.person.metadata.write', resource: 'person_extension' },
];
