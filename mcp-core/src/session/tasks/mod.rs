//! Tasks, both sides: the task methods a server answers ([`server`]), tasks shared with other
//! processes through a store ([`shared`]), and the tasks a client follows behind its calls
//! ([`client`]); the data they work on is in [`task_table`](super::task_table) and
//! [`task_store`](super::task_store)

pub(super) mod client;
pub(super) mod server;
pub(super) mod shared;
pub(super) mod shared_replies;
