//! Explanation snapshots: `scan_codegen::explain` of the programs in tests/explain/*.scan
//! (the graph before the rewrites, the rewrites that fired in order, the graph after) must
//! match the `.explained.txt` file beside each. Regenerate with `UPDATE_EXPANSIONS=1 cargo
//! test -p scan-codegen --test explain` and read the diff before committing.

mod snapshot;

#[test]
fn explanations_match_their_snapshots() {
    let checked = snapshot::check("explain", "explained.txt", scan_codegen::explain);
    assert!(checked >= 4, "no snapshots found in tests/explain");
}
