//! A ready OTLP/HTTP span exporter (feature `otlp`): spans go as protobuf to
//! `<endpoint>/v1/traces`, in batches at most half a second old, over a plain blocking
//! HTTP/1.1 client (no async runtime, so the same in every binding)
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let (layer, otlp) = mcp_sansio_runtime::otel::otlp::layer("http://127.0.0.1:4318", "my-server")
//!     .expect("an http:// endpoint");
//! tracing_subscriber::registry().with(layer).init();
//! otlp.flush_on_signals(); // SIGINT, SIGTERM: flush, then exit
//! // ... serve; dropping `otlp` flushes what is left
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider,
};
use tracing_opentelemetry::OpenTelemetryLayer;

/// How long one export may take (connect, send, answer)
const TIMEOUT: Duration = Duration::from_secs(5);

/// The exporting pipeline: flushes and shuts down when dropped
#[derive(Debug, Clone)]
pub struct Otlp {
    provider: SdkTracerProvider,
}

/// Why [`layer`] could not start
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The endpoint is not `http://HOST:PORT[/]`
    #[error("the OTLP endpoint must be http://HOST:PORT, not {0:?}")]
    Endpoint(String),
    /// The exporter refused its configuration
    #[error("the OTLP exporter: {0}")]
    Exporter(String),
}

/// A `tracing` layer exporting every span to the OTLP/HTTP collector at `endpoint`
/// (`http://HOST:PORT`; `/v1/traces` is added) as service `service`, and the pipeline's
/// handle ([`Otlp`]: keep it until the end, it flushes when dropped)
///
/// Finished spans go out in batches every half second (`OTEL_BSP_SCHEDULE_DELAY`, in
/// milliseconds, sets another delay; the other `OTEL_BSP_*` variables are honoured too).
/// The layer is also the global tracer provider (`opentelemetry::global`).
///
/// # Errors
/// [`OtlpError`] for an endpoint that is not `http://HOST:PORT`.
pub fn layer<S>(
    endpoint: &str,
    service: &str,
) -> Result<(OpenTelemetryLayer<S, SdkTracer>, Otlp), OtlpError>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let base = endpoint.trim_end_matches('/');
    let authority = base
        .strip_prefix("http://")
        .filter(|a| !a.is_empty() && !a.contains('/'))
        .ok_or_else(|| OtlpError::Endpoint(endpoint.to_owned()))?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(PlainHttp {
            authority: authority.to_owned(),
        })
        .with_endpoint(format!("{base}/v1/traces"))
        .with_timeout(TIMEOUT)
        .build()
        .map_err(|e| OtlpError::Exporter(e.to_string()))?;
    // Half a second unless `OTEL_BSP_SCHEDULE_DELAY` (milliseconds) says otherwise
    let mut batch = BatchConfigBuilder::default();
    if std::env::var_os("OTEL_BSP_SCHEDULE_DELAY").is_none() {
        batch = batch.with_scheduled_delay(Duration::from_millis(500));
    }
    let batch = batch.build();
    let processor = BatchSpanProcessor::builder(exporter)
        .with_batch_config(batch)
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(
            Resource::builder()
                .with_service_name(service.to_owned())
                .build(),
        )
        .build();
    let tracer = provider.tracer("mcp-sansio");
    opentelemetry::global::set_tracer_provider(provider.clone());
    Ok((
        tracing_opentelemetry::layer().with_tracer(tracer),
        Otlp { provider },
    ))
}

impl Otlp {
    /// Exports every finished span now
    pub fn flush(&self) {
        let _ = self.provider.force_flush();
    }

    /// On SIGINT or SIGTERM: exports every finished span, then exits the process (with
    /// 130 or 143, as a shell reports the signal); a second signal exits at once
    ///
    /// # Errors
    /// When the signal handlers cannot be installed.
    pub fn flush_on_signals(&self) -> std::io::Result<()> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        let provider = self.provider.clone();
        std::thread::Builder::new()
            .name("otlp-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    let _ = provider.force_flush();
                    let _ = provider.shutdown_with_timeout(TIMEOUT);
                    std::process::exit(128 + signal);
                }
            })?;
        Ok(())
    }
}

impl Drop for Otlp {
    fn drop(&mut self) {
        // The last handle (the global provider is a clone) exports what is left.
        let _ = self.provider.force_flush();
    }
}

/// A blocking HTTP/1.1 client for `http://` collectors: one connection per export
#[derive(Debug)]
struct PlainHttp {
    authority: String,
}

#[async_trait::async_trait]
impl HttpClient for PlainHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        post(&self.authority, request)
    }
}

fn post(authority: &str, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
    let address = authority
        .to_socket_addrs()?
        .next()
        .ok_or("the OTLP endpoint resolves to no address")?;
    let mut stream = TcpStream::connect_timeout(&address, TIMEOUT)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    let path = request
        .uri()
        .path_and_query()
        .map_or("/v1/traces", |p| p.as_str());
    let mut head = format!(
        "{} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
        request.method(),
        request.body().len()
    );
    for (name, value) in request.headers() {
        if name == http::header::CONTENT_LENGTH || name == http::header::HOST {
            continue;
        }
        if let Ok(value) = value.to_str() {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(request.body())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("the collector answered no HTTP status")?;
    // The answer's body (an ExportTraceServiceResponse) is not needed: read it to the end,
    // at most 64 KiB.
    let mut rest = Vec::new();
    let _ = reader.take(64 * 1024).read_to_end(&mut rest);
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = http::StatusCode::from_u16(status)?;
    Ok(response)
}
