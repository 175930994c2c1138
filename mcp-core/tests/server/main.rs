//! The server framework and the client's helpers: the catalog, routing, validation, resources, runs, end-to-end loops, URI templates, the client cache and output

#[path = "../common/mod.rs"]
mod common;
#[path = "../tasks_kit/mod.rs"]
mod tasks_kit;

mod access;
mod catalog;
mod client_cache;
mod client_output;
mod connection;
mod end_to_end;
mod resources;
mod route;
mod runs;
mod uri_template;
mod validate;
