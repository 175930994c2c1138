//! What the glue tests share: a server and a client joined by two OS pipes

#![allow(dead_code)]

use std::thread;

use mcp_sansio::{ClientConfig, EraMode, Implementation};
use mcp_sansio_blocking::{Client, ClientOptions, Server};
use serde_json::{Map, Value};

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

/// A JSON object from a `json!` literal
pub(crate) fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}
