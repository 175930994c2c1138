//! The guide's mcp-sansio-async-std example (guide/src/bindings.md) is `examples/smol-hello.rs`,
//! word for word, so the code the guide shows is the example `cargo run` runs

#[test]
fn the_guide_shows_the_smol_example_as_it_is() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/guide/src/bindings.md")).unwrap();
    let example =
        std::fs::read_to_string(format!("{root}/mcp-async-std/examples/smol-hello.rs")).unwrap();
    let start = "<!-- mcp-async-std/examples/smol-hello.rs -->\n```rust\n";
    let from = readme.find(start).expect("the guide marks the example") + start.len();
    let len = readme[from..]
        .find("```\n<!-- end -->")
        .expect("the example block ends");
    assert_eq!(
        &readme[from..from + len],
        example,
        "guide/src/bindings.md's copy of smol-hello.rs differs from the file: copy the file into the guide"
    );
}
