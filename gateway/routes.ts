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

export const ROUTES: readonly RouteSpec[] = [
  { operationId: 'getMe', method: 'GET', path: '/me', capability: 'svc.profile.self.read', resource: 'self' },
  { operationId: 'getTenant', method: 'GET', path: '/tenant', capability: 'svc.tenant.info.read', resource: 'tenant' },
];
