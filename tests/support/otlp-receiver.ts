// A tiny OTLP/HTTP trace receiver for the tracing suite and the benchmark: POST /v1/traces in http/protobuf (decoded
// with protobufjs against the OTLP trace messages below) or http/json, every span kept in one flat shape. It can also
// stop answering (a collector that hangs) to show that a stuck collector costs requests nothing.
import { createServer, type Server } from 'node:http';
import protobuf from 'protobufjs';

/** The messages of opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto that a receiver reads. */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message Status { string message = 2; int32 code = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; repeated Link links = 13; Status status = 15;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;
const ExportRequest = protobuf.parse(OTLP_TRACE_PROTO).root.lookupType('otlp.ExportTraceServiceRequest');

type Value = string | number | boolean | undefined;
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, Value>;
  links: { traceId: string; spanId: string }[];
  /** The resource's service.name. */
  service: string;
  /** The wire format it came in. */
  protocol: 'http/protobuf' | 'http/json';
}

/** Ids are bytes in protobuf and hex strings in OTLP/JSON. */
const hex = (id: unknown): string =>
  typeof id === 'string' ? id.toLowerCase() : id ? Buffer.from(id as Uint8Array).toString('hex') : '';

interface WireKeyValue {
  key: string;
  value?: Record<string, unknown>;
}
const attributesOf = (list: WireKeyValue[] = []): Record<string, Value> =>
  Object.fromEntries(
    list.map(({ key, value = {} }) => {
      // int64 arrives as a string (OTLP/JSON, protobufjs with longs as strings)
      if (value.intValue !== undefined) return [key, Number(value.intValue)];
      return [key, (value.stringValue ?? value.boolValue ?? value.doubleValue) as Value];
    }),
  );

interface WireSpan {
  traceId: unknown;
  spanId: unknown;
  parentSpanId?: unknown;
  name: string;
  kind?: number;
  attributes?: WireKeyValue[];
  links?: { traceId: unknown; spanId: unknown }[];
}
interface WireRequest {
  resourceSpans?: { resource?: { attributes?: WireKeyValue[] }; scopeSpans?: { spans?: WireSpan[] }[] }[];
}

function spansOf(request: WireRequest, protocol: ReceivedSpan['protocol']): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: hex(s.parentSpanId),
        name: s.name,
        kind: Number(s.kind ?? 0),
        attributes: attributesOf(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
        service,
        protocol,
      })),
    );
  });
}

export interface OtlpReceiver {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for it (the exporter adds /v1/traces). */
  endpoint: string;
  /** The spans received (none kept when started with keepSpans false). */
  spans: ReceivedSpan[];
  /** How many spans were received (with keepSpans false, the bodies held are decoded to count them when read). */
  readonly received: number;
  /** Each request received, answered or not: its method and path, in order (anything but `POST /v1/traces` is 404). */
  paths: string[];
  /** From now on, requests are read and never answered (a collector that hangs). */
  hang(): void;
  close(): Promise<void>;
}

/**
 * `keepSpans` false (the benchmark): spans are only counted, and the bodies are held undecoded until `received` is read.
 * Decoding is a collector's work, which a deployment runs on a machine of its own: done as requests arrive, it would take
 * its CPU from the services being measured (both share this machine's two cores), and charge tracing with it.
 */
export async function startOtlpReceiver({ keepSpans = true } = {}): Promise<OtlpReceiver> {
  let hanging = false;
  let counted = 0;
  const held: { body: Buffer; json: boolean }[] = [];
  const decode = (body: Buffer, json: boolean): ReceivedSpan[] =>
    spansOf(
      json
        ? (JSON.parse(body.toString('utf8')) as WireRequest)
        : (ExportRequest.toObject(ExportRequest.decode(body), { longs: String, defaults: false }) as WireRequest),
      json ? 'http/json' : 'http/protobuf',
    );
  const receiver: OtlpReceiver = {
    endpoint: '',
    spans: [],
    get received() {
      for (const { body, json } of held.splice(0)) counted += decode(body, json).length;
      return counted;
    },
    paths: [],
    hang: () => void (hanging = true),
    close: () => new Promise((ok) => (server.closeAllConnections(), server.close(() => ok()))),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.paths.push(`${req.method} ${req.url}`);
      if (hanging) return;
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const body = Buffer.concat(chunks);
      const json = (req.headers['content-type'] ?? '').startsWith('application/json');
      if (keepSpans) {
        const spans = decode(body, json);
        counted += spans.length;
        receiver.spans.push(...spans);
      } else held.push({ body, json });
      // An empty ExportTraceServiceResponse: full success.
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  receiver.endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return receiver;
}
