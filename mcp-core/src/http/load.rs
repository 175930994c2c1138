//! The requests in progress, counted per connection, per client address and in all, and
//! the refusal when a request would go past a cap
//!
//! Caps, checked in this order: the session's own (2025 wire), the connection's, the
//! client address's, the principal's (429 `Too Many Requests`: this client has enough in
//! flight), then the
//! endpoint's (503 `Service Unavailable`: the server is full). Both refusals carry
//! `Retry-After` and a JSON-RPC error with the request's id. A request counts from the
//! moment it is admitted until its answer is queued, the client cancels it, or its
//! session ends.

use core::net::{IpAddr, SocketAddr};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::config::HttpConfig;
use super::response::HttpResponse;
use super::source::{Principal, Ticket};
use crate::id_map::shrink;
use crate::jsonrpc::{ErrorObject, RequestId};

/// The counters
#[derive(Debug, Default)]
pub(crate) struct Load {
    total: usize,
    by_connection: HashMap<SocketAddr, usize>,
    by_peer: HashMap<IpAddr, usize>,
    by_principal: HashMap<Arc<Principal>, usize>,
}

impl Load {
    /// Requests in progress in all
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// Whether one more request under `ticket` fits; `session` is the in-flight count of the
    /// 2025 session it goes to and that session's cap
    pub(crate) fn admit(
        &self,
        config: &HttpConfig,
        ticket: &Ticket,
        session: Option<(usize, usize)>,
        id: Option<&RequestId>,
    ) -> Result<(), HttpResponse> {
        let counts = Counts {
            connection: ticket
                .connection
                .map(|c| self.by_connection.get(&c).copied().unwrap_or(0)),
            peer: ticket
                .peer
                .map(|p| self.by_peer.get(&p).copied().unwrap_or(0)),
            principal: ticket
                .principal
                .as_ref()
                .map(|p| self.by_principal.get(&**p).copied().unwrap_or(0)),
        };
        check(config, self.total, &counts, session, id)
    }

    /// [`admit`](Self::admit), and when it fits counts the request: each counter looked up
    /// once (std's keyed hasher takes ~200 instructions for a client's address)
    pub(crate) fn take(
        &mut self,
        config: &HttpConfig,
        ticket: &Ticket,
        session: Option<(usize, usize)>,
        id: Option<&RequestId>,
    ) -> Result<(), HttpResponse> {
        let connection = ticket.connection.map(|c| self.by_connection.entry(c));
        let peer = ticket.peer.map(|p| self.by_peer.entry(p));
        let principal = ticket
            .principal
            .as_ref()
            .map(|p| self.by_principal.entry(Arc::clone(p)));
        let counts = Counts {
            connection: connection.as_ref().map(count),
            peer: peer.as_ref().map(count),
            principal: principal.as_ref().map(count),
        };
        let over = check(config, self.total, &counts, session, id);
        if over.is_ok() {
            self.total += 1;
            if let Some(n) = connection {
                *n.or_default() += 1;
            }
            if let Some(n) = peer {
                *n.or_default() += 1;
            }
            if let Some(n) = principal {
                *n.or_default() += 1;
            }
        }
        over
    }

    /// A request counted under `ticket` ended
    pub(crate) fn release(&mut self, ticket: &Ticket) {
        self.total = self.total.saturating_sub(1);
        if let Some(c) = ticket.connection {
            decrement(&mut self.by_connection, c);
        }
        if let Some(p) = ticket.peer {
            decrement(&mut self.by_peer, p);
        }
        if let Some(p) = &ticket.principal {
            decrement(&mut self.by_principal, Arc::clone(p));
        }
    }
}

/// The counters of one endpoint, shared by its [`HttpServer`](super::HttpServer) and its
/// [`Lane`](super::Lane)s: the caps hold for every request the endpoint serves, whichever
/// task serves it
///
/// A lock held only while a counter changes (never across anything else); the core makes
/// no thread, it is what lets connections on several of the binding's threads count in one
/// place.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharedLoad(Arc<Mutex<Load>>);

impl SharedLoad {
    /// The counters (a panic elsewhere while they were held leaves them usable: they are
    /// plain numbers)
    pub(crate) fn lock(&self) -> MutexGuard<'_, Load> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The in-flight counts of a ticket's connection, client address and principal (those it
/// has)
struct Counts {
    connection: Option<usize>,
    peer: Option<usize>,
    principal: Option<usize>,
}

/// The count under an entry (0 when vacant)
fn count<K>(entry: &Entry<'_, K, usize>) -> usize {
    match entry {
        Entry::Occupied(n) => *n.get(),
        Entry::Vacant(_) => 0,
    }
}

/// Whether one more request fits under `counts` and `total`, in the order of the module's
/// caps: the session's, the connection's, the address's, the principal's (429), then the
/// endpoint's (503)
fn check(
    config: &HttpConfig,
    total: usize,
    counts: &Counts,
    session: Option<(usize, usize)>,
    id: Option<&RequestId>,
) -> Result<(), HttpResponse> {
    let over = |n: Option<usize>, cap: usize| n.is_some_and(|n| n >= cap);
    let what = if session.is_some_and(|(n, cap)| n >= cap) {
        Some("this session")
    } else if over(counts.connection, config.max_in_flight_per_connection) {
        Some("this connection")
    } else if over(counts.peer, config.max_in_flight_per_peer) {
        Some("this client address")
    } else if over(counts.principal, config.max_in_flight_per_principal) {
        Some("this user")
    } else {
        None
    };
    if let Some(what) = what {
        let error = ErrorObject::internal_error(format!(
            "too many requests in progress from {what}; retry later"
        ));
        return Err(refusal(config, 429, id, &error));
    }
    if total >= config.max_in_flight {
        let error = ErrorObject::internal_error("the server is busy; retry later");
        return Err(refusal(config, 503, id, &error));
    }
    Ok(())
}

/// 429 or 503 with `Retry-After` (whole seconds, at least 1) and a JSON-RPC error
pub(crate) fn refusal(
    config: &HttpConfig,
    status: u16,
    id: Option<&RequestId>,
    error: &ErrorObject,
) -> HttpResponse {
    HttpResponse::json_error(status, id, error).with_header("Retry-After", retry_after(config))
}

/// [`HttpConfig::retry_after`] as a `Retry-After` value: whole seconds, at least 1
pub(crate) fn retry_after(config: &HttpConfig) -> String {
    let seconds = config.retry_after.as_secs_f64().ceil().max(1.0);
    format!("{seconds:.0}")
}

fn decrement<K: Hash + Eq>(map: &mut HashMap<K, usize>, key: K) {
    // One lookup (the key hashed once) whether the count stays or goes.
    if let Entry::Occupied(mut n) = map.entry(key) {
        *n.get_mut() -= 1;
        if *n.get() == 0 {
            n.remove();
            shrink(map);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::source::Source;

    fn ticket(addr: &str, user: Option<&str>) -> Ticket {
        Source::from_peer(addr.parse().expect("an address"))
            .with_principal(user.map(|u| Principal::new(Some(u.into()), None)))
            .ticket()
    }

    #[test]
    fn a_refused_take_counts_nothing_and_each_cap_refuses_in_its_order() {
        let config = HttpConfig {
            max_in_flight_per_connection: 2,
            max_in_flight_per_peer: 3,
            max_in_flight_per_principal: 4,
            max_in_flight: 5,
            ..HttpConfig::default()
        };
        let mut load = Load::default();
        let status = |r: Result<(), HttpResponse>| r.err().map(|r| r.status);
        let a1 = ticket("10.0.0.1:1", Some("ann"));
        let a2 = ticket("10.0.0.1:2", Some("ann"));
        let b = ticket("10.0.0.2:1", Some("ann"));
        let c = ticket("10.0.0.3:1", None);

        assert_eq!(status(load.take(&config, &a1, None, None)), None);
        assert_eq!(status(load.take(&config, &a1, None, None)), None);
        // The connection's cap; nothing was counted by the refusal.
        assert_eq!(status(load.take(&config, &a1, None, None)), Some(429));
        assert_eq!(load.by_connection.get(&a1.connection.unwrap()), Some(&2));
        assert_eq!(load.total(), 2);
        // The address's cap (another connection from it).
        assert_eq!(status(load.take(&config, &a2, None, None)), None);
        assert_eq!(status(load.take(&config, &a2, None, None)), Some(429));
        assert_eq!(load.by_peer.get(&a2.peer.unwrap()), Some(&3));
        // The principal's cap (from another address).
        assert_eq!(status(load.take(&config, &b, None, None)), None);
        assert_eq!(status(load.take(&config, &b, None, None)), Some(429));
        // The session's cap comes first.
        assert_eq!(
            status(load.take(&config, &c, Some((1, 1)), None)),
            Some(429)
        );
        // The endpoint's: 503.
        assert_eq!(status(load.take(&config, &c, None, None)), None);
        assert_eq!(load.total(), 5);
        assert_eq!(status(load.take(&config, &c, None, None)), Some(503));
        assert_eq!(
            load.admit(&config, &c, None, None).err().map(|r| r.status),
            Some(503)
        );
        // What `admit` says, `take` says, before and after a release.
        load.release(&a1);
        assert!(load.admit(&config, &c, None, None).is_ok());
        assert!(load.admit(&config, &a1, None, None).is_ok());
        for t in [&a1, &a2, &b, &c] {
            load.release(t);
        }
        assert_eq!(load.total(), 0);
        assert!(load.by_connection.is_empty() && load.by_peer.is_empty());
        assert!(load.by_principal.is_empty());
    }
}
