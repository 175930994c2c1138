//! Session behaviour: the handshake and both eras, limits, input, subscriptions, tasks, typed calls, hostile input and the property tests of a client and a server session

#[path = "../common/mod.rs"]
mod common;
mod legacy_kit;
#[path = "../tasks_kit/mod.rs"]
mod tasks_kit;
mod wire;

mod client_call;
mod features_regressions;
mod hostile;
mod identity;
mod input;
mod layers;
mod legacy_close_batch;
mod legacy_gating;
mod legacy_lifecycle;
mod legacy_timing;
mod limits;
mod modern;
mod props;
mod props_features;
mod smoke;
mod subscriptions;
mod task_input;
mod tasks;
mod tasks_end;
mod tasks_input;
mod tasks_time;
mod tasks_wire;
mod typed;
