//! The session's sub-machines depend one way: a file's `impl Core` may call only the `Core`
//! methods of files in lower layers (and its own). Checked on the sources themselves, so a
//! call that goes up (or sideways) fails here, naming the call.
//!
//! | layer | files | what they are |
//! |---|---|---|
//! | 0 | `mod.rs` | the core's primitives: clock, limits, capabilities, closing |
//! | 1 | `outgoing.rs` | writing: requests, answers, notifications, cancellations |
//! | 2 | `tasks/client.rs`, `subscriptions.rs`, `lifecycle.rs` | followed tasks and calls, listen streams and resource subscriptions, the handshake and discovery |
//! | 3 | `ask.rs` | asking for input (it may hand answers to a followed task) |
//! | 4 | `tasks/server.rs` | server tasks (they ask for input and notify listeners) |
//! | 5 | `receive.rs`, `timers.rs` | the dispatchers: messages from the peer, deadlines and the peer's end |
//!
//! The public `Session` methods (`mod.rs`, `inbound_handle.rs`, `typed.rs`) sit above all of
//! them.

/// Each file with its layer and its source
const FILES: &[(&str, u8, &str)] = &[
    ("mod.rs", 0, include_str!("mod.rs")),
    ("outgoing.rs", 1, include_str!("outgoing.rs")),
    ("tasks/client.rs", 2, include_str!("tasks/client.rs")),
    ("subscriptions.rs", 2, include_str!("subscriptions.rs")),
    ("lifecycle.rs", 2, include_str!("lifecycle.rs")),
    ("ask.rs", 3, include_str!("ask.rs")),
    ("tasks/server.rs", 4, include_str!("tasks/server.rs")),
    ("receive.rs", 5, include_str!("receive.rs")),
    ("timers.rs", 5, include_str!("timers.rs")),
];

/// The names of the functions in a source's `impl Core { .. }` blocks
fn core_methods(source: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(start) = rest.find("\nimpl Core {") {
        let block = &rest[start + 1..];
        let end = block.find("\n}\n").unwrap_or(block.len());
        let mut body = &block[..end];
        while let Some(at) = body.find("fn ") {
            let after = &body[at + 3..];
            let name_len = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            // A word ending in `fn` (say `Box<dyn FnOnce>`) is not a definition.
            let word_start = at == 0
                || !body[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if word_start && name_len > 0 {
                names.push(&after[..name_len]);
            }
            body = &after[name_len..];
        }
        rest = &block[end..];
    }
    names
}

/// The methods called on `self` in a source: `self.name(`
fn self_calls(source: &str) -> Vec<&str> {
    let mut calls = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("self.") {
        let after = &rest[at + 5..];
        let len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if after[len..].starts_with('(') && len > 0 {
            calls.push(&after[..len]);
        }
        rest = &after[len..];
    }
    calls
}

#[test]
fn the_sub_machines_depend_one_way() {
    let mut owner = std::collections::HashMap::new();
    for (file, layer, source) in FILES {
        let methods = core_methods(source);
        assert!(
            !methods.is_empty() || *file == "mod.rs",
            "{file} has `impl Core` methods"
        );
        for name in methods {
            owner.entry(name).or_insert((*file, *layer));
        }
    }
    // The check sees what it checks: the dispatchers call into the layers below.
    assert_eq!(owner.get("fire_timers").map(|o| o.0), Some("timers.rs"));
    assert_eq!(owner.get("answer").map(|o| o.0), Some("outgoing.rs"));
    let mut upward = Vec::new();
    for (file, layer, source) in FILES {
        for name in self_calls(source) {
            if let Some((defined, at)) = owner.get(name)
                && defined != file
                && at >= layer
            {
                upward.push(format!(
                    "{file} (layer {layer}) calls {name} of {defined} (layer {at})"
                ));
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "calls that do not go down:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_check_finds_a_call_that_goes_up() {
    let low = "\nimpl Core {\n    fn low(&mut self) {\n        self.high();\n    }\n}\n";
    let high = "\nimpl Core {\n    fn high(&mut self) {}\n}\n";
    assert_eq!(core_methods(low), ["low"]);
    assert_eq!(core_methods(high), ["high"]);
    assert_eq!(self_calls(low), ["high"]);
}
