//! Tasks, both sides: the server's task table and the task methods it answers
//! ([`server`]), and the tasks a client follows behind its calls ([`client`])

pub(super) mod client;
pub(super) mod server;
pub(super) mod shared;

pub(super) use server::*;
pub use server::{TASKS_EXTENSION, TaskError, TaskOptions, TaskUpdate, task_wire_id};
