// The OpenTelemetry SDK, loaded only when tracing is on (tracing.ts). NodeSDK reads the standard environment
// (OTEL_EXPORTER_OTLP_*: endpoint, protocol http/protobuf | http/json | grpc, headers, timeout; OTEL_TRACES_SAMPLER
// and its argument; OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES; OTEL_BSP_* for the bounded export queue); the
// instrumentations trace http (server spans), undici (the gateway's calls), pg and ioredis. Express's own
// instrumentation is left out (decisions.md "Tracing"): its spans, one per layer named by the route, would repeat the
// server span and the gateway's plugin spans. Only traces are exported: metrics stay Prometheus (prom-client), logs
// stay JSON lines on stdout.
//
// The sampler decides before the http instrumentation sees a request (presample): a request it leaves out is handed
// to the server's own listeners as if tracing were off, so it pays for no span, no emitter binding and no header
// handling; only the requests it records go through the instrumentation (decisions.md "Tracing").
import { register } from 'node:module';
import http, { type IncomingMessage } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SamplingDecision,
  SpanKind,
  trace,
  TraceFlags,
  type Attributes,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { NodeSDK, metrics, resources, tracing } from '@opentelemetry/sdk-node';
// The SDK's own reading of OTEL_TRACES_SAMPLER and its argument, which its index does not export: the presampling
// decision must be the very sampler the SDK uses, built the same way. Likewise its exporters and batch processors from
// OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_* and OTEL_BSP_*, built here to give them a meter of their own (below).
import { createSamplerFromEnv } from '@opentelemetry/sdk-node/build/src/create-from-env.js';
import { getSpanProcessorsFromEnv } from '@opentelemetry/sdk-node/build/src/utils.js';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';

/** The SDK's own count of the spans a span processor is done with, with error.type for those it dropped. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

/** Query parameters never exported as they are: OAuth codes and tokens (an authorization code in a callback). */
const REDACTED_QUERY = [
  'code',
  'state',
  'nonce',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'id_token_hint',
];

/** A metric reader read on demand (at each Prometheus scrape) for the dropped-span counter. */
class ScrapeReader extends metrics.MetricReader {
  protected override onForceFlush = async (): Promise<void> => undefined;
  protected override onShutdown = async (): Promise<void> => undefined;
}

export interface SdkHooks {
  /** The service whose listener a request came to (undefined: not a service port, so not traced). */
  serviceOfRequest(req: IncomingMessage): string | undefined;
  /** The service of the active span, for the spans an instrumentation starts inside it. */
  serviceOfActiveSpan(): string | undefined;
  /** The span attribute naming the service (npm start runs every service under one resource). */
  serviceAttribute: string;
  /** Hands a request the sampler left out to `emit`, with the ids its log lines and calls carry. */
  unrecorded(req: IncomingMessage, ids: SpanContext, emit: () => boolean): boolean;
}

export interface SdkHandle {
  /** Spans dropped instead of exported, by reason (queue_full, or the failed export's error), as the SDK counted. */
  droppedSpans(): Promise<Map<string, number>>;
  /** Exports what is queued and stops. */
  shutdown(): Promise<void>;
  /** Makes `server` ask the sampler about each request before the http instrumentation sees it. */
  presample(server: http.Server): void;
}

/**
 * The SDK's id generator, except that a root span's trace id can be reserved beforehand: the presampling decision was
 * taken on that id (a ratio sampler decides by the trace id), so the server span must carry the same one.
 */
class ReservableIds implements tracing.IdGenerator {
  private readonly random = new tracing.RandomIdGenerator();
  private reserved: string | undefined;
  /** A trace id for a request without a caller's trace, before the sampler is asked about it. */
  newTraceId = (): string => this.random.generateTraceId();
  reserve(traceId: string | undefined): void {
    this.reserved = traceId;
  }
  generateTraceId = (): string => {
    const reserved = this.reserved;
    this.reserved = undefined;
    return reserved ?? this.random.generateTraceId();
  };
  generateSpanId = (): string => this.random.generateSpanId();
}

export function startSdk(resourceName: string, hooks: SdkHooks): SdkHandle {
  const withService = (): Attributes => {
    const service = hooks.serviceOfActiveSpan();
    return service ? { [hooks.serviceAttribute]: service } : {};
  };
  const markService = (span: Span) => void span.setAttributes(withService());
  // The specification's default when OTEL_TRACES_SAMPLER is unset, as the SDK's tracer provider would choose it.
  const sampler = createSamplerFromEnv() ?? new tracing.ParentBasedSampler({ root: new tracing.AlwaysOnSampler() });
  const ids = new ReservableIds();
  // Captured before the http instrumentation wraps it: what a server does with a request that is not traced.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const plainEmit = http.Server.prototype.emit;
  // ESM: our modules import ioredis, which only a loader hook sees (pg is required by knex, which the SDK's require
  // hook sees); only these modules go through the loader hook.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: ['ioredis', 'pg', 'pg-pool'] },
  });
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const instrumentations = [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => hooks.serviceOfRequest(req) === undefined,
      startIncomingSpanHook: (req) => ({ [hooks.serviceAttribute]: hooks.serviceOfRequest(req)! }),
      startOutgoingSpanHook: withService,
      requireParentforOutgoingSpans: true,
      redactedQueryParamsServer: REDACTED_QUERY,
    }),
    // Asked first, before the URL parsing, attributes and header handling the instrumentation does for every call even
    // when it will not record it: a call outside a recorded request (an unsampled one carries its own traceparent).
    new UndiciInstrumentation({
      requireParentforSpans: true,
      ignoreRequestHook: () => trace.getSpan(context.active()) === undefined,
      startSpanHook: withService,
    }),
    new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true, requestHook: markService }),
    new IORedisInstrumentation({ requireParentSpan: true, requestHook: markService }),
  ];
  // The span processors' own counts (spans exported, dropped, failed: one count per export or drop) go to a meter read
  // at each scrape, given to the processors alone. The SDK's switch for its self-metrics (OTEL_NODE_EXPERIMENTAL_SDK_
  // METRICS) would also count every span started and ended, hashing its attributes each time, and give the
  // instrumentations a meter for HTTP durations computed on every request: work no scrape reads (docs/decisions.md
  // "Tracing"). The SDK is given no metric reader (an empty list: left unset, NodeSDK starts an OTLP metrics exporter
  // to the traces' endpoint and gives every instrumentation and the tracer a live meter, recorded on each request), so
  // everything else keeps the API's no-op meter.
  const reader = new ScrapeReader();
  const processorMeters = new metrics.MeterProvider({ readers: [reader] });
  const sdk = new NodeSDK({
    // The default name; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the SDK's detectors) override it.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': resourceName })),
    spanProcessors: getSpanProcessorsFromEnv(processorMeters),
    metricReaders: [],
    instrumentations,
    sampler,
    idGenerator: ids,
  });
  sdk.start();
  return {
    shutdown: () => Promise.all([sdk.shutdown(), processorMeters.shutdown()]).then(() => undefined),
    presample(server) {
      // The instrumentation has wrapped the prototype's emit by now (the service's modules required http since).
      const instrumentedEmit = http.Server.prototype.emit;
      server.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
        if (event !== 'request') return instrumentedEmit.apply(this, [event, ...args] as never);
        const req = args[0] as IncomingMessage;
        const parent = propagation.extract(ROOT_CONTEXT, req.headers);
        const caller = trace.getSpanContext(parent);
        const traceId = caller?.traceId ?? ids.newTraceId();
        const { decision } = sampler.shouldSample(parent, traceId, 'request', SpanKind.SERVER, {}, []);
        if (decision === SamplingDecision.NOT_RECORD) {
          const own = { traceId, spanId: ids.generateSpanId(), traceFlags: TraceFlags.NONE };
          return hooks.unrecorded(req, own, () => plainEmit.apply(this, [event, ...args] as never));
        }
        if (!caller) ids.reserve(traceId);
        try {
          return instrumentedEmit.apply(this, [event, ...args] as never);
        } finally {
          ids.reserve(undefined);
        }
      };
    },
    async droppedSpans() {
      const dropped = new Map<string, number>();
      const { resourceMetrics } = await reader.collect();
      for (const scope of resourceMetrics.scopeMetrics)
        for (const metric of scope.metrics)
          if (metric.descriptor.name === PROCESSED_SPANS)
            for (const point of metric.dataPoints) {
              const reason = point.attributes['error.type'];
              if (reason !== undefined)
                dropped.set(String(reason), (dropped.get(String(reason)) ?? 0) + Number(point.value));
            }
      return dropped;
    },
  };
}
