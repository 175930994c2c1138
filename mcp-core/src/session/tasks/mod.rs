//! Tasks, both sides: the server's task table ([`table`]) and the task methods it answers
//! ([`server`]), tasks shared with other processes through a store ([`shared`]), and the
//! tasks a client follows behind its calls ([`client`])

pub(super) mod client;
pub(super) mod server;
pub(super) mod shared;
pub(super) mod shared_state;
pub(super) mod table;

pub(super) use table::*;
pub use table::{TASKS_EXTENSION, TaskError, TaskOptions, TaskUpdate, task_wire_id};
