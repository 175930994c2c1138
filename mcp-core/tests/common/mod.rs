//! Helpers shared by the test binaries (`session`, `http`, `schema`, `server`)
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::time::Instant;

use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};

pub use mcp_sansio::testing::raw;

/// An arbitrary origin for the fake clock; nothing reads the real clock after this
#[allow(clippy::disallowed_methods)]
pub fn origin() -> Instant {
    Instant::now()
}

/// `config` with saved failures read from and written to `<module>.proptest-regressions`
/// beside the test module's source file
///
/// proptest's default (`SourceParallel`) walks up from the source file to the binary's
/// `main.rs` and would use `tests/proptest-regressions/<module>.txt` instead, one folder for
/// every binary, away from the saved cases.
pub fn beside_source(config: ProptestConfig) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..config
    }
}
