//! The guide to mcp-sansio, as doc tests
//!
//! The chapters are `guide/src/*.md` (an mdBook: `mdbook build guide`), and each is the docs of
//! one module here, so `cargo test -p mcp-sansio-guide --doc` compiles every Rust block of the
//! guide and of the repository's README.md, and runs each one not marked `no_run`.
//! `scripts/check-docs` checks that every chapter is included here and listed in
//! `guide/src/SUMMARY.md`, that no block is `ignore`d, and the shell and TOML blocks; the
//! Python blocks run under pytest (`mcp-python/tests/test_guide.py`).

/// The repository's README.md
#[doc = include_str!("../README.md")]
pub mod readme {}

macro_rules! chapters {
    ($($module:ident = $file:literal),+ $(,)?) => {
        $(
            #[doc = include_str!(concat!("src/", $file))]
            pub mod $module {}
        )+
        /// Every chapter's file, in the order of the modules above (`scripts/check-docs` reads it)
        pub const CHAPTERS: &[&str] = &[$($file),+];
    };
}

chapters! {
    introduction = "introduction.md",
    server = "server.md",
    client = "client.md",
    input = "input.md",
    tasks = "tasks.md",
    http = "http.md",
    auth = "auth.md",
    scale_out = "scale-out.md",
    deploy = "deploy.md",
    middleware = "middleware.md",
    logging = "logging.md",
    metrics = "metrics.md",
    traces = "traces.md",
    testing = "testing.md",
    sansio = "sansio.md",
    new_binding = "new-binding.md",
    bindings = "bindings.md",
    python = "python.md",
    c_api = "c-api.md",
    architecture = "architecture.md",
    versioning = "versioning.md",
}

#[cfg(test)]
mod tests {
    /// The middleware chapter shows `mcp-tokio/examples/middleware.rs` as it is (less its
    /// module docs), so the program it shows is the one `cargo run --example` runs
    #[test]
    fn the_middleware_chapter_shows_the_example_as_it_is() {
        let example = include_str!("../mcp-tokio/examples/middleware.rs");
        let body: Vec<&str> = example.lines().filter(|l| !l.starts_with("//!")).collect();
        let body = body.join("\n");
        let chapter = include_str!("src/middleware.md");
        assert!(
            chapter.contains(body.trim()),
            "guide/src/middleware.md shows another program"
        );
    }
}
