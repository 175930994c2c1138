//! The JSON configurations of `mcp_server_new` and `mcp_client_new`, as core configurations
//!
//! Unknown keys are refused with a message naming the key (serde's `deny_unknown_fields`).

use std::time::Duration;

use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::boundary::Failure;

/// Which eras a server serves
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ServerEra {
    /// Every version of both eras (the core's default)
    #[default]
    Both,
    /// The `initialize` handshake only (2024-11-05 to 2025-11-25)
    Legacy,
    /// Per-request `_meta` only (2026-07-28)
    Modern,
}

/// `mcp_server_new`'s JSON
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ServerJson {
    name: String,
    version: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default)]
    capabilities: Option<Map<String, Value>>,
    #[serde(default)]
    era: ServerEra,
    #[serde(default)]
    extra_methods: Vec<String>,
    #[serde(default)]
    request_timeout_ms: Option<u64>,
}

/// `mcp_client_new`'s JSON
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ClientJson {
    name: String,
    version: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    protocol_version: Option<String>,
    #[serde(default)]
    capabilities: Option<Map<String, Value>>,
    #[serde(default)]
    extra_methods: Vec<String>,
    #[serde(default)]
    request_timeout_ms: Option<u64>,
}

fn parse<T: for<'de> Deserialize<'de>>(json: &str, what: &str) -> Result<T, Failure> {
    serde_json::from_str(json).map_err(|e| Failure::json(format!("{what}: {e}")))
}

fn implementation(name: String, version: String, title: Option<String>) -> Implementation {
    let mut info = Implementation::new(name, version);
    info.title = title;
    info
}

/// 32 bytes of OS randomness (task ids and sealed state must be unguessable; the core has no
/// randomness of its own)
fn random_key() -> Result<[u8; 32], Failure> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| {
        Failure::state(format!(
            "the operating system gave no random bytes for the session's keys: {e}"
        ))
    })?;
    Ok(key)
}

/// A server configuration from `mcp_server_new`'s JSON
pub(crate) fn server(json: &str) -> Result<ServerConfig, Failure> {
    let parsed: ServerJson = parse(json, "server config")?;
    let mut config = ServerConfig::new(implementation(parsed.name, parsed.version, parsed.title));
    config.capabilities = match parsed.capabilities {
        Some(caps) => Value::Object(caps),
        None => json!({"tools": {}, "logging": {}}),
    };
    config.instructions = parsed.instructions;
    config.versions = ProtocolVersion::ALL
        .into_iter()
        .filter(|v| match parsed.era {
            ServerEra::Both => true,
            ServerEra::Legacy => v.era() == mcp_sansio::Era::Legacy,
            ServerEra::Modern => v.era() == mcp_sansio::Era::Modern,
        })
        .collect();
    config.extra_methods = parsed.extra_methods;
    if let Some(ms) = parsed.request_timeout_ms {
        config.timeouts.request = (ms > 0).then(|| Duration::from_millis(ms));
    }
    config.state_key = Some(random_key()?);
    config.task_id_key = random_key()?;
    let seed = random_key()?;
    config.task_id_seed = u64::from_le_bytes(seed[..8].try_into().unwrap_or_default());
    Ok(config)
}

/// A client configuration from `mcp_client_new`'s JSON
pub(crate) fn client(json: &str) -> Result<ClientConfig, Failure> {
    let parsed: ClientJson = parse(json, "client config")?;
    let mut config = ClientConfig::new(implementation(parsed.name, parsed.version, parsed.title));
    config.era = match parsed.protocol_version.as_deref() {
        None | Some("auto") => EraMode::Auto,
        Some("modern") => EraMode::Modern,
        Some("legacy") => EraMode::Legacy(ProtocolVersion::LATEST_LEGACY),
        Some(other) => match ProtocolVersion::parse(other) {
            Some(v) if v.era() == mcp_sansio::Era::Modern => EraMode::Modern,
            Some(v) => EraMode::Legacy(v),
            None => {
                return Err(Failure::json(format!(
                    "client config: unknown protocolVersion {other:?} (expected \"auto\", \
                     \"legacy\", \"modern\" or one of {})",
                    ProtocolVersion::ALL.map(ProtocolVersion::as_str).join(", ")
                )));
            }
        },
    };
    if let Some(caps) = parsed.capabilities {
        config.capabilities = Value::Object(caps);
    }
    config.extra_methods = parsed.extra_methods;
    if let Some(ms) = parsed.request_timeout_ms {
        config.timeouts.request = (ms > 0).then(|| Duration::from_millis(ms));
    }
    config.task_id_key = random_key()?;
    let seed = random_key()?;
    config.task_id_seed = u64::from_le_bytes(seed[..8].try_into().unwrap_or_default());
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_named() {
        let e = server(r#"{"name":"s","version":"1","colour":"red"}"#).unwrap_err();
        assert!(e.message.contains("colour"), "{}", e.message);
        let e = client(r#"{"name":"c","version":"1","protocolVersion":"1999-01-01"}"#).unwrap_err();
        assert!(e.message.contains("1999-01-01"), "{}", e.message);
    }

    #[test]
    fn eras_and_defaults() {
        let c = server(r#"{"name":"s","version":"1","era":"modern"}"#).unwrap();
        assert_eq!(c.versions, vec![ProtocolVersion::V2026_07_28]);
        assert_eq!(c.capabilities, json!({"tools": {}, "logging": {}}));
        assert_ne!(c.task_id_key, [0; 32]);
        let c = client(r#"{"name":"c","version":"1"}"#).unwrap();
        assert_eq!(c.era, EraMode::Auto);
        let c = client(r#"{"name":"c","version":"1","protocolVersion":"2025-06-18"}"#).unwrap();
        assert_eq!(c.era, EraMode::Legacy(ProtocolVersion::V2025_06_18));
    }
}
