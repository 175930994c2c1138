//! Which methods each side may send, in which era, and the capability each one needs

use crate::version::ProtocolVersion;

/// A capability path and its dotted name for messages
#[derive(Debug, Clone, Copy)]
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

/// Who sends a request
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sender {
    Client,
    Server,
}

use ProtocolVersion::{V2024_11_05 as V1, V2025_03_26 as V2, V2025_06_18 as V3};
use ProtocolVersion::{V2025_11_25 as V4, V2026_07_28 as V5};
use Sender::{Client as C, Server as S};

const TOOLS: Option<Capability> = cap(&["tools"], "tools");
const RESOURCES: Option<Capability> = cap(&["resources"], "resources");
const SUBSCRIBE: Option<Capability> = cap(&["resources", "subscribe"], "resources.subscribe");
const PROMPTS: Option<Capability> = cap(&["prompts"], "prompts");
const LOGGING: Option<Capability> = cap(&["logging"], "logging");
const COMPLETIONS: Option<Capability> = cap(&["completions"], "completions");
const TASKS: Option<Capability> = cap(&["tasks"], "tasks");
const SAMPLING: Option<Capability> = cap(&["sampling"], "sampling");
const ELICITATION: Option<Capability> = cap(&["elicitation"], "elicitation");
const ROOTS: Option<Capability> = cap(&["roots"], "roots");

/// Every request method of MCP: who sends it, the versions it exists in (first and last,
/// inclusive) and the capability the receiver must have declared. A method whose capability
/// changed between versions has one row per span.
///
/// Server-to-client requests stop at 2025-11-25: from 2026-07-28 a server asks for input
/// inside its results. The tasks extension (2026) dropped `tasks/result` and `tasks/list`
/// and gates its methods by the extension, which the core checks itself. 2024-11-05 had no
/// `completions` capability: servers offering prompts or resource templates answered
/// completion requests.
#[rustfmt::skip]
const TABLE: &[(&str, Sender, ProtocolVersion, ProtocolVersion, Option<Capability>)] = &[
    ("ping",                     C, V1, V4, None),
    ("initialize",               C, V1, V4, None),
    ("server/discover",          C, V5, V5, None),
    ("subscriptions/listen",     C, V5, V5, None),
    ("tools/list",               C, V1, V5, TOOLS),
    ("tools/call",               C, V1, V5, TOOLS),
    ("resources/list",           C, V1, V5, RESOURCES),
    ("resources/read",           C, V1, V5, RESOURCES),
    ("resources/templates/list", C, V1, V5, RESOURCES),
    ("resources/subscribe",      C, V1, V4, SUBSCRIBE),
    ("resources/unsubscribe",    C, V1, V4, SUBSCRIBE),
    ("prompts/list",             C, V1, V5, PROMPTS),
    ("prompts/get",              C, V1, V5, PROMPTS),
    ("logging/setLevel",         C, V1, V4, LOGGING),
    ("completion/complete",      C, V1, V1, None),
    ("completion/complete",      C, V2, V5, COMPLETIONS),
    ("tasks/get",                C, V4, V4, TASKS),
    ("tasks/get",                C, V5, V5, None),
    ("tasks/cancel",             C, V4, V4, TASKS),
    ("tasks/cancel",             C, V5, V5, None),
    ("tasks/result",             C, V4, V4, TASKS),
    ("tasks/list",               C, V4, V4, TASKS),
    ("tasks/update",             C, V5, V5, None),
    ("ping",                     S, V1, V4, None),
    ("sampling/createMessage",   S, V1, V4, SAMPLING),
    ("elicitation/create",       S, V3, V4, ELICITATION),
    ("roots/list",               S, V1, V4, ROOTS),
    ("tasks/get",                S, V4, V4, TASKS),
    ("tasks/result",             S, V4, V4, TASKS),
    ("tasks/list",               S, V4, V4, TASKS),
    ("tasks/cancel",             S, V4, V4, TASKS),
];

/// The spec's own name of a request method, when `method` is one (kept without copying)
pub(crate) fn static_name(method: &str) -> Option<&'static str> {
    TABLE.iter().map(|row| row.0).find(|m| *m == method)
}

/// What the spec says of a request `method` sent by `sender` in `version`: a row of
/// [`TABLE`] covering the version, or a method of MCP elsewhere in the table, or neither
pub(crate) fn request(sender: Sender, method: &str, version: ProtocolVersion) -> Gate {
    let mut of_mcp = false;
    for (m, s, from, to, capability) in TABLE {
        if *m != method {
            continue;
        }
        if *s == sender && (*from..=*to).contains(&version) {
            return Gate::Known(*capability);
        }
        of_mcp = true;
    }
    if of_mcp {
        Gate::NotInEra
    } else {
        Gate::Unknown
    }
}

impl Gate {
    #[cfg(test)]
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
            assert!(matches!(request(C, m, v), Gate::NotInEra), "{m}");
        }
        assert!(request(C, "server/discover", v).is_known());
        assert!(matches!(
            request(S, "sampling/createMessage", v),
            Gate::NotInEra
        ));
        assert!(matches!(request(S, "x/custom", v), Gate::Unknown));
    }

    #[test]
    fn legacy_gates() {
        let v = ProtocolVersion::V2025_11_25;
        assert_eq!(request(C, "tools/call", v).capability(), Some("tools"));
        assert!(matches!(request(C, "server/discover", v), Gate::NotInEra));
        assert!(request(C, "completion/complete", ProtocolVersion::V2024_11_05).is_known());
        assert_eq!(
            request(C, "completion/complete", ProtocolVersion::V2024_11_05).capability(),
            None
        );
        assert_eq!(request(S, "roots/list", v).capability(), Some("roots"));
        assert!(matches!(request(S, "tools/call", v), Gate::NotInEra));
        assert!(matches!(
            request(C, "sampling/createMessage", v),
            Gate::NotInEra
        ));
        assert!(matches!(request(C, "nope/nope", v), Gate::Unknown));
    }

    #[test]
    fn a_method_of_mcp_in_the_wrong_direction_is_not_in_era() {
        for v in ProtocolVersion::ALL {
            assert!(matches!(request(S, "tools/call", v), Gate::NotInEra), "{v}");
            assert!(
                matches!(request(S, "server/discover", v), Gate::NotInEra),
                "{v}"
            );
            assert!(matches!(request(C, "roots/list", v), Gate::NotInEra), "{v}");
            assert!(matches!(request(S, "x/custom", v), Gate::Unknown), "{v}");
        }
    }
}
