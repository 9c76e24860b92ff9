//! The build-script door (`scan_codegen::Builder`, `generate`) and the rendering of errors
//! in `.scan` files.

use std::path::{Path, PathBuf};

use scan_codegen::{generate, BuildError, Builder};

const CUMSUM: &str = "\
/// Running sums.
pub fn cumsum(v: ArrayView1<f64>) -> Result<Array1<f64>> {
    let sums = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0);
    Ok(sums)
}
";

/// The tutorial's polynomial: running_sum fires on it (a map read only through `sum`).
const POLYNOMIAL: &str = "\
pub fn polynomial(coefficients: ArrayView1<f64>, x: f64) -> Result<f64> {
    let components = scan(
        |coefficient, power, free_variable| coefficient * pow(free_variable, power),
        outputs_info = None,
        sequences = [coefficients, arange(10000)],
        non_sequences = x,
    );
    Ok(components.sum())
}
";

/// Two errors, on lines 5 and 9; the last function's body is indented by a tab.
const TWO_ERRORS: &str = "\
pub fn f(x: f64) -> Result<f64> {
    Ok(x)
}

pub async fn g(x: f64) -> Result<f64> {
    Ok(x)
}

pub fn h<T>(x: f64) -> Result<f64> {
\tOk(x)
}
";

const TWO_ERRORS_RENDERED: &str = "\
src/two.scan:5:5: error: scan! functions are plain `fn`s: remove this qualifier
pub async fn g(x: f64) -> Result<f64> {
    ^^^^^
src/two.scan:9:9: error: scan! functions are not generic: dtypes and ranks are static
pub fn h<T>(x: f64) -> Result<f64> {
        ^^^
";

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("builder")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("scratch directory");
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write input");
}

#[test]
fn generate_gives_pretty_rust_calling_the_runtime() {
    let code = generate(CUMSUM).expect("compiles");
    // prettyplease's layout: one item per function, indented bodies.
    assert!(code.contains("/// Running sums.\n"), "{code}");
    assert!(
        code.contains("pub fn cumsum(\n    v: ::scan_runtime::__private::ndarray::ArrayView<"),
        "{code}"
    );
    assert!(code.contains(") -> ::scan_runtime::Result<"), "{code}");
    // It is Rust: it parses again, as one function.
    let file: syn::File = syn::parse_str(&code).expect("the output parses");
    assert_eq!(file.items.len(), 1);
    // The same code as the macro's expansion, pretty-printed.
    assert_eq!(
        code,
        scan_codegen::expand_to_string(CUMSUM).expect("expands")
    );
}

#[test]
fn the_rewrites_follow_the_file_unless_the_builder_forces_them() {
    let none_in_file = format!("#![rewrites(none)]\n{POLYNOMIAL}");
    let as_written = generate(POLYNOMIAL).expect("compiles");
    let off_in_file = generate(&none_in_file).expect("compiles");
    assert_ne!(as_written, off_in_file, "running_sum changes the code");
    let forced_on = Builder::new()
        .rewrites(true)
        .generate(&none_in_file)
        .expect("compiles");
    let forced_off = Builder::new()
        .rewrites(false)
        .generate(POLYNOMIAL)
        .expect("compiles");
    assert_eq!(forced_on, as_written);
    assert_eq!(forced_off, off_in_file);
    // The file's attribute must still be valid.
    let bad = format!("#![rewrites(no_such_pass)]\n{POLYNOMIAL}");
    let errors = Builder::new()
        .rewrites(false)
        .generate(&bad)
        .expect_err("unknown pass");
    assert_eq!(errors.len(), 1);
    let e = errors.iter().next().expect("one error");
    assert!(
        e.message().starts_with("unknown rewrite pass"),
        "{}",
        e.message()
    );
    let loc = e.location().expect("located");
    assert_eq!(
        (loc.line, loc.column, loc.end_line, loc.end_column),
        (1, 13, 1, 25)
    );
}

#[test]
fn unpretty_output_is_the_tokens_on_one_line() {
    let code = Builder::new()
        .pretty(false)
        .generate(CUMSUM)
        .expect("compiles");
    assert_eq!(code.lines().count(), 1);
    assert!(
        code.contains("pub fn cumsum (v : :: scan_runtime :: __private"),
        "{code}"
    );
    let file: syn::File = syn::parse_str(&code).expect("the output parses");
    assert_eq!(file.items.len(), 1);
}

#[test]
fn two_errors_are_rendered_with_their_lines_and_carets() {
    let errors = generate(TWO_ERRORS).expect_err("two mistakes");
    assert_eq!(errors.len(), 2);
    assert_eq!(errors.file(), "<source>");
    assert_eq!(
        errors.in_file("src/two.scan").to_string(),
        TWO_ERRORS_RENDERED
    );
}

#[test]
fn compile_fails_with_the_rendering_of_every_error_of_every_file() {
    let dir = scratch("errors");
    let two = dir.join("src/two.scan");
    let lex = dir.join("src/lex.scan");
    let good = dir.join("src/good.scan");
    write(&two, TWO_ERRORS);
    write(&lex, "pub fn f(x: f64) -> Result<f64> {\n    Ok(\"x)\n}\n");
    write(&good, CUMSUM);
    let out = dir.join("out");
    let err = Builder::new()
        .files([&two, &lex, &good])
        .out_dir(&out)
        .cargo_metadata(false)
        .compile()
        .expect_err("two files have errors");
    let (two, lex) = (two.display(), lex.display());
    let expected = format!(
        "{}{lex}:2:8: error: unterminated string: this string is never closed\n    Ok(\"x)\n       ^\nscan-codegen: 3 errors in {two}, {lex}",
        TWO_ERRORS_RENDERED.replace("src/two.scan", &two.to_string())
    );
    assert_eq!(err.to_string(), expected);
    // A build script's `main` prints the error with `{:?}`: the same text.
    assert_eq!(format!("{err:?}"), expected);
    assert!(matches!(&err, BuildError::Source(files) if files.len() == 2));
    // Nothing written, not even the good file's output.
    assert!(!out.exists());
}

#[test]
fn compile_writes_headed_output_named_after_the_input_only_when_it_changed() {
    let dir = scratch("writes");
    let input = dir.join("src/rnn.scan");
    write(&input, CUMSUM);
    let out = dir.join("out/nested");
    let mut builder = Builder::new();
    builder.file(&input).out_dir(&out).cargo_metadata(false);
    builder.compile().expect("compiles");
    let output = out.join("rnn.rs");
    let text = std::fs::read_to_string(&output).expect("written");
    assert_eq!(
        text,
        format!(
            "// @generated by scan-codegen from {}\n{}",
            input.display(),
            generate(CUMSUM).expect("compiles")
        )
    );
    // Compiled again with nothing changed: the file is not touched.
    let written = std::fs::metadata(&output)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(50));
    builder.compile().expect("compiles");
    let again = std::fs::metadata(&output)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert_eq!(written, again);
    // A changed output (here: edited by hand) is written again.
    write(&output, "// stale\n");
    builder.compile().expect("compiles");
    assert_eq!(std::fs::read_to_string(&output).expect("written"), text);
    // And with another option, other content.
    builder.runtime_path("::my_rt").compile().expect("compiles");
    let moved = std::fs::read_to_string(&output).expect("written");
    assert!(moved.contains(") -> ::my_rt::Result<"), "{moved}");
    assert!(!moved.contains("scan_runtime"), "{moved}");
}

#[test]
fn compile_reports_what_it_cannot_do() {
    let dir = scratch("cannot");
    let missing = dir.join("src/missing.scan");
    let err = Builder::new()
        .file(&missing)
        .out_dir(dir.join("out"))
        .cargo_metadata(false)
        .compile()
        .expect_err("no such file");
    assert!(matches!(&err, BuildError::Io { path, .. } if *path == missing));
    assert!(
        err.to_string()
            .starts_with(&format!("{}: ", missing.display())),
        "{err}"
    );

    let (a, b) = (dir.join("src/rnn.scan"), dir.join("rnn.scan"));
    write(&a, CUMSUM);
    write(&b, CUMSUM);
    let err = Builder::new()
        .files([&a, &b])
        .out_dir(dir.join("out"))
        .cargo_metadata(false)
        .compile()
        .expect_err("same output name");
    assert_eq!(
        err.to_string(),
        format!(
            "{} and {} would both be written to rnn.rs: rename one",
            a.display(),
            b.display()
        )
    );

    let err = Builder::new()
        .file(&a)
        .out_dir(dir.join("out"))
        .runtime_path("not a path")
        .cargo_metadata(false)
        .compile()
        .expect_err("bad runtime path");
    assert!(matches!(&err, BuildError::RuntimePath(p) if p == "not a path"));
    let errors = Builder::new()
        .runtime_path("not a path")
        .generate(CUMSUM)
        .expect_err("bad runtime path");
    assert_eq!(
        errors.to_string(),
        "<source>: error: invalid runtime path `not a path`: expected a Rust path such as `::scan_runtime` or `crate::rt`\n"
    );

    let err = Builder::new()
        .file("/")
        .out_dir(dir.join("out"))
        .cargo_metadata(false)
        .compile()
        .expect_err("no file name");
    assert!(matches!(err, BuildError::BadFileName(_)));
}

#[test]
fn spans_over_several_lines_get_carets_to_the_end_of_their_first_line() {
    let source = "pub fn g(x: Wrong<\n    f64>) -> Result<f64> {\n    Ok(1.0)\n}\n";
    let errors = generate(source).expect_err("bad type").in_file("g.scan");
    let rendered = errors.to_string();
    let mut lines = rendered.lines();
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("g.scan:1:13: error: unsupported parameter type")),
        "{rendered}"
    );
    assert_eq!(lines.next(), Some("pub fn g(x: Wrong<"));
    assert_eq!(lines.next(), Some("            ^^^^^^"));
    let loc = errors
        .iter()
        .next()
        .and_then(|e| e.location())
        .expect("located");
    assert_eq!((loc.line, loc.end_line, loc.end_column), (1, 2, 9));
}

#[test]
fn carets_line_up_under_tabs_and_the_end_of_input_is_placed_after_the_last_token() {
    let source = "pub fn f(v: ArrayView1<f64>) -> Result<Array1<f64>> {\n\tlet s = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, n_step = 3);\n\tOk(s)\n}\n";
    let rendered = generate(source)
        .expect_err("typo")
        .in_file("t.scan")
        .to_string();
    let lines: Vec<&str> = rendered.lines().collect();
    assert!(
        lines[0].starts_with("t.scan:2:68: error: unknown keyword `n_step`"),
        "{rendered}"
    );
    assert_eq!(
        lines[1],
        "\tlet s = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0, n_step = 3);"
    );
    assert_eq!(lines[2], format!("\t{}^^^^^^", " ".repeat(66)));

    let rendered = generate("pub fn f\n\n")
        .expect_err("cut short")
        .in_file("e.scan")
        .to_string();
    assert_eq!(
        rendered,
        "e.scan:1:9: error: unexpected end of input, expected parentheses\npub fn f\n        ^\n"
    );
}

#[test]
fn an_empty_file_generates_nothing() {
    assert_eq!(generate("").expect("nothing to compile"), "");
    assert_eq!(
        generate("// only a comment\n").expect("nothing to compile"),
        ""
    );
}
