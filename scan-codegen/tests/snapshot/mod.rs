//! Snapshot files shared by the expansion and explanation tests: every `*.scan` file of a
//! folder is rendered and compared with the file beside it with `extension` (rewritten
//! instead when `UPDATE_EXPANSIONS` is set).

use std::path::Path;

/// Checks (or rewrites) the snapshot of each `.scan` file in `tests/<folder>`; returns how
/// many were checked.
pub fn check(
    folder: &str,
    extension: &str,
    render: impl Fn(&str) -> Result<String, String>,
) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(folder);
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
        let rendered = render(&source).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let snapshot = path.with_extension(extension);
        if update {
            std::fs::write(&snapshot, &rendered).unwrap();
        } else {
            let expected = std::fs::read_to_string(&snapshot)
                .unwrap_or_else(|e| panic!("{}: {e}", snapshot.display()));
            assert!(
                expected == rendered,
                "{} changed; rerun with UPDATE_EXPANSIONS=1 and review:\n{rendered}",
                snapshot.display()
            );
        }
        checked += 1;
    }
    checked
}
