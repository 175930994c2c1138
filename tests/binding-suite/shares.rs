//! How a server shares itself out, over real HTTP on 127.0.0.1 with tiny caps: one client
//! address cannot take the requests in progress of everyone (429, then 503 when the server
//! is full, with `Retry-After`), and at `max_sessions` an idle session makes room for a new
//! client while busy ones stay (the raw checks are `support::shares`'s)

use std::net::SocketAddr;
use std::sync::Arc;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::{Implementation, ServerConfig};

use super::support::shares;
use super::{echo_tool, slow_tool};
use crate::binding::{HttpServerHandle, Server};
use crate::rt;

dialect_fn! {
    /// `echo` and `slow` served under `config` (and the binding's keepalive)
    async fn start(mut config: HttpConfig) -> HttpServerHandle {
        if let Some(keepalive) = rt::HTTP_KEEPALIVE {
            config.keepalive = Some(keepalive);
        }
        let server_config = ServerConfig::new(Implementation::new("shares", "1.0"));
        let builder = echo_tool(Server::builder(server_config));
        let server = slow_tool(builder, Arc::default()).build();
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        aw!(server.serve_http_with(localhost, config)).unwrap()
    }
}

fn url(handle: &HttpServerHandle) -> String {
    format!("http://{}/mcp", handle.local_addr())
}

#[test]
fn one_client_cannot_take_the_requests_in_progress_of_everyone() {
    rt::block_on(async {
        let mut config = HttpConfig::default();
        config.max_in_flight_per_peer = 2;
        config.max_in_flight = 3;
        let handle = aw!(start(config));
        let url = url(&handle);
        aw!(rt::unblock(move || {
            shares::one_client_cannot_take_the_shared_capacity(&url);
        }));
        aw!(handle.shutdown());
    });
}

#[test]
fn idle_sessions_make_room_for_new_clients_and_busy_ones_stay() {
    rt::block_on(async {
        let mut config = HttpConfig::default();
        config.max_sessions = 2;
        let handle = aw!(start(config));
        let url = url(&handle);
        aw!(rt::unblock(move || {
            shares::idle_sessions_make_room_for_new_clients(&url);
        }));
        aw!(handle.shutdown());
    });
}
