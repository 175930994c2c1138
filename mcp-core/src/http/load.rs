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
        let over = |n: Option<&usize>, cap: usize| n.copied().unwrap_or(0) >= cap;
        let what = if session.is_some_and(|(n, cap)| n >= cap) {
            Some("this session")
        } else if ticket.connection.is_some_and(|c| {
            over(
                self.by_connection.get(&c),
                config.max_in_flight_per_connection,
            )
        }) {
            Some("this connection")
        } else if ticket
            .peer
            .is_some_and(|p| over(self.by_peer.get(&p), config.max_in_flight_per_peer))
        {
            Some("this client address")
        } else if ticket.principal.as_ref().is_some_and(|p| {
            over(
                self.by_principal.get(&**p),
                config.max_in_flight_per_principal,
            )
        }) {
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
        if self.total >= config.max_in_flight {
            let error = ErrorObject::internal_error("the server is busy; retry later");
            return Err(refusal(config, 503, id, &error));
        }
        Ok(())
    }

    /// Counts a request admitted under `ticket`
    pub(crate) fn acquire(&mut self, ticket: &Ticket) {
        self.total += 1;
        if let Some(c) = ticket.connection {
            *self.by_connection.entry(c).or_default() += 1;
        }
        if let Some(p) = ticket.peer {
            *self.by_peer.entry(p).or_default() += 1;
        }
        if let Some(p) = &ticket.principal {
            *self.by_principal.entry(Arc::clone(p)).or_default() += 1;
        }
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
