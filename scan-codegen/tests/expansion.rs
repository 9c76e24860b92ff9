//! Expansion snapshots: the generated code for the programs in tests/expand/*.scan,
//! pretty-printed, must match the `.expanded.rs` file beside each. A change in emission
//! shows up here as a diff to review. Regenerate with `UPDATE_EXPANSIONS=1 cargo test -p
//! scan-codegen --test expansion` and read the diff before committing.

mod snapshot;

#[test]
fn expansions_match_their_snapshots() {
    let checked = snapshot::check("expand", "expanded.rs", scan_codegen::expand_to_string);
    assert!(checked >= 2, "no snapshots found in tests/expand");
}
