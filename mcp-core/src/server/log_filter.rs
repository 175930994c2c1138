//! Which log messages (`notifications/message`) a client wants

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::jsonrpc::{ErrorObject, code};
use crate::schema::method::SetLevel;
use crate::schema::{LoggingLevel, Meta, meta};
use crate::{InboundRequest, ServerSession};

/// The least severe log level a client wants, or nothing at all
///
/// Levels are ordered as in syslog (RFC 5424): debug < info < notice < warning < error <
/// critical < alert < emergency; a filter at `warning` lets warning and everything more
/// severe through.
///
/// - **Legacy era**: one filter per connection. It starts at [`LogFilter::LEGACY_DEFAULT`]
///   (`info`: the specification lets the server choose until `logging/setLevel` arrives,
///   and sending info and above is the common choice); `logging/setLevel` replaces it with
///   [`set_level`](Self::set_level).
/// - **Modern era** (2026-07-28): one filter per request, from the request's
///   `_meta["io.modelcontextprotocol/logLevel"]`
///   ([`from_meta`](Self::from_meta), [`from_params`](Self::from_params)). When the key is
///   absent the server must not send any log message for that request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogFilter {
    level: Option<LoggingLevel>,
}

impl LogFilter {
    /// The legacy filter before any `logging/setLevel`: `info`
    pub const LEGACY_DEFAULT: LoggingLevel = LoggingLevel::Info;

    /// A filter letting `level` and more severe messages through
    pub fn at(level: LoggingLevel) -> Self {
        Self { level: Some(level) }
    }

    /// A filter letting nothing through
    pub fn off() -> Self {
        Self { level: None }
    }

    /// The filter of a new legacy connection ([`LEGACY_DEFAULT`](Self::LEGACY_DEFAULT))
    pub fn legacy() -> Self {
        Self::at(Self::LEGACY_DEFAULT)
    }

    /// Applies `logging/setLevel`
    pub fn set_level(&mut self, level: LoggingLevel) {
        self.level = Some(level);
    }

    /// Takes one inbound request of a server: answers `logging/setLevel` itself (this
    /// filter, the connection's, changes; invalid params are -32602), and hands back every
    /// other request for the server to dispatch
    ///
    /// For a binding that keeps the connection's filter itself; [`Runs`](super::Runs) does
    /// this for the bindings that use it.
    pub fn handle_set_level(
        &mut self,
        session: &mut ServerSession,
        request: InboundRequest,
    ) -> Option<InboundRequest> {
        if !request.is::<SetLevel>() {
            return Some(request);
        }
        match request.params::<SetLevel>() {
            Ok(p) => {
                self.set_level(p.level);
                let empty = RawValue::from_string("{}".into()).expect("`{}` is JSON");
                let _ = session.respond_raw(request.responder, &empty);
            }
            Err(e) => session.respond_error(request.responder, &e),
        }
        None
    }

    /// The filter of one modern request, from its params' `_meta`: the
    /// `io.modelcontextprotocol/logLevel` level, or [`off`](Self::off) when absent
    ///
    /// # Errors
    /// -32602 `Invalid log level` when the key holds something other than a level name.
    pub fn from_meta(meta: Option<&Meta>) -> Result<Self, ErrorObject> {
        match meta.and_then(|m| m.get(meta::LOG_LEVEL)) {
            None | Some(Value::Null) => Ok(Self::off()),
            Some(value) => LoggingLevel::deserialize(value)
                .map(Self::at)
                .map_err(|_| invalid_level(value)),
        }
    }

    /// [`from_meta`](Self::from_meta) on raw request params (as in
    /// [`InboundRequest::params`](crate::InboundRequest::params)), for code that has not
    /// decoded them
    ///
    /// # Errors
    /// As [`from_meta`](Self::from_meta); params that are not an object count as no `_meta`.
    pub fn from_params(params: Option<&RawValue>) -> Result<Self, ErrorObject> {
        // Only the level is read (borrowed): the rest of the params is skipped, not built.
        #[derive(Deserialize)]
        struct OnlyMeta<'a> {
            #[serde(rename = "_meta", borrow)]
            meta: Option<OnlyLevel<'a>>,
        }
        #[derive(Deserialize)]
        struct OnlyLevel<'a> {
            #[serde(rename = "io.modelcontextprotocol/logLevel", borrow)]
            level: Option<&'a RawValue>,
        }
        let level = params
            .and_then(|raw| serde_json::from_str::<OnlyMeta<'_>>(raw.get()).ok())
            .and_then(|p| p.meta)
            .and_then(|m| m.level);
        match level {
            None => Ok(Self::off()),
            Some(raw) => match serde_json::from_str::<LoggingLevel>(raw.get()) {
                Ok(level) => Ok(Self::at(level)),
                Err(_) => Err(invalid_level(
                    &serde_json::from_str(raw.get()).unwrap_or(Value::Null),
                )),
            },
        }
    }

    /// The least severe level let through; `None` when nothing is
    pub fn level(&self) -> Option<LoggingLevel> {
        self.level
    }

    /// Whether a message at `level` may be sent
    pub fn allows(&self, level: LoggingLevel) -> bool {
        self.level.is_some_and(|least| level >= least)
    }
}

impl Default for LogFilter {
    /// [`LogFilter::legacy`]
    fn default() -> Self {
        Self::legacy()
    }
}

fn invalid_level(value: &Value) -> ErrorObject {
    ErrorObject::new(code::INVALID_PARAMS, format!("Invalid log level: {value}"))
}
