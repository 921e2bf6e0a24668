/**
 * OTLP/HTTP export of the engine's spans and metrics, configured by the standard OpenTelemetry environment
 * variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `..._METRICS_ENDPOINT` for one
 * signal), `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or `http/json`; per signal with
 * `..._TRACES_PROTOCOL` / `..._METRICS_PROTOCOL`), `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, and the
 * exporters' own (`OTEL_EXPORTER_OTLP_HEADERS`, timeouts).
 *
 * With no endpoint set the layer is empty and nothing of OpenTelemetry is loaded: the SDK, the exporters and
 * `@effect/opentelemetry` are imported dynamically only when an endpoint is configured. The CLI provides this layer;
 * a library user chooses their own exporter (see docs/observability.md).
 */
import { Config, Effect, Layer, Option } from "effect"
import { InvalidInputError } from "../../domain/Errors.js"
import * as Spans from "./Spans.js"

/** The OTLP/HTTP encodings supported. */
export type Protocol = "http/protobuf" | "http/json"

/** What to export, read from the environment. */
export interface ExportSettings {
  /** The protocol of each signal that has an endpoint. */
  readonly traces: Option.Option<Protocol>
  readonly metrics: Option.Option<Protocol>
  readonly serviceName: string
}

/** The service name when neither `OTEL_SERVICE_NAME` nor `service.name` in `OTEL_RESOURCE_ATTRIBUTES` gives one. */
export const defaultServiceName = "armature"

const variable = (name: string) => Config.option(Config.string(name))

const protocolOf = (signal: "TRACES" | "METRICS") =>
  Effect.gen(function* () {
    const specific = yield* variable(`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`)
    const general = yield* variable("OTEL_EXPORTER_OTLP_PROTOCOL")
    const chosen = Option.orElse(specific, () => general)
    const value = Option.getOrElse(chosen, () => "http/protobuf").trim()
    if (value === "http/protobuf" || value === "http/json") return value as Protocol
    const name = Option.isSome(specific) ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL` : "OTEL_EXPORTER_OTLP_PROTOCOL"
    return yield* new InvalidInputError({
      message: `${name}=${value} is not supported: use http/protobuf or http/json (OTLP over HTTP)`
    })
  })

/** Reads the export settings; none when no OTLP endpoint is set. */
export const settings: Effect.Effect<Option.Option<ExportSettings>, InvalidInputError> = Effect.gen(function* () {
  const endpoint = yield* variable("OTEL_EXPORTER_OTLP_ENDPOINT")
  const tracesEndpoint = yield* variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
  const metricsEndpoint = yield* variable("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
  const set = (o: Option.Option<string>) => Option.isSome(o) && o.value.trim() !== ""
  const traces = set(endpoint) || set(tracesEndpoint)
  const metrics = set(endpoint) || set(metricsEndpoint)
  if (!traces && !metrics) return Option.none()
  const serviceName = yield* variable("OTEL_SERVICE_NAME")
  const attributes = yield* variable("OTEL_RESOURCE_ATTRIBUTES")
  const fromAttributes = Option.flatMap(attributes, (text) =>
    Option.fromNullable(
      text
        .split(",")
        .map((pair) => pair.split("="))
        .find(([key, value]) => key.trim() === "service.name" && value !== undefined)?.[1]
        ?.trim()
    )
  )
  return Option.some({
    traces: traces ? Option.some(yield* protocolOf("TRACES")) : Option.none(),
    metrics: metrics ? Option.some(yield* protocolOf("METRICS")) : Option.none(),
    serviceName: Option.getOrElse(
      Option.orElse(
        Option.filter(serviceName, (s) => s.trim() !== ""),
        () => fromAttributes
      ),
      () => defaultServiceName
    )
  })
}).pipe(Effect.catchTag("ConfigError", () => Effect.succeed(Option.none<ExportSettings>())))

/** An export of a dynamically imported module, also when a bundler wraps a CommonJS module in `default`. */
const exported = <M extends object, K extends keyof M>(module: M, name: K): M[K] =>
  (name in module ? module[name] : (module as unknown as { readonly default: M }).default[name]) as M[K]

/** Loads the SDK and the exporters for `settings` and builds the layer that exports to them. */
const sdkLayer = (settings: ExportSettings, version: string | undefined) =>
  Effect.tryPromise({
    try: async () => {
      const [NodeSdk, TraceBase, SdkMetrics] = await Promise.all([
        import("@effect/opentelemetry/NodeSdk"),
        import("@opentelemetry/sdk-trace-base"),
        import("@opentelemetry/sdk-metrics")
      ])
      const SpanExporter = Option.isNone(settings.traces)
        ? undefined
        : settings.traces.value === "http/json"
          ? exported(await import("@opentelemetry/exporter-trace-otlp-http"), "OTLPTraceExporter")
          : exported(await import("@opentelemetry/exporter-trace-otlp-proto"), "OTLPTraceExporter")
      const MetricExporter = Option.isNone(settings.metrics)
        ? undefined
        : settings.metrics.value === "http/json"
          ? exported(await import("@opentelemetry/exporter-metrics-otlp-http"), "OTLPMetricExporter")
          : exported(await import("@opentelemetry/exporter-metrics-otlp-proto"), "OTLPMetricExporter")
      const BatchSpanProcessor = exported(TraceBase, "BatchSpanProcessor")
      const Reader = exported(SdkMetrics, "PeriodicExportingMetricReader")
      return exported(
        NodeSdk,
        "layer"
      )(() => ({
        spanProcessor: SpanExporter === undefined ? undefined : new BatchSpanProcessor(new SpanExporter()),
        // metrics are read every minute and once more when the layer closes (the reader's shutdown flushes)
        metricReader:
          MetricExporter === undefined
            ? undefined
            : new Reader({ exporter: new MetricExporter(), exportIntervalMillis: 60_000 }),
        resource: { serviceName: settings.serviceName, ...(version === undefined ? {} : { serviceVersion: version }) }
      }))
    },
    catch: (e) =>
      new InvalidInputError({
        message: `an OTLP endpoint is set but the OpenTelemetry packages could not be loaded: ${e instanceof Error ? e.message : String(e)}`
      })
  })

/**
 * Exports spans and metrics over OTLP/HTTP for the life of the layer when the environment names an endpoint (the
 * buffers are flushed when it closes), with the executor's per-call spans on (Spans.ExecutorSpans). Without an
 * endpoint nothing is exported and the per-call spans stay off. Fails on a protocol other than http/protobuf or
 * http/json.
 */
export const layerFromEnv = (version?: string): Layer.Layer<Spans.ExecutorSpans, InvalidInputError> =>
  Layer.unwrapEffect(
    Effect.flatMap(
      settings,
      Option.match({
        onNone: () => Effect.succeed(Spans.layerNoExecutorSpans),
        onSome: (s) =>
          Effect.map(sdkLayer(s, version), (layer) => Layer.merge(Layer.discard(layer), Spans.layerExecutorSpans))
      })
    )
  )
