//! `include/mcp.h` is what cbindgen makes of the sources: CI fails when they drift apart
//!
//! Regenerate the header after changing an exported function or its documentation:
//!
//! ```text
//! MCP_CAPI_BLESS=1 cargo test -p mcp-sansio-capi --test header
//! ```

use std::path::Path;

#[test]
fn checked_in_header_matches_the_sources() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml reads");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include").join("mcp.h");
    if std::env::var_os("MCP_CAPI_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("include/mcp.h writes");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != generated {
        let line = checked_in
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || checked_in.lines().count().min(generated.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "mcp-capi/include/mcp.h is out of date with the sources (first difference at line \
             {line}).\nRegenerate it with:\n    MCP_CAPI_BLESS=1 cargo test -p mcp-sansio-capi \
             --test header\nand commit the result."
        );
    }
}
