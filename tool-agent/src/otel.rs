//! The `otel` feature: this workspace's `tracing` spans as OpenTelemetry
//! spans ([`layer`]), and an OTLP/HTTP exporter for them ([`otlp_provider`]).
//! What the spans hold is documented in [`telemetry`](crate::telemetry) and
//! `tool_core::telemetry` (OpenTelemetry's GenAI semantic conventions).
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! // Spans to an OpenTelemetry collector (or Langfuse, Phoenix, Grafana …) on
//! // localhost:4318; batched, sent from a background thread.
//! let provider = tool_agent::otel::otlp_provider("http://localhost:4318", "my-agent")?;
//! let subscriber = tracing_subscriber::registry().with(tool_agent::otel::layer(&provider));
//! tracing::subscriber::set_global_default(subscriber)?;
//! // … run agents …
//! provider.shutdown()?; // sends what is still queued
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate choices
//!
//! - **`tracing-opentelemetry` 0.34** (the `tokio-rs` bridge): turns
//!   `tracing` spans into OpenTelemetry spans and reads the `otel.name`,
//!   `otel.kind` and `otel.status_code` fields our spans carry. So tool-core
//!   and tool-agent emit through `tracing` alone, and an application without
//!   this feature still sees the same spans in its `tracing` subscriber.
//!   0.34 is the release built on `opentelemetry` 0.33 and `tracing-subscriber`
//!   0.3.22+, the versions in our lock file.
//! - **`opentelemetry` / `opentelemetry_sdk` 0.33** (only their `trace`
//!   feature): the API and the SDK's tracer provider and batch processor;
//!   the newest release, which builds with Rust 1.75 and later.
//! - **`opentelemetry-otlp` 0.33**, HTTP with protobuf (`http-proto`, the
//!   OTLP default for HTTP) over reqwest's blocking client
//!   (`reqwest-blocking-client`): reqwest 0.13 is the HTTP client tool-agent
//!   already uses, so no second client is compiled; the blocking client
//!   is what the SDK's batch processor (its own background thread, no async
//!   runtime) runs with. No gRPC: `tonic` would add a second HTTP/2 stack
//!   for the same spans.
//!
//! All of them are optional: the default build of the workspace compiles none.

pub use opentelemetry;
pub use opentelemetry_sdk;
pub use tracing_opentelemetry;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetryLayer;

/// The instrumentation scope name of the spans ([`layer`]'s tracer).
pub const SCOPE: &str = "agent-tools";

/// Why an exporter could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The endpoint is not an `http://` or `https://` URL.
    #[error(
        "OTLP endpoint {0:?} is not an http:// or https:// URL; give the collector's base URL, e.g. http://localhost:4318"
    )]
    Endpoint(String),
    /// The OTLP exporter could not be built (its HTTP client).
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// A `tracing-subscriber` layer that turns the spans into OpenTelemetry spans
/// of `provider`'s tracer (scope [`SCOPE`]): names from `otel.name`, kinds
/// from `otel.kind`, error status from `otel.status_code`, every other field
/// an attribute.
pub fn layer<S>(provider: &SdkTracerProvider) -> OpenTelemetryLayer<S, SdkTracer>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    tracing_opentelemetry::layer().with_tracer(provider.tracer(SCOPE))
}

/// A tracer provider that exports spans over OTLP/HTTP with protobuf to
/// `endpoint`, the collector's base URL as `OTEL_EXPORTER_OTLP_ENDPOINT`
/// gives it (`http://localhost:4318`; spans go to `{endpoint}/v1/traces`).
/// The resource's `service.name` is `service_name`. Spans are batched (the
/// SDK's defaults: up to 512 spans per request, every 5 s, 2 048 queued at
/// most; beyond that new spans are dropped) and sent from the SDK's own
/// thread; call `shutdown` (or `force_flush`) on the provider before the
/// program exits, or the last batch is lost. Each export waits at most 10 s
/// (the SDK's default timeout).
///
/// # Errors
/// [`OtelError::Endpoint`] for an endpoint that is not an HTTP(S) URL;
/// [`OtelError::Exporter`] when the HTTP client cannot be built.
pub fn otlp_provider(endpoint: &str, service_name: &str) -> Result<SdkTracerProvider, OtelError> {
    let base = endpoint.trim().trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://"))
        || base.contains(char::is_whitespace)
    {
        return Err(OtelError::Endpoint(endpoint.to_owned()));
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/traces"))
        .build()?;
    let resource = Resource::builder()
        .with_service_name(service_name.to_owned())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}
