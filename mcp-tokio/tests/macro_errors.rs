//! The errors a user gets for a `#[tool]` the macro cannot make a tool of (compile-fail
//! cases in `tests/ui/`, with the compiler's output they must give)

#[test]
fn bad_tool_signatures_fail_to_compile_with_a_clear_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
