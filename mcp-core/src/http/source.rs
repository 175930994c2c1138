//! Who sent a request, as the binding knows it: the connection it came on (the in-flight
//! caps count by it) and the verified principal of its access token (a 2025 session is
//! bound to the principal that created it)

use core::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use crate::session::{Caller, HeaderFields};

/// Where an HTTP request came from: give one to every
/// [`HttpServer::handle_request`](super::HttpServer::handle_request)
///
/// `peer` is the client's socket address of the TCP connection the request came on (one
/// connection, one address while it is open); [`Source::unknown`] when the binding does not
/// know it (a mounted service without one), and then only the endpoint-wide cap applies.
/// `principal` is who the access token belongs to, for a protected server; `None` without
/// authorization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Source {
    /// The client's address on the connection the request came on
    pub peer: Option<SocketAddr>,
    /// The verified principal of the request's access token
    pub principal: Option<Principal>,
    /// The request's header fields, in order, for the handlers to read
    /// ([`Caller::headers`](crate::session::Caller::headers)); `None` keeps them from the
    /// handlers
    pub headers: Option<HeaderFields>,
}

impl Source {
    /// A request whose connection is not known, without authorization
    pub fn unknown() -> Self {
        Self::default()
    }

    /// A request on the connection from `peer`, without authorization
    pub fn from_peer(peer: SocketAddr) -> Self {
        Self {
            peer: Some(peer),
            principal: None,
            headers: None,
        }
    }

    /// The same source with the principal of its verified access token
    #[must_use]
    pub fn with_principal(mut self, principal: Option<Principal>) -> Self {
        self.principal = principal;
        self
    }

    /// The same source with the request's header fields, which its handlers can read
    #[must_use]
    pub fn with_headers(mut self, headers: impl Into<HeaderFields>) -> Self {
        self.headers = Some(headers.into());
        self
    }

    /// The caller a session sees for this request, in the 2025 session `session_id`;
    /// `None` when there is nothing to tell
    pub(crate) fn caller(&self, session_id: Option<&str>) -> Option<Arc<Caller>> {
        if self.principal.is_none() && self.headers.is_none() && session_id.is_none() {
            return None;
        }
        Some(Arc::new(Caller {
            principal: self.principal.clone(),
            headers: self.headers.clone(),
            session_id: session_id.map(str::to_owned),
        }))
    }

    /// What the in-flight caps count this request under
    pub(crate) fn ticket(&self) -> Ticket {
        Ticket {
            connection: self.peer,
            peer: self.peer.map(|a| peer_key(a.ip())),
            principal: self.principal.clone().map(Arc::new),
        }
    }
}

pub use crate::session::Principal;

/// The keys a request in progress is counted under; released with it
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub(crate) connection: Option<SocketAddr>,
    pub(crate) peer: Option<IpAddr>,
    pub(crate) principal: Option<Arc<Principal>>,
}

/// A client address as the per-peer cap sees it: an IPv4 address (also when mapped into
/// IPv6), or the /64 network of an IPv6 address (one host usually holds a whole /64)
fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_are_v4_addresses_or_v6_networks() {
        let key = |s: &str| Source::from_peer(s.parse().unwrap()).ticket().peer.unwrap();
        assert_eq!(key("10.0.0.1:5"), key("10.0.0.1:6"));
        assert_ne!(key("10.0.0.1:5"), key("10.0.0.2:5"));
        assert_eq!(key("[::ffff:10.0.0.1]:5"), key("10.0.0.1:9"));
        assert_eq!(key("[2001:db8:1:2::1]:5"), key("[2001:db8:1:2:ffff::9]:7"));
        assert_ne!(key("[2001:db8:1:2::1]:5"), key("[2001:db8:1:3::1]:5"));
        assert_eq!(Source::unknown().ticket().peer, None);
    }
}
