//! `include/mcp.h` is what cbindgen makes of the sources: CI fails when they drift apart; it
//! compiles as C99 and C++, and the run loop its comment shows serves a client
//!
//! Regenerate the header after changing an exported function or its documentation:
//!
//! ```text
//! MCP_CAPI_BLESS=1 cargo test -p mcp-sansio-capi --test header
//! ```

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

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

/// The header's own C: the run loop its top comment shows, cut out as it stands
fn header_run_loop(header: &str) -> String {
    let mut program = String::new();
    let mut inside = false;
    let mut returned = false;
    for line in header.lines() {
        if line.starts_with(" *   #define _POSIX_C_SOURCE") {
            inside = true;
        }
        if inside {
            let code = line.strip_prefix(" *   ").unwrap_or("");
            program.push_str(code);
            program.push('\n');
            returned |= code.trim() == "return 0;";
            if returned && code == "}" {
                return program;
            }
        }
    }
    panic!("the header's run loop was not found");
}

/// The C compiler: `$CC`, else `cc`
fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_owned())
}

#[test]
fn the_header_compiles_as_c99_and_cxx() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = crate_dir.join("include");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capi-header");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("only_header.c");
    std::fs::write(
        &source,
        "#include \"mcp.h\"\nint main(void) { return mcp_version() ? 0 : 1; }\n",
    )
    .unwrap();
    let status = Command::new(cc())
        .args([
            "-std=c99",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(&include)
        .arg(&source)
        .status()
        .expect("a C compiler (cc, or $CC) runs");
    assert!(status.success(), "mcp.h does not compile as C99");
    let source = dir.join("only_header.cpp");
    std::fs::write(
        &source,
        "#include \"mcp.h\"\nint main() { return mcp_version() ? 0 : 1; }\n",
    )
    .unwrap();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    let status = Command::new(cxx)
        .args([
            "-std=c++11",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(&include)
        .arg(&source)
        .status()
        .expect("a C++ compiler (c++, or $CXX) runs");
    assert!(status.success(), "mcp.h does not compile as C++");
}

#[test]
fn the_run_loop_of_the_header_serves_a_client() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(crate_dir.join("include").join("mcp.h")).unwrap();
    let program = header_run_loop(&header);
    assert!(
        program.lines().count() < 60,
        "the run loop must stay under 60 lines"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capi-header");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("run_loop.c");
    std::fs::write(&source, &program).unwrap();
    // The static library cargo built with this test (lib crate types: staticlib, cdylib, rlib)
    let exe = std::env::current_exe().unwrap();
    let library = exe.parent().unwrap().join("libmcp_capi.a");
    assert!(
        library.exists(),
        "no static library at {}",
        library.display()
    );
    let binary = dir.join("run_loop");
    let status = Command::new(cc())
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(crate_dir.join("include"))
        .arg(&source)
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&binary)
        .status()
        .expect("a C compiler (cc, or $CC) runs");
    assert!(
        status.success(),
        "the header's run loop does not compile:\n{program}"
    );

    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{}}}"#,
        "\n",
    );
    let mut child = Command::new(&binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    // The loop ends at EOF once every request is answered; a hang fails after a minute.
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    let output = wait
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run loop exits at EOF")
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let answers: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 3, "{stdout}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "demo");
    assert_eq!(answers[1]["result"]["tools"][0]["name"], "hello");
    assert_eq!(answers[2]["id"], 3);
    assert_eq!(answers[2]["result"]["content"][0]["text"], "hello");
}
