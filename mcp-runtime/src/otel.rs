//! Distributed traces across the call (SEP-414): the W3C trace context in a request's `_meta`
//!
//! With the feature `otel` (forwarded by every binding) and a
//! [`tracing-opentelemetry`](https://docs.rs/tracing-opentelemetry) layer installed by the
//! application:
//!
//! - a server's `mcp.request` span continues the caller's trace: its OpenTelemetry parent is
//!   the context in the request's `params._meta` (the bare keys [`TRACEPARENT`],
//!   [`TRACESTATE`] and [`BAGGAGE`], in the W3C Trace Context and W3C Baggage formats), so
//!   the handler's own spans (a handler runs inside its request's span) are in the caller's
//!   trace; a malformed or missing value is ignored (the span starts a trace of its own),
//!   never an error;
//! - a client's request carries the context of the span current where the call was made (the
//!   application's, captured on the caller's task or thread): its `mcp.request` span is a
//!   child of it, and that span's context goes into `params._meta` (`tracestate` when not
//!   empty, `baggage` when there is any), merged with the `_meta` the params have; a
//!   `traceparent` the application put there itself is left as it is.
//!
//! Without an OpenTelemetry layer nothing is injected (there is no valid context) and the
//! cost is a look at the current span. Without the feature none of this is compiled:
//! [`Parent`] is an empty type.
//!
//! The feature `otlp` adds [`otlp`]: an OTLP/HTTP (protobuf) span exporter and its
//! `tracing` layer, as the everything-servers' `--otlp` use it.

#[cfg(feature = "otel")]
use serde_json::value::RawValue;

/// The OpenTelemetry API this feature is built on (the versions the bridge must match)
#[cfg(feature = "otel")]
pub use opentelemetry;
/// The OpenTelemetry SDK (its tracer provider, processors and propagators)
#[cfg(feature = "otel")]
pub use opentelemetry_sdk;
/// The `tracing` to OpenTelemetry bridge this feature reads and sets span contexts through
/// (`OpenTelemetrySpanExt`)
#[cfg(feature = "otel")]
pub use tracing_opentelemetry;

/// The `_meta` key of the W3C `traceparent` (SEP-414)
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate` (SEP-414)
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` key of the W3C `baggage` (SEP-414)
pub const BAGGAGE: &str = "baggage";

/// The application's trace context where a request was made, carried with the request to
/// the connection actor (which runs elsewhere, under its session's span)
///
/// Without the feature `otel` it is empty and costs nothing.
#[derive(Clone, Debug, Default)]
pub struct Parent {
    #[cfg(feature = "otel")]
    cx: Option<opentelemetry::Context>,
}

impl Parent {
    /// The current context: the OpenTelemetry context of the current `tracing` span, or else
    /// the current OpenTelemetry context; empty when neither has a valid span (no layer
    /// installed, no span entered)
    #[inline]
    #[must_use]
    pub fn current() -> Self {
        #[cfg(feature = "otel")]
        {
            use opentelemetry::trace::TraceContextExt;
            use tracing_opentelemetry::OpenTelemetrySpanExt;
            let cx = tracing::Span::current().context();
            if cx.span().span_context().is_valid() {
                return Self { cx: Some(cx) };
            }
            let cx = opentelemetry::Context::current();
            if cx.span().span_context().is_valid() {
                return Self { cx: Some(cx) };
            }
            Self { cx: None }
        }
        #[cfg(not(feature = "otel"))]
        Self {}
    }

    /// Whether it holds a context
    #[must_use]
    pub fn is_empty(&self) -> bool {
        #[cfg(feature = "otel")]
        {
            self.cx.is_none()
        }
        #[cfg(not(feature = "otel"))]
        true
    }
}

/// The trace keys of a request's `_meta`, as received (each `None` when missing or not a
/// string)
#[cfg(feature = "otel")]
#[derive(Debug, Default, PartialEq, Eq)]
struct Carrier {
    traceparent: Option<String>,
    tracestate: Option<String>,
    baggage: Option<String>,
}

#[cfg(feature = "otel")]
impl opentelemetry::propagation::Extractor for Carrier {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent.as_deref(),
            TRACESTATE => self.tracestate.as_deref(),
            BAGGAGE => self.baggage.as_deref(),
            _ => None,
        }
    }
    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE, BAGGAGE]
    }
}

#[cfg(feature = "otel")]
impl opentelemetry::propagation::Injector for Carrier {
    fn set(&mut self, key: &str, value: String) {
        match key {
            TRACEPARENT => self.traceparent = Some(value),
            TRACESTATE => self.tracestate = Some(value),
            BAGGAGE => self.baggage = Some(value),
            _ => {}
        }
    }
}

/// The trace keys of `params._meta` (read only when the text names `traceparent`)
#[cfg(feature = "otel")]
fn carrier(params: &str) -> Option<Carrier> {
    use serde_json::Value;
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta", default)]
        meta: Option<Value>,
    }
    if !params.contains(TRACEPARENT) {
        return None;
    }
    let params: Params = serde_json::from_str(params).ok()?;
    let meta = params.meta?;
    let text = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(Carrier {
        traceparent: Some(text(TRACEPARENT)?),
        tracestate: text(TRACESTATE),
        baggage: text(BAGGAGE),
    })
}

/// Whether `traceparent` has the W3C form: `version-traceid-parentid-flags`, lowercase hex
/// of 2, 32, 16 and 2 digits (version `ff` is invalid; a later version than `00` may add
/// fields after the flags); the propagator checks the rest (ids not all zero)
#[cfg(feature = "otel")]
fn well_formed(traceparent: &str) -> bool {
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let mut parts = traceparent.split('-');
    let (Some(version), Some(trace), Some(span), Some(flags)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let more = parts.next().is_some();
    hex(version, 2)
        && version != "ff"
        && !(version == "00" && more)
        && hex(trace, 32)
        && hex(span, 16)
        && hex(flags, 2)
}

/// The caller's context in a request's params (`_meta.traceparent`, `tracestate`,
/// `baggage`): `None` when there is no `traceparent` or it is malformed (a malformed
/// `tracestate` or `baggage` is dropped, the `traceparent` still counts)
#[cfg(feature = "otel")]
#[must_use]
pub fn extract(params: Option<&RawValue>) -> Option<opentelemetry::Context> {
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::TraceContextExt;
    let carrier = carrier(params?.get())?;
    if !well_formed(carrier.traceparent.as_deref()?) {
        return None;
    }
    let cx = opentelemetry_sdk::propagation::TraceContextPropagator::new()
        .extract_with_context(&opentelemetry::Context::new(), &carrier);
    if !cx.span().span_context().is_valid() {
        return None;
    }
    Some(
        opentelemetry_sdk::propagation::BaggagePropagator::new()
            .extract_with_context(&cx, &carrier),
    )
}

/// A server's request span continues the caller's trace from the request's `_meta` (when
/// it holds a valid `traceparent` and an OpenTelemetry layer is installed)
#[cfg(feature = "otel")]
pub(crate) fn continue_trace(span: &tracing::Span, params: Option<&RawValue>) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    // (A request may have a disabled span when it is only metered.)
    if span.is_disabled() {
        return;
    }
    if let Some(cx) = extract(params) {
        let _ = span.set_parent(cx);
    }
}

/// Our request's params with the trace context in their `_meta`: the request span's
/// (`span`, made a child of `parent`) or else `parent`'s; unchanged when there is no valid
/// context, when the params or their `_meta` are not objects, or when `_meta` has a
/// `traceparent` already
#[cfg(feature = "otel")]
pub(crate) fn outbound(
    span: Option<&tracing::Span>,
    parent: Parent,
    params: Option<Box<RawValue>>,
) -> Option<Box<RawValue>> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let cx = match span {
        Some(span) => {
            if let Some(cx) = parent.cx.clone() {
                let _ = span.set_parent(cx);
            }
            let cx = span.context();
            if cx.span().span_context().is_valid() {
                Some(cx)
            } else {
                parent.cx
            }
        }
        None => parent.cx,
    };
    match cx {
        Some(cx) => inject(&cx, params),
        None => params,
    }
}

/// `params` with `cx`'s trace context and baggage in their `_meta` (`traceparent`;
/// `tracestate` and `baggage` when not empty), merged with the `_meta` there is; unchanged
/// when `cx` has no valid span, when the params or their `_meta` are not objects, or when
/// `_meta` has a `traceparent` already (the application's own). `None` params become an
/// object with only `_meta`.
#[cfg(feature = "otel")]
#[must_use]
pub fn inject(cx: &opentelemetry::Context, params: Option<Box<RawValue>>) -> Option<Box<RawValue>> {
    use opentelemetry::propagation::TextMapPropagator;
    use serde_json::{Map, Value};
    let mut carrier = Carrier::default();
    opentelemetry_sdk::propagation::TraceContextPropagator::new().inject_context(cx, &mut carrier);
    let Some(traceparent) = carrier.traceparent.take() else {
        return params;
    };
    opentelemetry_sdk::propagation::BaggagePropagator::new().inject_context(cx, &mut carrier);
    let mut object: Map<String, Value> = match &params {
        None => Map::new(),
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(Value::Object(object)) => object,
            _ => return params,
        },
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return params;
    };
    if meta.contains_key(TRACEPARENT) {
        return params;
    }
    meta.insert(TRACEPARENT.into(), Value::String(traceparent));
    if let Some(state) = carrier.tracestate.filter(|s| !s.is_empty()) {
        meta.insert(TRACESTATE.into(), Value::String(state));
    }
    if let Some(baggage) = carrier.baggage.filter(|s| !s.is_empty()) {
        meta.insert(BAGGAGE.into(), Value::String(baggage));
    }
    match serde_json::value::to_raw_value(&object) {
        Ok(raw) => Some(raw),
        Err(_) => params,
    }
}

#[cfg(feature = "otlp")]
pub mod otlp;

#[cfg(all(test, feature = "otel"))]
mod tests {
    use opentelemetry::baggage::BaggageExt;
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry::{Context, KeyValue};
    use serde_json::Value;

    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("json")
    }

    fn json(raw: &RawValue) -> Value {
        serde_json::from_str(raw.get()).expect("json")
    }

    #[test]
    fn a_valid_traceparent_is_the_callers_context() {
        let params = raw(&format!(
            r#"{{"name":"echo","_meta":{{"traceparent":"{PARENT}","tracestate":"congo=t61rcWkgMzE","baggage":"user=alice"}}}}"#
        ));
        let cx = extract(Some(&params)).expect("a context");
        let span = cx.span();
        let sc = span.span_context();
        assert_eq!(
            sc.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(sc.span_id().to_string(), "b7ad6b7169203331");
        assert!(sc.is_sampled() && sc.is_remote());
        assert_eq!(sc.trace_state().header(), "congo=t61rcWkgMzE");
        assert_eq!(
            cx.baggage().get("user").map(ToString::to_string).as_deref(),
            Some("alice")
        );
    }

    #[test]
    fn malformed_or_missing_values_are_ignored() {
        for meta in [
            r#"{"traceparent":"garbage"}"#,
            r#"{"traceparent":"00-00000000000000000000000000000000-b7ad6b7169203331-01"}"#,
            r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"}"#,
            r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01"}"#,
            r#"{"traceparent":"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}"#,
            r#"{"traceparent":"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"}"#,
            r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra"}"#,
            r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1"}"#,
            r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01"}"#,
            r#"{"traceparent":"00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01"}"#,
            r#"{"traceparent":""}"#,
            r#"{"traceparent":42}"#,
            r#"{"traceparent":null}"#,
            r#""traceparent""#,
            r#"{"other":"traceparent"}"#,
        ] {
            let params = raw(&format!(r#"{{"name":"echo","_meta":{meta}}}"#));
            assert!(extract(Some(&params)).is_none(), "{meta}");
        }
        assert!(extract(None).is_none());
        assert!(extract(Some(&raw("[\"traceparent\"]"))).is_none());
        assert!(extract(Some(&raw(r#"{"name":"traceparent"}"#))).is_none());
        // A bad tracestate or baggage next to a good traceparent: the traceparent counts.
        let params = raw(&format!(
            r#"{{"_meta":{{"traceparent":"{PARENT}","tracestate":"=,=,=","baggage":";;;"}}}}"#
        ));
        assert!(extract(Some(&params)).is_some());
    }

    fn context(state: &str) -> Context {
        let sc = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            false,
            state.parse::<TraceState>().unwrap(),
        );
        Context::new().with_remote_span_context(sc)
    }

    #[test]
    fn inject_merges_into_the_meta_there_is() {
        let cx = context("");
        let params = raw(
            r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7}}"#,
        );
        let out = json(&inject(&cx, Some(params)).unwrap());
        assert_eq!(
            out,
            serde_json::json!({"name":"echo","_meta":{
                "io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7,
                "traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
        );
        // No params: an object with only `_meta`; tracestate and baggage when there are any
        let cx = context("rojo=00f067aa0ba902b7").with_baggage([KeyValue::new("user", "bob")]);
        let out = json(&inject(&cx, None).unwrap());
        assert_eq!(out["_meta"]["tracestate"], "rojo=00f067aa0ba902b7");
        assert_eq!(out["_meta"]["baggage"], "user=bob");
        // Round trip
        let back = extract(Some(&raw(&out.to_string()))).unwrap();
        assert_eq!(
            back.span().span_context().trace_id(),
            cx.span().span_context().trace_id()
        );
    }

    #[test]
    fn inject_leaves_what_it_cannot_or_must_not_touch() {
        let cx = context("");
        for params in [
            r#"{"_meta":{"traceparent":"00-11111111111111111111111111111111-2222222222222222-01"}}"#,
            r#"{"_meta":"not an object"}"#,
            r#"[1,2]"#,
        ] {
            let out = inject(&cx, Some(raw(params))).unwrap();
            assert_eq!(out.get(), params);
        }
        // An invalid context injects nothing.
        let params = raw(r#"{"name":"echo"}"#);
        assert_eq!(
            inject(&Context::new(), Some(params)).unwrap().get(),
            r#"{"name":"echo"}"#
        );
        assert!(inject(&Context::new(), None).is_none());
        // And with no OpenTelemetry layer, no current context: nothing injected
        assert!(Parent::current().is_empty());
        let params = raw(r#"{"name":"echo"}"#);
        let out = outbound(None, Parent::current(), Some(params)).unwrap();
        assert_eq!(out.get(), r#"{"name":"echo"}"#);
    }

    #[test]
    fn a_request_continues_the_callers_span_on_both_sides() {
        use opentelemetry::trace::TracerProvider as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let ids = |span: &tracing::Span| {
                let cx = span.context();
                let sc = cx.span().span_context().clone();
                (sc.trace_id(), sc.span_id())
            };
            let app = tracing::info_span!("app");
            let parent = app.in_scope(Parent::current);
            assert!(!parent.is_empty());
            let (app_trace, app_span) = ids(&app);
            // The actor's spans are not under the application's.
            let session = tracing::info_span!(parent: None, "session");
            assert_ne!(ids(&session).0, app_trace);
            let request = tracing::debug_span!(parent: &session, "mcp.request");
            let out = outbound(
                Some(&request),
                parent.clone(),
                Some(raw(r#"{"name":"echo"}"#)),
            )
            .expect("params");
            let sent = extract(Some(&out)).expect("a traceparent went out");
            let sent = sent.span().span_context().clone();
            let (request_trace, request_span) = ids(&request);
            assert_eq!((request_trace, sent.trace_id()), (app_trace, app_trace));
            assert_eq!(sent.span_id(), request_span, "the request span's context");
            assert_ne!(request_span, app_span);
            // Without a request span (filtered out), the caller's own context goes out.
            let out_bare = outbound(None, parent.clone(), None).expect("params");
            let bare = extract(Some(&out_bare)).expect("a traceparent");
            assert_eq!(bare.span().span_context().span_id(), app_span);
            // A traceparent the application set itself is left as it is.
            let own = r#"{"_meta":{"traceparent":"00-11111111111111111111111111111111-2222222222222222-01"}}"#;
            let again = tracing::debug_span!(parent: &session, "mcp.request");
            assert_eq!(
                outbound(Some(&again), parent, Some(raw(own)))
                    .unwrap()
                    .get(),
                own
            );
            // The server's span, under its own session, continues the caller's trace.
            let server_session = tracing::info_span!(parent: None, "session");
            let served = tracing::debug_span!(parent: &server_session, "mcp.request");
            continue_trace(&served, Some(&out));
            assert_eq!(ids(&served).0, app_trace);
            let handler = served.in_scope(|| tracing::info_span!("tool.work"));
            assert_eq!(ids(&handler).0, app_trace);
            // A malformed one leaves it in its session's trace.
            let lost = tracing::debug_span!(parent: &server_session, "mcp.request");
            continue_trace(&lost, Some(&raw(r#"{"_meta":{"traceparent":"00-zz-01"}}"#)));
            assert_eq!(ids(&lost).0, ids(&server_session).0);
        });
    }
}
