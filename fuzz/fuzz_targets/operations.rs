//! An operation sequence against a client/server `Pair` (or several HTTP clients against an
//! `HttpServer`): the fuzzer's bytes choose the configuration and an `Arbitrary` list of
//! steps (requests, answers, progress, cancellations from both sides, input rounds, tasks,
//! clock advances, paused and cut pipes, hostile lines, floods, crashes, EOF)
//!
//! Oracle: the invariants of the deterministic simulation (`mcp-core/tests/sim/kit/mod.rs`,
//! shared with this target), checked after every step: nothing panics; every frame written is
//! valid JSON-RPC; every outbound request ends exactly once; nothing follows `Closed`; every
//! queue stays within its limit; once every timeout passed, every request has ended.
#![no_main]

#[path = "../../mcp-core/tests/sim/kit/mod.rs"]
mod sim;

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;

/// The fuzzer's choices: which simulation, and the words every choice is read from
#[derive(Debug)]
struct Schedule {
    http: bool,
    words: Vec<u64>,
}

impl<'a> Arbitrary<'a> for Schedule {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self {
            http: u.arbitrary()?,
            words: u.arbitrary_iter::<u64>()?.take(600).collect::<Result<_, _>>()?,
        })
    }
}

/// A source that reads the schedule's words and runs dry at its end
struct Words<'a>(&'a [u64]);

impl sim::Source for Words<'_> {
    fn word(&mut self) -> u64 {
        let Some((first, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        *first
    }

    fn exhausted(&self) -> bool {
        self.0.is_empty()
    }
}

fuzz_target!(|s: Schedule| {
    let mut src = Words(&s.words);
    if s.http {
        sim::http::HttpSim::new(&mut src).run(&mut src, 200);
    } else {
        sim::PairSim::new(&mut src).run(&mut src, 200);
    }
});
