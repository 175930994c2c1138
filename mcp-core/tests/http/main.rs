//! HTTP: the Streamable HTTP server (modern and legacy), its client, parameter headers, the transport, and OAuth (DPoP, the flow, the transport)

#[path = "../common/mod.rs"]
mod common;
mod http_kit;
mod identity_kit;

mod auth_dpop;
mod auth_flow;
mod auth_transport;
mod capacity;
mod client;
mod edge;
mod identity;
mod lanes;
mod legacy;
mod memory;
mod modern;
mod param_headers;
mod scopes;
mod shared_identity;
mod shared_tasks;
mod transport;
