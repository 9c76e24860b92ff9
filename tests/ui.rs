//! Compile-fail tests: each program in tests/ui/ must be rejected with the message in its
//! .stderr file, spanned on the offending token. The cases are named by kind (`signature_`,
//! `syntax_`, `spec_`, `taps_`, `types_`, `step_`, `strict_`, `call_`, `index_`, `cascade_`,
//! `stub_`; docs/ARCHITECTURE.md, "Errors"); the glob picks them all. Regenerate with
//! TRYBUILD=overwrite and review the diff.

#[test]
fn compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
