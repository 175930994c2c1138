//! Protocol versions and the two eras they belong to
//!
//! MCP versions are dated strings. Versions up to 2025-11-25 form the *legacy* era (an
//! `initialize` handshake fixes one version for the connection); 2026-07-28 and later form the
//! *modern* era (every request names its version in `_meta`). The `draft` schema uses the same
//! wire string as 2026-07-28, so it needs no variant of its own.

use std::fmt;

/// One MCP protocol version this library speaks
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`, the first published version
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, JSON-RPC batches, tool annotations
    V2025_03_26,
    /// `2025-06-18`: elicitation, structured tool output; batches removed
    V2025_06_18,
    /// `2025-11-25`: tasks, URL elicitation, sampling with tools
    V2025_11_25,
    /// `2026-07-28`: no handshake, per-request `_meta`, `server/discover`, multi-round-trip input
    V2026_07_28,
}

/// Which lifecycle a version uses
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// `initialize` / `notifications/initialized`, one version per connection
    Legacy,
    /// No handshake; every request carries its version and the client's capabilities
    Modern,
}

impl ProtocolVersion {
    /// Every version, oldest first
    pub const ALL: [Self; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The newest version of the legacy (`initialize`) era
    pub const LATEST_LEGACY: Self = Self::V2025_11_25;

    /// The newest version of all
    pub const LATEST: Self = Self::V2026_07_28;

    /// The version's wire string, e.g. `"2025-11-25"`
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string; `None` for a version this library does not know
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The lifecycle this version uses
    pub const fn era(self) -> Era {
        match self {
            Self::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// Whether JSON-RPC batches (arrays of messages) are allowed: only 2025-03-26 had them
    pub(crate) const fn allows_batches(self) -> bool {
        matches!(self, Self::V2025_03_26)
    }

    /// Whether an error response whose request id is unknown may omit `id`
    ///
    /// Schemas before 2025-11-25 require an `id` member, so there the id is written as `null`.
    pub(crate) const fn omits_unknown_error_id(self) -> bool {
        matches!(self, Self::V2025_11_25 | Self::V2026_07_28)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip_and_order_by_date() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert!(ProtocolVersion::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ProtocolVersion::parse("2099-01-01"), None);
        assert_eq!(ProtocolVersion::LATEST.era(), Era::Modern);
        assert_eq!(ProtocolVersion::LATEST_LEGACY.era(), Era::Legacy);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
    }
}
