//! Explanation snapshots: `scan_codegen::explain` of the programs in tests/explain/*.scan
//! (the graph before the rewrites, the rewrites that fired in order, the graph after) must
//! match the `.explained.txt` file beside each. Regenerate with `UPDATE_EXPANSIONS=1 cargo
//! test -p scan-codegen --test explain` and read the diff before committing.

use std::path::Path;

#[test]
fn explanations_match_their_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain");
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
        let explained =
            scan_codegen::explain(&source).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let snapshot = path.with_extension("explained.txt");
        if update {
            std::fs::write(&snapshot, &explained).unwrap();
        } else {
            let expected = std::fs::read_to_string(&snapshot)
                .unwrap_or_else(|e| panic!("{}: {e}", snapshot.display()));
            assert!(
                expected == explained,
                "{} changed; rerun with UPDATE_EXPANSIONS=1 and review:\n{explained}",
                snapshot.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 4, "no snapshots found in {}", dir.display());
}
