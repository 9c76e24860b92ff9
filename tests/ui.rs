//! Compile-fail tests: each program in tests/ui/ must be rejected with the message in its
//! .stderr file, spanned on the offending token. Regenerate with TRYBUILD=overwrite and
//! review the diff.

#[test]
fn compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
