//! What the binding's own tests (duplex, pool, oauth; the binding suite runs in suite.rs)
//! share: a server and a client joined by two OS pipes; and the binding suite's runtime-free
//! support (fixtures, raw HTTP, OAuth)

#![allow(dead_code)]

use std::thread;

use mcp_sansio::{ClientConfig, EraMode, Implementation};
use mcp_sansio_blocking::{Client, ClientOptions, Server};

#[path = "../../../tests/binding-suite/support/mod.rs"]
pub(crate) mod support;

/// Serves `server` on a thread over a pipe pair and connects a client to it
pub(crate) fn connect(server: Server, config: ClientConfig, options: ClientOptions) -> Client {
    let (server_read, client_write) = std::io::pipe().unwrap();
    let (client_read, server_write) = std::io::pipe().unwrap();
    thread::spawn(move || server.serve(server_read, server_write));
    Client::connect_with(client_read, client_write, config, options).unwrap()
}

/// A client configuration in `era`
pub(crate) fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("test-client", "1.0"));
    config.era = era;
    config
}
