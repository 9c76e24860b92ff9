//! Compiles the `.scan` files of src/ into $OUT_DIR/<stem>.rs, which src/lib.rs includes.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The tutorial's RNN, generated code naming the runtime `::scan_runtime` (the default).
    scan_codegen::Builder::new()
        .file("src/rnn.scan")
        .compile()?;
    // Cumulative sums with the rewrites forced off, reaching the runtime through the
    // crate's own re-export (`pub use scan_runtime as rt;` in src/lib.rs).
    scan_codegen::Builder::new()
        .file("src/cumsum.scan")
        .rewrites(false)
        .runtime_path("crate::rt")
        .compile()?;
    Ok(())
}
