//! Lifecycle messages: `initialize` (legacy era) and `server/discover` (modern era)

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Icon, MetaParams};
use super::fit::FitVersion;
use crate::{Era, ProtocolVersion};

/// Reserved `_meta` keys of the modern era
pub mod meta {
    /// The protocol version a modern request uses (required on every client request)
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities for this request (required on every client request)
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's implementation info (optional, recommended)
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The server's implementation info on results (optional, recommended)
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The log level a client opts into for one request
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// The subscription a notification was delivered on
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// The progress token of a request (all eras)
    pub const PROGRESS_TOKEN: &str = "progressToken";
}

/// Name and version of an MCP implementation (`clientInfo`, `serverInfo`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Implementation {
    /// Programmatic name
    pub name: String,
    /// Version of the implementation
    pub version: String,
    /// Human-readable name
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its website (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// An implementation with a name and a version
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: None,
            extra: Map::new(),
        }
    }
}

/// Params of the legacy `initialize` request
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeParams {
    /// The newest version the client supports
    pub protocol_version: String,
    /// The client's capabilities (a JSON object)
    #[serde(default = "empty_object")]
    pub capabilities: Value,
    /// The client's implementation info
    pub client_info: Implementation,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of the legacy `initialize` request
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// The version the server chose
    pub protocol_version: String,
    /// The server's capabilities (a JSON object)
    #[serde(default = "empty_object")]
    pub capabilities: Value,
    /// The server's implementation info
    pub server_info: Implementation,
    /// Guidance for the model using this server
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of the modern `server/discover` request
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// Versions the server accepts per request
    pub supported_versions: Vec<String>,
    /// The server's capabilities (a JSON object)
    #[serde(default = "empty_object")]
    pub capabilities: Value,
    /// Guidance for the model using this server
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Every other field (`resultType`, `ttlMs`, `cacheScope`, `_meta`, ...), kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl DiscoverResult {
    /// The server's implementation info, from `_meta` (or a top-level `serverInfo`, which
    /// some servers send)
    pub(crate) fn server_info(&self) -> Option<Implementation> {
        let from_meta = self
            .extra
            .get("_meta")
            .and_then(|m| m.get(meta::SERVER_INFO));
        from_meta
            .or_else(|| self.extra.get("serverInfo"))
            .and_then(|v| Implementation::deserialize(v).ok())
    }
}

impl FitVersion for InitializeResult {
    fn fit_to(&mut self, _version: ProtocolVersion) {}
}

impl FitVersion for DiscoverResult {
    /// Sets `resultType: "complete"` when missing (the caching hints are the caller's)
    fn fit_to(&mut self, version: ProtocolVersion) {
        if version.era() == Era::Modern {
            self.extra
                .entry("resultType")
                .or_insert_with(|| Value::from("complete"));
        }
    }
}

/// Params of `server/discover`: only `_meta`
pub type DiscoverParams = MetaParams;

/// Params of `ping`: only `_meta`
pub type PingParams = MetaParams;

/// Params of `notifications/initialized`: only `_meta`
pub type InitializedParams = MetaParams;

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Whether a capabilities object declares the capability at `path`
///
/// `has_capability(caps, &["resources", "subscribe"])` is true when `caps.resources.subscribe`
/// is present and not `false` or `null`.
pub fn has_capability(capabilities: &Value, path: &[&str]) -> bool {
    let mut v = capabilities;
    for key in path {
        match v.get(key) {
            Some(next) => v = next,
            None => return false,
        }
    }
    !matches!(v, Value::Null | Value::Bool(false))
}

super::fit::same_in_every_version!(InitializeParams, Implementation);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capability_paths() {
        let caps = json!({"tools": {}, "resources": {"subscribe": true, "listChanged": false}});
        assert!(has_capability(&caps, &["tools"]));
        assert!(has_capability(&caps, &["resources", "subscribe"]));
        assert!(!has_capability(&caps, &["resources", "listChanged"]));
        assert!(!has_capability(&caps, &["prompts"]));
    }

    #[test]
    fn unknown_fields_survive() {
        let text = r#"{"protocolVersion":"2025-11-25","capabilities":{"x":{}},"clientInfo":{"name":"c","version":"1","icons":[]},"future":1}"#;
        let p: InitializeParams = serde_json::from_str(text).unwrap();
        assert_eq!(p.extra["future"], 1);
        assert_eq!(p.client_info.icons, Some(vec![]));
        let back: Value = serde_json::to_value(&p).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn discover_server_info_from_meta_or_body() {
        let r: DiscoverResult = serde_json::from_value(json!({
            "supportedVersions": ["2026-07-28"], "capabilities": {},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        }))
        .unwrap();
        assert_eq!(r.server_info().unwrap().name, "s");
        let r: DiscoverResult = serde_json::from_value(json!({
            "supportedVersions": [], "serverInfo": {"name": "t", "version": "2"}
        }))
        .unwrap();
        assert_eq!(r.server_info().unwrap().name, "t");
    }
}
