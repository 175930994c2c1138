//! The session's files and their layers, checked on the sources themselves
//!
//! Every file under `src/session/` has a place in [`FILES`]; a file that is not listed (a new
//! one) fails [`every_file_of_the_session_has_a_place`], so none is left out. The sub-machines
//! depend one way: a file's `impl Core` may call only the `Core` methods of files in lower
//! layers (and its own), so a call that goes up (or sideways) fails here, naming the call.
//!
//! | layer | files | what they are |
//! |---|---|---|
//! | 0 | `engine.rs` | the core's primitives: clock, limits, capabilities, closing |
//! | 1 | `outgoing.rs` | writing: requests, answers, notifications, cancellations |
//! | 2 | `tasks/client.rs`, `subscriptions.rs`, `lifecycle.rs` | followed tasks and calls, listen streams and resource subscriptions, the handshake and discovery |
//! | 3 | `ask.rs` | asking for input (it may hand answers to a followed task) |
//! | 4 | `tasks/shared.rs` | operations on the shared task store: writing records, looking tasks up |
//! | 5 | `tasks/server.rs` | server tasks (they ask for input, notify listeners, write their records) |
//! | 6 | `tasks/shared_replies.rs` | what the store answers and signals (it may cancel or feed a task of ours) |
//! | 7 | `receive.rs`, `timers.rs` | the dispatchers: messages from the peer, deadlines and the peer's end |
//!
//! The public `Session` methods (`machine.rs`, `inbound_handle.rs`, `typed.rs`) sit above all
//! of them; the data the layers work on (tables, ids, events, configuration) sits below the
//! engine and names no `Core`; `mod.rs` files only declare and re-export.

use std::collections::HashMap;
use std::path::Path;

/// What a file of the session is
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A sub-machine: its `impl Core` methods, at this layer
    Layer(u8),
    /// Public `Session` methods, above every layer
    Api,
    /// Data the layers work on, below the engine: no `Core` in it
    Data,
    /// A module's face: `mod` and `use` lines
    Face,
}

use Place::{Api, Data, Face, Layer};

/// Every file under `src/session/`, by its path from there
const FILES: &[(&str, Place)] = &[
    ("mod.rs", Face),
    ("tasks/mod.rs", Face),
    ("machine.rs", Api),
    ("inbound_handle.rs", Api),
    ("typed.rs", Api),
    ("engine.rs", Layer(0)),
    ("outgoing.rs", Layer(1)),
    ("tasks/client.rs", Layer(2)),
    ("subscriptions.rs", Layer(2)),
    ("lifecycle.rs", Layer(2)),
    ("ask.rs", Layer(3)),
    ("tasks/shared.rs", Layer(4)),
    ("tasks/server.rs", Layer(5)),
    ("tasks/shared_replies.rs", Layer(6)),
    ("receive.rs", Layer(7)),
    ("timers.rs", Layer(7)),
    ("batch.rs", Data),
    ("caller.rs", Data),
    ("config.rs", Data),
    ("error.rs", Data),
    ("event.rs", Data),
    ("gating.rs", Data),
    ("header_fields.rs", Data),
    ("ids.rs", Data),
    ("inbound_table.rs", Data),
    ("outbound_table.rs", Data),
    ("params.rs", Data),
    ("phase.rs", Data),
    ("role.rs", Data),
    ("seal.rs", Data),
    ("subscription_table.rs", Data),
    ("task_store.rs", Data),
    ("task_table.rs", Data),
    ("transmit_queue.rs", Data),
];

/// The session's directory in this checkout
fn session_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src/session"))
}

/// Every `.rs` file under `dir`, by its path from `root` (with `/`), sorted
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            let relative = path.strip_prefix(root).expect("under the root");
            let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
    out.sort();
}

/// Each listed file with its place and its source
fn sources() -> Vec<(&'static str, Place, String)> {
    FILES
        .iter()
        .map(|(file, place)| {
            let path = session_dir().join(file);
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{} is listed but unreadable: {e}", path.display()));
            (*file, *place, source)
        })
        .collect()
}

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

/// The code lines of a source: no comment lines, no `#[cfg(test)]` module at its end
fn code_lines(source: &str) -> impl Iterator<Item = &str> {
    let code = source
        .split("\n#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or(source);
    code.lines().filter(|l| !l.trim_start().starts_with("//"))
}

/// Whether `word` stands in `line` as a whole word
fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !part(before) && !part(after)
    })
}

#[test]
fn every_file_of_the_session_has_a_place() {
    let mut found = Vec::new();
    rust_files(session_dir(), session_dir(), &mut found);
    assert!(found.len() > 20, "the session's files are found: {found:?}");
    let listed: Vec<String> = FILES.iter().map(|(f, _)| (*f).to_owned()).collect();
    let unlisted: Vec<_> = found.iter().filter(|f| !listed.contains(f)).collect();
    assert!(
        unlisted.is_empty(),
        "files of src/session/ with no place in FILES (give each its layer or place): {unlisted:?}"
    );
    let gone: Vec<_> = listed.iter().filter(|f| !found.contains(f)).collect();
    assert!(gone.is_empty(), "FILES lists files that are gone: {gone:?}");
}

#[test]
fn each_file_holds_what_its_place_says() {
    let mut wrong = Vec::new();
    for (file, place, source) in sources() {
        let methods = core_methods(&source);
        match place {
            Layer(_) if methods.is_empty() => {
                wrong.push(format!("{file} is a layer but has no `impl Core` methods"));
            }
            Api | Face if !methods.is_empty() => {
                wrong.push(format!(
                    "{file} ({place:?}) has `impl Core` methods: {methods:?}"
                ));
            }
            Data => {
                for line in code_lines(&source).filter(|l| has_word(l, "Core")) {
                    wrong.push(format!(
                        "{file} is data below the engine but names Core: {line}"
                    ));
                }
            }
            Face => {
                for line in code_lines(&source) {
                    let line = line.trim();
                    let declares = ["mod ", "pub mod ", "pub(super) mod ", "pub(crate) mod "]
                        .iter()
                        .any(|p| line.starts_with(p));
                    let reexports = line.starts_with("use ")
                        || line.starts_with("pub use ")
                        || line.starts_with("pub(crate) use ")
                        || line.starts_with("pub(super) use ");
                    let other = line.is_empty() || line.starts_with("#[") || !line.contains(' ');
                    // Lines of a `use` group that wraps (`    Name, Other,` and `};`) pass.
                    let group = line.ends_with(',') || line == "};";
                    if !(declares || reexports || other || group) {
                        wrong.push(format!("{file} should only declare and re-export: {line}"));
                    }
                }
            }
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_sub_machines_depend_one_way() {
    let sources = sources();
    let mut owner = HashMap::new();
    for (file, place, source) in &sources {
        if let Layer(layer) = place {
            for name in core_methods(source) {
                owner.entry(name).or_insert((*file, *layer));
            }
        }
    }
    // The check sees what it checks: the dispatchers call into the layers below.
    assert_eq!(owner.get("fire_timers").map(|o| o.0), Some("timers.rs"));
    assert_eq!(owner.get("answer").map(|o| o.0), Some("outgoing.rs"));
    assert_eq!(
        owner.get("shared_put").map(|o| o.0),
        Some("tasks/shared.rs")
    );
    let mut upward = Vec::new();
    for (file, place, source) in &sources {
        let Layer(layer) = place else { continue };
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
    assert!(has_word("use super::{Core, Side};", "Core"));
    assert!(!has_word("struct CoreLimits;", "Core"));
}
