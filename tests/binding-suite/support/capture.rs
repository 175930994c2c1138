//! A `tracing` subscriber that keeps what the bindings emit: every closed span and every
//! event, each with its own fields and those of the spans around it
//!
//! Work runs on other threads (tokio's and smol's workers, the blocking binding's pool and
//! reader threads), so a thread-local default would miss it: [`install`] sets one global
//! subscriber for the whole test binary, and each test picks its own records by the peer
//! names of its sessions ([`of_sessions`]), which no other test uses. Only the sessions
//! whose peer's name starts with [`PREFIX`] are kept (other tests' big payloads are not
//! even formatted), and the HTTP exchanges (`mcp_sansio::http`, small).

/// The start of the peer names whose sessions are kept
pub(crate) const PREFIX: &str = "trace-";

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, Once};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record as Values};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A span's or an event's fields, formatted
pub(crate) type Fields = BTreeMap<String, String>;

/// A closed span or an event
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// Whether it is a span (else an event)
    pub(crate) span: bool,
    /// The span's name, or the event's message
    pub(crate) name: String,
    pub(crate) level: Level,
    pub(crate) target: String,
    /// Its own fields (an event's message is its `name`, not a field)
    pub(crate) fields: Fields,
    /// The spans around it, innermost first: their names and fields (as they were when the
    /// event happened or the span closed)
    pub(crate) scope: Vec<(String, Fields)>,
}

impl Record {
    /// Its own field `name`
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// The fields of the innermost span around it named `name`
    pub(crate) fn within(&self, name: &str) -> Option<&Fields> {
        self.scope.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// All it says: its name, its fields and those of the spans around it, as text
    pub(crate) fn text(&self) -> String {
        format!("{} {:?} {:?}", self.name, self.fields, self.scope)
    }
}

static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

/// Sets the global subscriber (once per test binary): the kernel's targets (`mcp_sansio`)
/// and the suite's own (`suite_trace`), at every level
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let targets = Targets::new()
            .with_target("mcp_sansio", Level::TRACE)
            .with_target("suite_trace", Level::TRACE);
        let subscriber = tracing_subscriber::registry().with(Capture.with_filter(targets));
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
    });
}

/// The records of the sessions (or, on a session many clients share, the requests) whose
/// peer is one of `peers` (by `peer.name`), so far
pub(crate) fn of_sessions(peers: &[&str]) -> Vec<Record> {
    let records = RECORDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let ours = |fields: &Fields| {
        fields
            .get("peer.name")
            .is_some_and(|name| peers.contains(&name.as_str()))
    };
    records
        .iter()
        .filter(|r| (r.span && ours(&r.fields)) || r.scope.iter().any(|(_, f)| ours(f)))
        .cloned()
        .collect()
}

/// The records of every HTTP exchange (`mcp_sansio::http`) so far
pub(crate) fn of_http() -> Vec<Record> {
    let records = RECORDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    records
        .iter()
        .filter(|r| r.target == "mcp_sansio::http")
        .cloned()
        .collect()
}

/// Keeps the spans' fields in their extensions and the records in [`RECORDS`]
struct Capture;

/// A span's fields so far
struct Kept(Fields);

#[derive(Default)]
struct Visitor {
    fields: Fields,
    message: Option<String>,
}

impl Visit for Visitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, format!("{value:?}"));
    }
}

impl Visitor {
    fn put(&mut self, field: &Field, value: String) {
        if field.name() == "message" {
            self.message = Some(value);
        } else {
            self.fields.insert(field.name().to_owned(), value);
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut visitor = Visitor::default();
        attrs.record(&mut visitor);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Kept(visitor.fields));
        }
    }

    fn on_record(&self, id: &Id, values: &Values<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut visitor = Visitor::default();
        values.record(&mut visitor);
        if let Some(kept) = span.extensions_mut().get_mut::<Kept>() {
            kept.0.extend(visitor.fields);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let scope: Vec<(String, Fields)> = ctx
            .event_scope(event)
            .map(|scope| scope.map(|span| fields_of(&span)).collect())
            .unwrap_or_default();
        if !kept(event.metadata().target(), &scope) {
            return;
        }
        let mut visitor = Visitor::default();
        event.record(&mut visitor);
        keep(Record {
            span: false,
            name: visitor.message.unwrap_or_default(),
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields: visitor.fields,
            scope,
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let (name, fields) = fields_of(&span);
        let scope: Vec<(String, Fields)> = span.scope().map(|s| fields_of(&s)).collect();
        if !kept(span.metadata().target(), &scope) {
            return;
        }
        let scope = scope.into_iter().skip(1).collect();
        keep(Record {
            span: true,
            name,
            level: *span.metadata().level(),
            target: span.metadata().target().to_owned(),
            fields,
            scope,
        });
    }
}

fn fields_of<S: for<'a> LookupSpan<'a>>(
    span: &tracing_subscriber::registry::SpanRef<'_, S>,
) -> (String, Fields) {
    let fields = span
        .extensions()
        .get::<Kept>()
        .map(|k| k.0.clone())
        .unwrap_or_default();
    (span.name().to_owned(), fields)
}

/// Whether a record in `scope` (the span itself first, for a span) is kept
fn kept(target: &str, scope: &[(String, Fields)]) -> bool {
    target == "mcp_sansio::http"
        || scope.iter().any(|(_, fields)| {
            fields
                .get("peer.name")
                .is_some_and(|peer| peer.starts_with(PREFIX))
        })
}

fn keep(record: Record) {
    RECORDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(record);
}
