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
import { Config, Effect, Layer, Option, Runtime } from "effect"
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
const defaultServiceName = "armature"

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

/**
 * How long telemetry may hold the work or the exit up: each export request (with its retries) and the final flush
 * when the layer closes. A collector that is down or unreachable costs at most this much at exit, never a hang.
 */
const exportBudgetMillis = 1000

/**
 * The exporters' own options: a request timeout of `exportBudgetMillis`, unless the environment sets one
 * (`OTEL_EXPORTER_OTLP_TIMEOUT`, or the signal's own `..._TRACES_TIMEOUT` / `..._METRICS_TIMEOUT`), which wins.
 */
const exporterOptions = (
  signal: "TRACES" | "METRICS",
  env: Readonly<Record<string, string | undefined>>
): { readonly timeoutMillis?: number } => {
  const set = (name: string) => (env[name] ?? "").trim() !== ""
  return set("OTEL_EXPORTER_OTLP_TIMEOUT") || set(`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`)
    ? {}
    : { timeoutMillis: exportBudgetMillis }
}

/** An exporter as the SDK calls it: `export` reports each batch's outcome to its callback (code 0: success). */
interface Exporter {
  export(items: unknown, done: (result: { readonly code: number; readonly error?: Error }) => void): void
}

/**
 * The same exporter, telling `onFailure` of each failed export (the SDK would drop the batch without a word); every
 * other member (shutdown, forceFlush, a metric exporter's temporality selectors) is the exporter's own.
 */
const reportingFailures = <E extends object>(exporter: E, onFailure: (error: string) => void): E =>
  new Proxy(exporter, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (key !== "export" || typeof value !== "function") {
        return typeof value === "function" ? value.bind(target) : value
      }
      const exportWith = value.bind(target) as Exporter["export"]
      return ((items, done) =>
        exportWith(items, (result) => {
          if (result.code !== 0) onFailure(result.error?.message ?? "export failed")
          done(result)
        })) satisfies Exporter["export"]
    }
  })

/** The endpoint named in the warning: the signal's own variable, else the general one. */
const endpointOf = (signal: "TRACES" | "METRICS"): string =>
  process.env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim() || process.env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || ""

/** Loads the SDK and the exporters for `settings` and builds the layer that exports to them. */
const sdkLayer = (settings: ExportSettings, version: string | undefined) =>
  Effect.flatMap(Effect.runtime<never>(), (runtime) =>
    Effect.tryPromise({
      try: async () => {
        // the first failed export is told once, as one warning; the work goes on without telemetry
        let warned = false
        const warnOnce = (signal: "TRACES" | "METRICS") => (error: string) => {
          if (warned) return
          warned = true
          Runtime.runFork(runtime)(
            Effect.logWarning(
              `OTLP export to ${endpointOf(signal)} failed (${error.split("\n")[0]}); telemetry is dropped, the work goes on`
            )
          )
        }
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
          spanProcessor:
            SpanExporter === undefined
              ? undefined
              : new BatchSpanProcessor(
                  reportingFailures(new SpanExporter(exporterOptions("TRACES", process.env)), warnOnce("TRACES")),
                  { exportTimeoutMillis: exportBudgetMillis }
                ),
          // metrics are read every minute and once more when the layer closes (the reader's shutdown flushes)
          metricReader:
            MetricExporter === undefined
              ? undefined
              : new Reader({
                  exporter: reportingFailures(
                    new MetricExporter(exporterOptions("METRICS", process.env)),
                    warnOnce("METRICS")
                  ),
                  exportIntervalMillis: 60_000,
                  exportTimeoutMillis: exportBudgetMillis
                }),
          resource: {
            serviceName: settings.serviceName,
            ...(version === undefined ? {} : { serviceVersion: version })
          },
          // the flush at exit waits this long at most (the SDK's default is 3 s)
          shutdownTimeout: exportBudgetMillis
        }))
      },
      catch: (e) =>
        new InvalidInputError({
          message: `an OTLP endpoint is set but the OpenTelemetry packages could not be loaded: ${e instanceof Error ? e.message : String(e)}`
        })
    })
  )

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
