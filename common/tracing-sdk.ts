// The OpenTelemetry SDK, loaded only when tracing is on (tracing.ts). NodeSDK reads the standard environment
// (OTEL_EXPORTER_OTLP_*: endpoint, protocol http/protobuf | http/json | grpc, headers, timeout; OTEL_TRACES_SAMPLER
// and its argument; OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES; OTEL_BSP_* for the bounded export queue); the
// instrumentations trace http (server spans), undici (the gateway's calls), pg and ioredis. Express's own
// instrumentation is left out (decisions.md "Tracing"): its spans, one per layer named by the route, would repeat the
// server span and the gateway's plugin spans. Only traces are exported: metrics stay Prometheus (prom-client), logs
// stay JSON lines on stdout.
import { register } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { createNoopMeter, type Attributes, type MeterProvider, type Span } from '@opentelemetry/api';
import { NodeSDK, metrics, resources } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';

/** The SDK's own count of the spans a span processor is done with, with error.type for those it dropped. */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';
/** The one stream kept of the SDK's metrics (a view of its own name: the drop-all view would otherwise absorb it). */
const KEPT_STREAM = 'platform.tracing.spans.processed';

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
}

export interface SdkHandle {
  /** Spans dropped instead of exported, by reason (queue_full, or the failed export's error), as the SDK counted. */
  droppedSpans(): Promise<Map<string, number>>;
  /** Exports what is queued and stops. */
  shutdown(): Promise<void>;
}

const NO_METERS: MeterProvider = { getMeter: () => createNoopMeter() };

export function startSdk(resourceName: string, hooks: SdkHooks): SdkHandle {
  const withService = (): Attributes => {
    const service = hooks.serviceOfActiveSpan();
    return service ? { [hooks.serviceAttribute]: service } : {};
  };
  const markService = (span: Span) => void span.setAttributes(withService());
  // ESM: our modules import ioredis, which only a loader hook sees (pg is required by knex, which the SDK's require
  // hook sees); only these modules go through the loader hook.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: ['ioredis', 'pg', 'pg-pool'] },
  });
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  // The span processor's own counts (dropped spans) are the SDK's self-metrics, kept in a reader read at scrapes.
  process.env.OTEL_NODE_EXPERIMENTAL_SDK_METRICS ??= 'true';
  const instrumentations = [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => hooks.serviceOfRequest(req) === undefined,
      startIncomingSpanHook: (req) => ({ [hooks.serviceAttribute]: hooks.serviceOfRequest(req)! }),
      startOutgoingSpanHook: withService,
      requireParentforOutgoingSpans: true,
      redactedQueryParamsServer: REDACTED_QUERY,
    }),
    new UndiciInstrumentation({ requireParentforSpans: true, startSpanHook: withService }),
    new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true, requestHook: markService }),
    new IORedisInstrumentation({ requireParentSpan: true, requestHook: markService }),
  ];
  const reader = new ScrapeReader();
  const sdk = new NodeSDK({
    // The default name; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the SDK's detectors) override it.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': resourceName })),
    metricReaders: [reader],
    views: [
      { instrumentName: '*', aggregation: { type: metrics.AggregationType.DROP } },
      { instrumentName: PROCESSED_SPANS, name: KEPT_STREAM },
    ],
    instrumentations,
  });
  sdk.start();
  // The instrumentations' own metrics (HTTP durations) would be computed on every request only to be dropped by the
  // view: they get a meter that does nothing (the SDK gave them the global one, which the dropped-span count needs).
  for (const instrumentation of instrumentations) instrumentation.setMeterProvider(NO_METERS);
  return {
    shutdown: () => sdk.shutdown(),
    async droppedSpans() {
      const dropped = new Map<string, number>();
      const { resourceMetrics } = await reader.collect();
      for (const scope of resourceMetrics.scopeMetrics)
        for (const metric of scope.metrics)
          if (metric.descriptor.name === KEPT_STREAM)
            for (const point of metric.dataPoints) {
              const reason = point.attributes['error.type'];
              if (reason !== undefined)
                dropped.set(String(reason), (dropped.get(String(reason)) ?? 0) + Number(point.value));
            }
      return dropped;
    },
  };
}
