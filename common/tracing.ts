// Tracing (OpenTelemetry), configured the standard way only: on when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and OTEL_SDK_DISABLED is not true); everything else (protocol, sampler,
// service name, resource, batch queue) is the SDK's own environment handling (tracing-sdk.ts). Off, nothing but the
// API (a no-op) is loaded and the helpers below call straight through: no span, no context, no header.
//
// Each process's entry calls startTracing before it imports anything else (the instrumentations must see ioredis and
// pg being loaded: the entries import the rest dynamically after it).
import {
  context,
  createContextKey,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type SpanOptions,
} from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import type { IncomingMessage, Server } from 'node:http';
import { Counter } from 'prom-client';
import type { SdkHandle } from './tracing-sdk.js';

/** The attribute naming the service that made a span: npm start runs every service under one resource. */
export const SERVICE_ATTRIBUTE = 'platform.service';
/**
 * The gateway's PDP call carries each member decision's W3C traceparent, comma-separated, in the items' order: the
 * PDP links its batch span to each (one batch serves several traces).
 */
export const BATCH_MEMBERS_HEADER = 'x-batch-traceparents';

const TRACER = 'third-party-integration-platform';
let tracing = false;
const portServices = new Map<number, string>();

export const tracingConfigured = (env: NodeJS.ProcessEnv = process.env): boolean =>
  Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) &&
  env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';

/** Whether this process exports traces (startTracing found an endpoint). */
export const tracingOn = (): boolean => tracing;

let sdk: SdkHandle | undefined;
/** The longest a shutdown waits for the last spans to be exported (a collector that is down must not hold it). */
const FLUSH_TIMEOUT_MS = 2000;

/**
 * Starts the SDK when an endpoint is configured. `resourceName` is the default service.name (the service, or
 * `integration-platform` for npm start); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it.
 */
export async function startTracing(resourceName: string): Promise<void> {
  if (tracing || !tracingConfigured()) return;
  const { startSdk } = await import('./tracing-sdk.js');
  sdk = startSdk(resourceName, {
    serviceOfRequest,
    serviceOfActiveSpan: activeService,
    serviceAttribute: SERVICE_ATTRIBUTE,
    unrecorded(req, ids, emit) {
      (req as WithUnrecorded)[UNRECORDED] = ids;
      return context.with(ROOT_CONTEXT.setValue(UNRECORDED_KEY, ids), emit);
    },
  });
  tracing = true;
}

/** Exports the spans still queued (at shutdown), waiting 2 s at most; nothing when off. */
export async function flushTracing(): Promise<void> {
  if (!sdk) return;
  const timeout = new Promise<void>((ok) => setTimeout(ok, FLUSH_TIMEOUT_MS).unref());
  await Promise.race([sdk.shutdown().catch(() => undefined), timeout]);
}

/**
 * Requests to `server` on `port` are the service's (the management listener's scrapes and probes are not traced); the
 * sampler is asked about each before the http instrumentation sees it.
 */
export function traceServer(server: Server, port: number, service: string): void {
  portServices.set(port, service);
  sdk?.presample(server);
}

/**
 * The ids of a request the sampler left out: no span is made for it, but its log lines carry these ids and its calls
 * downstream carry them in a `traceparent` flagged unsampled, so that its callees neither start traces of their own
 * nor log without the caller's trace id. Kept on the request (its event handlers do not run in its context) and, for
 * the log lines written in it, in its context.
 */
const UNRECORDED = Symbol('unrecorded trace ids');
type WithUnrecorded = IncomingMessage & { [UNRECORDED]?: SpanContext };
const UNRECORDED_KEY = createContextKey('unrecorded trace ids');

/** The ids of `req` if the sampler left it out (undefined when recorded, or tracing is off). */
export const unrecordedIds = (req: IncomingMessage): SpanContext | undefined => (req as WithUnrecorded)[UNRECORDED];

/** The `traceparent` a call made for `req` carries if the sampler left it out (a recorded one's, the instrumentation adds). */
export const unrecordedHeaders = (req: IncomingMessage): Record<string, string> => {
  const ids = unrecordedIds(req);
  return ids ? { traceparent: traceparentOf(ids) } : {};
};

export const serviceOfRequest = (req: IncomingMessage): string | undefined =>
  req.socket.localPort === undefined ? undefined : portServices.get(req.socket.localPort);

/** The service the active span belongs to, for the spans started inside it. */
export function activeService(): string | undefined {
  const parent = trace.getActiveSpan() as (Span & { attributes?: Attributes }) | undefined;
  const service = parent?.attributes?.[SERVICE_ATTRIBUTE];
  return typeof service === 'string' ? service : undefined;
}

/**
 * Spans dropped instead of exported: the bounded queue was full (a slow or absent collector) or an export failed.
 * Read from the SDK's own span-processor counts at each scrape; always present (0 while tracing is off).
 */
export const spansDropped = new Counter({
  name: 'tracing_spans_dropped_total',
  help: 'Spans not exported, by reason: queue_full (the bounded export queue was full) or the failed export error.',
  labelNames: ['reason'],
  registers: [],
  async collect() {
    if (!sdk) return;
    this.reset();
    for (const [reason, count] of await sdk.droppedSpans()) this.inc({ reason }, count);
  },
});

/** The request's server span, to describe once it is answered (undefined when off or not traced). */
export const serverSpan = (): Span | undefined => (tracing ? trace.getActiveSpan() : undefined);

/**
 * Names a server span by its route template and says whose request it was (never a token or the raw URL): called when
 * the response finishes, before the instrumentation ends the span on close.
 */
export function describeRequest(
  span: Span,
  method: string,
  route: string,
  tenant: string | null,
  client: string | null,
) {
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
  if (tenant) span.setAttribute('tenant.id', tenant);
  if (client) span.setAttribute('client.id', client);
}

/** Whether the active span is being recorded: a request the sampler left out costs our helpers nothing more. */
const recording = () => trace.getActiveSpan()?.isRecording() === true;

/**
 * `fn` in a span named `name` (a child of the active one), ended when it settles;
 * straight through when off or inside a span that is not recorded (not sampled).
 */
export function inSpan<T>(
  name: string,
  fn: (span: Span | undefined) => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  if (!tracing || !recording()) return fn(undefined);
  const service = activeService();
  const attributes = { ...options.attributes, ...(service && { [SERVICE_ATTRIBUTE]: service }) };
  return trace.getTracer(TRACER).startActiveSpan(name, { ...options, attributes }, (span) =>
    fn(span).then(
      (value) => (span.end(), value),
      (err: unknown) => {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw err;
      },
    ),
  );
}

/**
 * An Express handler in a span `name` that ends when the handler passes the request on (next) or the response is
 * finished: a gateway plugin's share of the request. Off, the handler itself; in a request that is not sampled, the
 * handler called as it is.
 */
export function tracedHandler(name: string, handler: RequestHandler): RequestHandler {
  if (!tracing) return handler;
  const tracer = trace.getTracer(TRACER);
  return (req, res, next) => {
    if (!recording()) return handler(req, res, next);
    const service = activeService();
    const span = tracer.startSpan(name, { attributes: service ? { [SERVICE_ATTRIBUTE]: service } : {} });
    let ended = false;
    const end = () => void (ended || ((ended = true), span.end()));
    res.once('finish', end);
    res.once('close', end);
    // The next handler runs beside this one (in the request's context), not inside its span.
    const parent = context.active();
    const passOn = (err?: unknown) => (end(), context.with(parent, () => next(err as Error)));
    context.with(trace.setSpan(parent, span), () => handler(req, res, passOn));
  };
}

/**
 * What a later batched call must carry of the request `req` it serves: the active context when the request is
 * recorded, its unrecorded ids otherwise (undefined when off).
 */
export function memberContext(req?: IncomingMessage): Context | undefined {
  if (!tracing) return undefined;
  if (recording()) return context.active();
  const ids = req && unrecordedIds(req);
  return ids && trace.setSpanContext(ROOT_CONTEXT, ids);
}

const recorded = (member: Context | undefined): member is Context =>
  trace.getSpan(member ?? ROOT_CONTEXT)?.isRecording() === true;

const traceparentOf = (span: SpanContext | undefined): string => {
  const carrier: Record<string, string> = {};
  if (span) propagation.inject(trace.setSpanContext(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent ?? '';
};

/**
 * Runs a batched call (the gateway's PDP call) for its members' contexts. With a recorded member: inside the first
 * recorded member's trace (the PDP's span is its child), through a span of the batch's own that links to every
 * recorded member when there are several; `call` gets the header naming them, for the callee's links. The batch is
 * recorded whenever one of its members is, whatever the sampler would say of a trace of its own. Off, just the call;
 * no member recorded, the call with the first member's unsampled `traceparent` (the callee records nothing either).
 */
export function batchCall<T>(
  name: string,
  members: (Context | undefined)[],
  call: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  if (!tracing) return call({});
  const first = members.find(recorded);
  if (!first) {
    const ids = members.map((m) => m && trace.getSpanContext(m)).find(Boolean);
    return context.with(ROOT_CONTEXT, () => call(ids ? { traceparent: traceparentOf(ids) } : {}));
  }
  const spans = members.map((m) => (recorded(m) ? trace.getSpanContext(m) : undefined));
  const headers = { [BATCH_MEMBERS_HEADER]: spans.map(traceparentOf).join(',') };
  if (members.length === 1) return context.with(first, () => call(headers));
  const links = spans.flatMap((s): Link[] => (s ? [{ context: s }] : []));
  return context.with(first, () =>
    inSpan(name, () => call(headers), { links, attributes: { 'batch.size': members.length } }),
  );
}

/**
 * Links the active span (the PDP's batch span) to each member's trace named in the batch header, and says, item by
 * item, whether its member is recorded (the header leaves an unrecorded member's place empty); undefined when the
 * request is not recorded or names no members.
 */
export function linkBatchMembers(header: string | undefined): boolean[] | undefined {
  const span = tracing && header ? trace.getActiveSpan() : undefined;
  if (!span?.isRecording()) return undefined;
  return header!.split(',').map((traceparent) => {
    const member = traceparent ? trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent })) : undefined;
    if (member) span.addLink({ context: member });
    return member !== undefined;
  });
}

/**
 * `fn` outside any trace: a batch member whose own request the sampler left out leaves no span in the batch's trace
 * (its decision, its facts read), as it leaves none anywhere else.
 */
export const outsideTraces = <T>(fn: () => T): T => (tracing ? context.with(ROOT_CONTEXT, fn) : fn());

/**
 * The fields a log line carries inside a request while tracing is on (pino's OpenTelemetry names), so a log search
 * leads to the trace: the logger's mixin (the active span's, or the unrecorded request's ids), and the request line's.
 */
export function traceFields(
  ids = trace.getActiveSpan()?.spanContext() ?? (context.active().getValue(UNRECORDED_KEY) as SpanContext | undefined),
): Record<string, string> {
  if (!ids || !isSpanContextValid(ids)) return {};
  return { trace_id: ids.traceId, span_id: ids.spanId, trace_flags: `0${ids.traceFlags.toString(16)}` };
}
