//! Prints the scan graph of a `scan!` program: `cargo run -p scan-codegen --example explain -- file.rs`
//! where the file holds the `fn`s that would go inside `scan! { ... }`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: explain <file with the fns of a scan! block>");
        std::process::exit(2);
    };
    let source = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    match scan_codegen::explain(&source) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
