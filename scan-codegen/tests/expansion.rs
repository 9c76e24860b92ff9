//! Expansion snapshots: the generated code for the programs in tests/expand/*.scan,
//! pretty-printed, must match the `.expanded.rs` file beside each. A change in emission
//! shows up here as a diff to review. Regenerate with `UPDATE_EXPANSIONS=1 cargo test -p
//! scan-codegen --test expansion` and read the diff before committing.

use std::path::Path;

#[test]
fn expansions_match_their_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expand");
    let update = std::env::var_os("UPDATE_EXPANSIONS").is_some();
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("scan") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let expanded = scan_codegen::expand_to_string(&source)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let snapshot = path.with_extension("expanded.rs");
        if update {
            std::fs::write(&snapshot, &expanded).unwrap();
        } else {
            let expected = std::fs::read_to_string(&snapshot)
                .unwrap_or_else(|e| panic!("{}: {e}", snapshot.display()));
            assert!(
                expected == expanded,
                "{} changed; rerun with UPDATE_EXPANSIONS=1 and review:\n{expanded}",
                snapshot.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 2, "no snapshots found in {}", dir.display());
}
