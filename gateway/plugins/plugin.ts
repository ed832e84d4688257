// What a gateway plugin is: a named module with a zod schema for its settings, started once per gateway, giving one
// Express handler per route it applies to. The gateway file (gateway-file.ts) decides which plugins run, in what order.
import type { RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import type { Pool } from 'undici';
import type { z } from 'zod';
import type { Logger } from '../../common/log.js';
import type { Telemetry } from '../../common/telemetry.js';
import type { RedisClient } from '../../common/rate-limit-store.js';
import type { Allow, Capability, ResourceType, TokenClaims } from '../../wire/decision.js';

export interface RouteDefinition {
  operationId: string;
  method: 'GET' | 'PUT' | 'DELETE';
  /** Express path under /v1; the upstream serves the same path. */
  path: string;
  capability: Capability;
  resource: ResourceType;
  upstream: string;
}

/** What plugins may use, built once per gateway process. */
export interface GatewayEnv {
  authUrl: string;
  pdp: Pool;
  internalSecret: string;
  /** Shared by every limiter; absent = limits are kept in-process. */
  redis: RedisClient | undefined;
  /** Where usage records go. */
  knex: Knex;
  log: Logger;
  telemetry: Telemetry;
  /** The URL callers reach this gateway at, before /v1 (its own listen address unless configured); once listening. */
  publicUrl?: () => string | undefined;
  /** The plugins the gateway file lists: a plugin may depend on a later one doing its part (verify-token on dpop). */
  listedPlugins?: ReadonlySet<string>;
}

export interface PluginInstance<S> {
  /** A handler that runs before routing, for every request (request ids). */
  app?: RequestHandler;
  /** The handler for one route, with the route's effective settings. */
  handler?(route: RouteDefinition, settings: S): RequestHandler;
  /**
   * A refusal this process can decide from memory alone (no I/O), for one route: it runs ahead of the plugin that the
   * definition's `screenBefore` names, so a caller it refuses costs none of that plugin's work.
   */
  screen?(route: RouteDefinition, settings: S): RequestHandler;
  /** CORS preflight for one route; only the cors plugin has one. */
  preflight?(route: RouteDefinition, settings: S): RequestHandler;
  close?(): Promise<void>;
}

export interface Plugin<Schema extends z.ZodType = z.ZodType> {
  name: string;
  settings: Schema;
  /** Plugins that must come earlier in the declared order (what this one reads from the request state). */
  after: readonly string[];
  /**
   * The plugin whose handler this one's `screen` runs ahead of (it must come after what the screen reads); without
   * that plugin in the file, the screen runs just ahead of this plugin's own handler.
   */
  screenBefore?: string;
  /** False when the settings belong to state shared by every route (a key cache), so a route may not change them. */
  perRoute: boolean;
  start(settings: z.output<Schema>, env: GatewayEnv): PluginInstance<z.output<Schema>>;
}

/** A plugin with its schema's types erased, as the registry holds them. */
export type AnyPlugin = Plugin<z.ZodType>;

export const definePlugin = <Schema extends z.ZodType>(plugin: Plugin<Schema>): AnyPlugin =>
  plugin as unknown as AnyPlugin;

/** What earlier plugins learnt about the request, for later ones. */
export interface RequestState {
  requestId: string;
  /** The caller sent the id (kept by the request-id plugin); false when the gateway made it. */
  requestIdFromCaller: boolean;
  claims?: TokenClaims;
  /** The access token as presented (verify-token): its scheme, for the dpop plugin. */
  credential?: { scheme: 'bearer' | 'dpop'; token: string };
  allow?: Allow;
  /** Requests left in the stricter limiter window, for a read (rate-limit plugin); sent only on a successful answer. */
  remaining?: number;
  /** Set by the upstream call once the request was forwarded and answered. */
  forwarded?: boolean;
}
export const stateOf = (res: Response): RequestState => res.locals as RequestState;
