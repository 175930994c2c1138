//! What a handler knows about the request it serves: who sent it, over what, and in which
//! version, read-only ([`RequestInfo`], from every binding's `Context::request`)

use std::sync::{Arc, OnceLock};

use mcp_sansio::schema::Implementation;
use mcp_sansio::session::{Caller, HeaderFields, Principal};
use mcp_sansio::version::{Era, ProtocolVersion};
use mcp_sansio::{InboundRequest, PeerInfo, ServerSession};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `_meta` key of a 2026 request's client implementation info
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// The request a handler serves, as the server received it: the caller's verified
/// principal, the HTTP headers, the request's `_meta`, the client's implementation info and
/// capabilities, the protocol version, and the 2025 session id
///
/// Every binding's handler context gives it (`cx.request()`), for tools, resources,
/// templates, prompts and completion alike. On stdio there are no headers and, unless the
/// application set a caller for the connection, no principal.
///
/// ```
/// use mcp_sansio::jsonrpc::ErrorObject;
/// use mcp_sansio::schema::CallToolResult;
/// use mcp_sansio_runtime::request::RequestInfo;
///
/// fn whoami(request: &RequestInfo) -> Result<CallToolResult, ErrorObject> {
///     let who = request.principal().and_then(|p| p.subject.as_deref()).unwrap_or("anonymous");
///     let agent = request.header("user-agent").unwrap_or("unknown");
///     Ok(CallToolResult::text(format!("{who} via {agent} on {}", request.protocol_version())))
/// }
/// ```
#[derive(Debug, Clone)]
pub struct RequestInfo {
    version: ProtocolVersion,
    caller: Option<Arc<Caller>>,
    /// The request's params, kept whole (the handler's arguments were read from them);
    /// `_meta` is decoded from them when first asked for
    params: Option<Box<RawValue>>,
    meta: OnceLock<Option<Map<String, Value>>>,
    /// 2025 sessions: what the client said in `initialize`
    peer: Option<Arc<PeerInfo>>,
    /// 2026: this request's capabilities
    capabilities: Arc<Value>,
    client_info: OnceLock<Option<Implementation>>,
}

#[derive(Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

impl RequestInfo {
    /// What `session` knows of `request`, before its handler runs; takes the request's
    /// params (their `_meta` is decoded only if a handler asks)
    pub fn new(request: &mut InboundRequest, session: &ServerSession) -> Self {
        let peer = match request.version.era() {
            Era::Legacy => session.peer_shared(),
            _ => None,
        };
        Self {
            version: request.version,
            caller: request.caller.clone(),
            params: request.params.take(),
            meta: OnceLock::new(),
            peer,
            capabilities: Arc::clone(&request.peer_capabilities),
            client_info: OnceLock::new(),
        }
    }

    /// The verified principal of the request's access token (subject, client id, scopes,
    /// claims); `None` on an unprotected server
    pub fn principal(&self) -> Option<&Principal> {
        self.caller.as_ref()?.principal.as_ref()
    }

    /// Everything the binding said about the sender
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.as_deref()
    }

    /// The HTTP request's header fields, in order; `None` when it did not come over HTTP
    pub fn headers(&self) -> Option<&HeaderFields> {
        self.caller.as_ref()?.headers.as_ref()
    }

    /// The first value of HTTP header `name` (ASCII case-insensitive)
    pub fn header(&self, name: &str) -> Option<&str> {
        self.caller.as_ref()?.header(name)
    }

    /// The request's `params._meta`, if it had one
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta
            .get_or_init(|| self.params.as_deref().and_then(meta_of))
            .as_ref()
    }

    /// The request's params as the client sent them (raw JSON; a handler's arguments were
    /// read from them)
    pub fn params(&self) -> Option<&RawValue> {
        self.params.as_deref()
    }

    /// The client's name and version: from `initialize` (2025 sessions) or the request's
    /// `_meta` (2026, when the client sent it)
    pub fn client_info(&self) -> Option<&Implementation> {
        if let Some(peer) = &self.peer {
            return peer.info.as_ref();
        }
        self.client_info
            .get_or_init(|| {
                let info = self.meta()?.get(CLIENT_INFO)?;
                serde_json::from_value(info.clone()).ok()
            })
            .as_ref()
    }

    /// The client's capabilities: the session's (2025) or this request's (2026)
    pub fn client_capabilities(&self) -> &Value {
        match &self.peer {
            Some(peer) => &peer.capabilities,
            None => &self.capabilities,
        }
    }

    /// The protocol version of the request
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The era of that version
    pub fn era(&self) -> Era {
        self.version.era()
    }

    /// The 2025 wire's `Mcp-Session-Id` the request came in
    pub fn session_id(&self) -> Option<&str> {
        self.caller.as_ref()?.session_id.as_deref()
    }
}

/// The `_meta` of a request's params, without decoding the rest
fn meta_of(params: &RawValue) -> Option<Map<String, Value>> {
    let text = params.get();
    if !text.contains("\"_meta\"") {
        return None;
    }
    serde_json::from_str::<MetaOnly>(text).ok()?.meta
}
