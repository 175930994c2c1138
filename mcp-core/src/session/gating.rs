//! Which methods each side may send, in which era, and the capability each one needs

use crate::version::{Era, ProtocolVersion};

/// A capability path and its dotted name for messages
#[derive(Debug)]
pub(crate) struct Capability {
    pub(crate) path: &'static [&'static str],
    pub(crate) name: &'static str,
}

const fn cap(path: &'static [&'static str], name: &'static str) -> Option<Capability> {
    Some(Capability { path, name })
}

/// What the spec says of a method in one version and direction
#[derive(Debug)]
pub(crate) enum Gate {
    /// A method of this version and direction, with the capability it needs, if any
    Known(Option<Capability>),
    /// A method of MCP, but not of this version and direction
    NotInEra,
    /// Not an MCP method: a custom extension
    Unknown,
}

/// Requests a client sends, with the server capability each needs
pub(crate) fn client_request(method: &str, version: ProtocolVersion) -> Gate {
    let modern = version.era() == Era::Modern;
    Gate::Known(match method {
        "ping"
        | "initialize"
        | "logging/setLevel"
        | "resources/subscribe"
        | "resources/unsubscribe"
            if modern =>
        {
            return Gate::NotInEra;
        }
        "server/discover" | "subscriptions/listen" if !modern => return Gate::NotInEra,
        "ping" | "initialize" | "server/discover" | "subscriptions/listen" => None,
        "tools/list" | "tools/call" => cap(&["tools"], "tools"),
        "resources/list" | "resources/read" | "resources/templates/list" => {
            cap(&["resources"], "resources")
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            cap(&["resources", "subscribe"], "resources.subscribe")
        }
        "prompts/list" | "prompts/get" => cap(&["prompts"], "prompts"),
        "logging/setLevel" => cap(&["logging"], "logging"),
        // 2024-11-05 had no `completions` capability: servers offering prompts or resource
        // templates answered completion requests.
        "completion/complete" if version == ProtocolVersion::V2024_11_05 => None,
        "completion/complete" => cap(&["completions"], "completions"),
        _ if !exists_in(method, version) => return Gate::NotInEra,
        // The tasks extension (2026) dropped these two; its methods are gated by the
        // extension, which the core checks itself.
        "tasks/result" | "tasks/list" if modern => return Gate::NotInEra,
        "tasks/get" | "tasks/cancel" | "tasks/update" if modern => None,
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" => cap(&["tasks"], "tasks"),
        "sampling/createMessage" | "elicitation/create" | "roots/list" => return Gate::NotInEra,
        _ => return Gate::Unknown,
    })
}

/// Requests a server sends (legacy era only), with the client capability each needs
pub(crate) fn server_request(method: &str, version: ProtocolVersion) -> Gate {
    let known = matches!(
        method,
        "ping"
            | "sampling/createMessage"
            | "elicitation/create"
            | "roots/list"
            | "tasks/get"
            | "tasks/result"
            | "tasks/list"
            | "tasks/cancel"
    );
    if version.era() == Era::Modern {
        return if known { Gate::NotInEra } else { Gate::Unknown };
    }
    if !exists_in(method, version) {
        return Gate::NotInEra;
    }
    Gate::Known(match method {
        "ping" => None,
        "sampling/createMessage" => cap(&["sampling"], "sampling"),
        "elicitation/create" => cap(&["elicitation"], "elicitation"),
        "roots/list" => cap(&["roots"], "roots"),
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" => cap(&["tasks"], "tasks"),
        _ if client_request(method, version).is_known() => return Gate::NotInEra,
        _ => return Gate::Unknown,
    })
}

/// Whether a legacy-era method exists in `version`: some arrived after 2024-11-05
fn exists_in(method: &str, version: ProtocolVersion) -> bool {
    let since = match method {
        "elicitation/create" => ProtocolVersion::V2025_06_18,
        "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" => {
            ProtocolVersion::V2025_11_25
        }
        "tasks/update" => return version.era() == Era::Modern,
        _ => return true,
    };
    version.era() == Era::Modern || version >= since
}

impl Gate {
    fn is_known(&self) -> bool {
        matches!(self, Self::Known(_))
    }

    /// The capability, for known gated methods
    #[cfg(test)]
    fn capability(&self) -> Option<&'static str> {
        match self {
            Self::Known(Some(c)) => Some(c.name),
            _ => None,
        }
    }
}

/// Notifications the core sends and consumes itself; the application may not send them
pub(crate) fn core_owned_notification(method: &str) -> bool {
    matches!(
        method,
        "notifications/initialized" | "notifications/cancelled" | "notifications/progress"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_removed_methods_are_not_in_era() {
        let v = ProtocolVersion::V2026_07_28;
        for m in [
            "ping",
            "initialize",
            "logging/setLevel",
            "resources/subscribe",
        ] {
            assert!(matches!(client_request(m, v), Gate::NotInEra), "{m}");
        }
        assert!(client_request("server/discover", v).is_known());
        assert!(matches!(
            server_request("sampling/createMessage", v),
            Gate::NotInEra
        ));
        assert!(matches!(server_request("x/custom", v), Gate::Unknown));
    }

    #[test]
    fn legacy_gates() {
        let v = ProtocolVersion::V2025_11_25;
        assert_eq!(client_request("tools/call", v).capability(), Some("tools"));
        assert!(matches!(
            client_request("server/discover", v),
            Gate::NotInEra
        ));
        assert!(client_request("completion/complete", ProtocolVersion::V2024_11_05).is_known());
        assert_eq!(
            client_request("completion/complete", ProtocolVersion::V2024_11_05).capability(),
            None
        );
        assert_eq!(server_request("roots/list", v).capability(), Some("roots"));
        assert!(matches!(server_request("tools/call", v), Gate::NotInEra));
        assert!(matches!(
            client_request("sampling/createMessage", v),
            Gate::NotInEra
        ));
        assert!(matches!(client_request("nope/nope", v), Gate::Unknown));
    }
}
