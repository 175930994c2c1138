//! The lifecycle of both eras: the legacy `initialize` handshake, modern discovery, and the
//! phases a session goes through
//!
//! Client: `Discovering` (modern probe) or `Initializing` (legacy handshake), then `Ready`.
//! Server: `Fresh` serves modern requests statelessly and waits for a possible `initialize`;
//! `initialize` moves it to `Initialized`, and `notifications/initialized` to `Ready`.
//! Both end in `Closed`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;

use super::outbound_table::{OutEntry, Owner};
use super::phase::{PeerInfo, Phase};
use super::{
    Answer, CallError, ClientConfig, CloseReason, Core, EraMode, Event, ServerConfig, Side,
};
use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::schema::{DiscoverResult, InitializeParams, InitializeResult, meta};
use crate::version::{Era, ProtocolVersion};

/// How many `server/discover` attempts a client makes (a retry follows -32022 naming another
/// modern version we know)
const MAX_DISCOVER_ATTEMPTS: u8 = 2;

impl Core {
    /// A client's configuration (`None` on a server, whose steps never ask)
    pub(super) fn client_config(&self) -> Option<Arc<ClientConfig>> {
        match &self.role {
            Side::Client(c) => Some(Arc::clone(c)),
            Side::Server(_) => None,
        }
    }

    /// A server's configuration (`None` on a client, whose steps never ask)
    pub(super) fn server_config(&self) -> Option<&ServerConfig> {
        match &self.role {
            Side::Server(s) => Some(s),
            Side::Client(_) => None,
        }
    }

    /// Sends a lifecycle request owned by the core
    fn send_lifecycle(
        &mut self,
        owner: Owner,
        method: &str,
        params: String,
        timeout: Option<Duration>,
    ) {
        let params = RawValue::from_string(params).expect("built from a Value");
        let entry = OutEntry::with_timeout(owner, method, None, self.now, timeout);
        let wire = self.outbound.insert(entry);
        let id = RequestId::Number(i64::try_from(wire.0).expect("small"));
        let out = self.out.start();
        jsonrpc::write_request(out, &id, method, Some(&params));
        self.out.finish();
    }

    /// Client: sends `initialize` offering `version`
    pub(super) fn start_initialize(&mut self, version: ProtocolVersion) {
        let Some(config) = self.client_config() else {
            return;
        };
        let params = serde_json::json!({
            "protocolVersion": version.as_str(),
            "capabilities": config.capabilities,
            "clientInfo": config.info,
        })
        .to_string();
        let timeout = config.timeouts.request;
        self.phase = Phase::Initializing {
            fallback: config.era == EraMode::Auto,
        };
        self.send_lifecycle(Owner::Initialize, "initialize", params, timeout);
    }

    /// Client: sends `server/discover` in `version`
    pub(super) fn start_discover(&mut self, version: ProtocolVersion, attempt: u8) {
        let Some(config) = self.client_config() else {
            return;
        };
        let timeout = match config.era {
            EraMode::Auto => Some(config.discover_timeout),
            _ => config.timeouts.request,
        };
        self.send_discover(version, attempt, timeout);
    }

    /// Client: sends `server/discover` in `version` with `timeout`
    fn send_discover(&mut self, version: ProtocolVersion, attempt: u8, timeout: Option<Duration>) {
        let Some(config) = self.client_config() else {
            return;
        };
        let params = serde_json::json!({
            "_meta": {
                meta::PROTOCOL_VERSION: version.as_str(),
                meta::CLIENT_CAPABILITIES: config.capabilities,
                meta::CLIENT_INFO: config.info,
            }
        })
        .to_string();
        self.phase = Phase::Discovering { version, attempt };
        self.send_lifecycle(Owner::Discover, "server/discover", params, timeout);
    }

    fn become_ready(&mut self, peer: PeerInfo) {
        let version = peer.version;
        self.peer = Some(Arc::new(peer));
        self.phase = Phase::Ready { version };
        self.events.push_back(Event::Ready { version });
    }

    /// Client: the answer to `initialize`
    pub(super) fn client_initialize_answered(&mut self, outcome: Result<Box<RawValue>, CallError>) {
        if let Phase::Initializing { fallback: true } = self.phase
            && let Err(CallError::Remote(error)) = &outcome
            && error.code == jsonrpc::code::UNSUPPORTED_PROTOCOL_VERSION
        {
            // `Auto` gave up on a slow `server/discover`, but the server answered it late and
            // now speaks the modern era only: discover again, patiently, once.
            let supported = supported_versions(error);
            let version = pick_modern(supported.iter().map(String::as_str))
                .unwrap_or(ProtocolVersion::LATEST);
            if version.era() == Era::Modern
                && let Some(config) = self.client_config()
            {
                let timeout = config.timeouts.request;
                return self.send_discover(version, MAX_DISCOVER_ATTEMPTS - 1, timeout);
            }
        }
        let result = match outcome {
            Ok(raw) => serde_json::from_str::<InitializeResult>(raw.get())
                .map_err(|e| format!("the initialize result is invalid: {e}")),
            // A local failure, not the server's answer: the connection's own reason.
            Err(CallError::Transport(why)) => return self.close(CloseReason::Transport(why)),
            Err(CallError::Remote(error)) => Err(format!("the server refused initialize: {error}")),
            Err(e) => Err(format!("initialize failed: {e}")),
        };
        let result = match result {
            Ok(r) => r,
            Err(why) => return self.close(CloseReason::Handshake(why)),
        };
        let version =
            ProtocolVersion::parse(&result.protocol_version).filter(|v| v.era() == Era::Legacy);
        let Some(version) = version else {
            return self.close(CloseReason::Handshake(format!(
                "the server chose protocol version {:?}, which this client does not support",
                result.protocol_version
            )));
        };
        let out = self.out.start();
        jsonrpc::write_notification(out, "notifications/initialized", None);
        self.out.finish();
        self.become_ready(PeerInfo {
            version,
            info: Some(result.server_info),
            capabilities: Arc::new(result.capabilities),
            instructions: result.instructions,
        });
    }

    /// Client: the answer to `server/discover`
    pub(super) fn client_discover_answered(&mut self, outcome: Result<Box<RawValue>, CallError>) {
        let Phase::Discovering { attempt, .. } = self.phase else {
            return;
        };
        match outcome {
            Ok(raw) => match serde_json::from_str::<DiscoverResult>(raw.get()) {
                Ok(result) => {
                    let best = pick_modern(result.supported_versions.iter().map(String::as_str));
                    match best {
                        Some(version) => {
                            let info = result.server_info();
                            self.become_ready(PeerInfo {
                                version,
                                info,
                                capabilities: Arc::new(result.capabilities),
                                instructions: result.instructions,
                            });
                        }
                        None => self.client_discover_failed(&format!(
                            "the server supports none of this client's modern protocol versions \
                             (it offers {:?})",
                            result.supported_versions
                        )),
                    }
                }
                Err(e) => self
                    .client_discover_failed(&format!("the server/discover result is invalid: {e}")),
            },
            Err(CallError::Remote(error)) => {
                if error.code == jsonrpc::code::UNSUPPORTED_PROTOCOL_VERSION
                    && attempt + 1 < MAX_DISCOVER_ATTEMPTS
                {
                    let supported = supported_versions(&error);
                    if let Some(version) = pick_modern(supported.iter().map(String::as_str)) {
                        return self.start_discover(version, attempt + 1);
                    }
                }
                self.client_discover_failed(&format!(
                    "the server refused server/discover: {error}"
                ));
            }
            // `Auto` falls back to `initialize` (a server of the handshake era may answer
            // `server/discover` with an HTTP error or no answer at all); an unreachable
            // server fails that too, with the transport's own reason.
            Err(CallError::Transport(why)) => match self.client_config().map(|c| c.era) {
                Some(EraMode::Auto) => self.start_initialize(ProtocolVersion::LATEST_LEGACY),
                _ => self.close(CloseReason::Transport(why)),
            },
            Err(e) => self.client_discover_failed(&format!("server/discover failed: {e}")),
        }
    }

    /// Client: discovery failed; `Auto` falls back to `initialize`, `Modern` closes
    pub(super) fn client_discover_failed(&mut self, why: &str) {
        match self.client_config().map(|c| c.era) {
            Some(EraMode::Auto) => self.start_initialize(ProtocolVersion::LATEST_LEGACY),
            _ => self.close(CloseReason::Handshake(why.to_owned())),
        }
    }

    /// Server: answers `initialize` and fixes the legacy version
    pub(super) fn server_initialize(&mut self, request: jsonrpc::Request, batch: Option<u32>) {
        let id = &request.id;
        if batch.is_some() {
            let error =
                ErrorObject::invalid_request("initialize must not be part of a JSON-RPC batch");
            return self.answer(Some(id), batch, Answer::Error(&error));
        }
        let params = request.params.as_deref().map_or("{}", RawValue::get);
        let params = match serde_json::from_str::<InitializeParams>(params) {
            Ok(p) => p,
            Err(e) => {
                let error = ErrorObject::invalid_params(format!("invalid initialize params: {e}"));
                return self.answer(Some(id), batch, Answer::Error(&error));
            }
        };
        let Some(config) = self.server_config() else {
            return;
        };
        let legacy = || {
            config
                .versions
                .iter()
                .copied()
                .filter(|v| v.era() == Era::Legacy)
        };
        let requested = ProtocolVersion::parse(&params.protocol_version);
        let version = legacy()
            .find(|v| Some(*v) == requested)
            .or_else(|| legacy().max());
        let Some(version) = version else {
            let error = self.unsupported_version_error(&params.protocol_version);
            return self.answer(Some(id), batch, Answer::Error(&error));
        };
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: config.capabilities.clone(),
            server_info: config.info.clone(),
            instructions: config.instructions.clone(),
            extra: serde_json::Map::new(),
        };
        let result = serde_json::to_string(&result).expect("serializes");
        self.answer(Some(id), batch, Answer::Result(&result));
        self.peer = Some(Arc::new(PeerInfo {
            version,
            info: Some(params.client_info),
            capabilities: Arc::new(params.capabilities),
            instructions: None,
        }));
        self.phase = Phase::Initialized { version };
    }

    /// Server: answers a modern `server/discover`
    pub(super) fn server_discover(&mut self, id: &RequestId, batch: Option<u32>) {
        let Some(config) = self.server_config() else {
            return;
        };
        // The 2025-11-25 `tasks` slot is not a 2026 capability (tasks are the
        // `io.modelcontextprotocol/tasks` extension there): a server declaring both eras'
        // tasks shows each era its own
        let mut capabilities = config.capabilities.clone();
        if let Some(caps) = capabilities.as_object_mut() {
            caps.remove("tasks");
        }
        let mut result = serde_json::json!({
            "supportedVersions": self.modern_versions(),
            "capabilities": capabilities,
            "ttlMs": 0,
            "cacheScope": "public",
        });
        if let Some(instructions) = &config.instructions {
            result["instructions"] = instructions.clone().into();
        }
        let result = result.to_string();
        self.answer(Some(id), batch, Answer::ModernResult(&result));
    }

    /// The modern versions this server accepts, newest first
    fn modern_versions(&self) -> Vec<&'static str> {
        let Some(config) = self.server_config() else {
            return Vec::new();
        };
        let mut versions: Vec<_> = config
            .versions
            .iter()
            .filter(|v| v.era() == Era::Modern)
            .copied()
            .collect();
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.into_iter().map(ProtocolVersion::as_str).collect()
    }

    /// -32022 naming what we support and what was asked for
    pub(super) fn unsupported_version_error(&self, requested: &str) -> ErrorObject {
        let mut supported = self.modern_versions();
        if supported.is_empty() {
            supported = self
                .server_config()
                .into_iter()
                .flat_map(|c| c.versions.iter())
                .rev()
                .map(|v| v.as_str())
                .collect();
        }
        ErrorObject::new(
            jsonrpc::code::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {requested}"),
        )
        .with_data(&serde_json::json!({ "supported": supported, "requested": requested }))
    }
}

/// The newest modern version in `offered` that this library speaks
fn pick_modern<'a>(offered: impl Iterator<Item = &'a str>) -> Option<ProtocolVersion> {
    offered
        .filter_map(ProtocolVersion::parse)
        .filter(|v| v.era() == Era::Modern)
        .max()
}

/// The versions a -32022 error's `data.supported` lists (none when it lists none)
fn supported_versions(error: &ErrorObject) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Data {
        supported: Vec<String>,
    }
    error
        .data::<Data>()
        .and_then(Result::ok)
        .map(|d| d.supported)
        .unwrap_or_default()
}
