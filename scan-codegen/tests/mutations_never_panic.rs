//! The compiler never panics and never overflows its stack, whatever the tokens:
//! - every word of a few real programs is deleted or replaced by a token from a list of
//!   likely mistakes, and each mutant goes through the whole pipeline (`expand`, which emits
//!   either code or errors). Errors are expected; panics are bugs;
//! - random mutants (several words changed at once) and random token soup, with brackets
//!   balanced so that it lexes, sometimes nested hundreds deep;
//! - deep and wide programs (a 10,000-deep parenthesised expression, a 5,000-element tuple,
//!   operator chains, nested scans, a deep type), each run on a thread with 4 MiB of stack
//!   (half of what rustc's thread has) with its time and peak heap measured: each is an error or code,
//!   as pinned below, within bounds.
//!
//! The random cases are as many as `SCAN_FUZZ_CASES` says (default 1,500 of each kind),
//! from the seed `SCAN_FUZZ_SEED` (default fixed; a failure prints the seed). A longer run:
//!
//!     SCAN_FUZZ_CASES=200000 cargo test --release -p scan-codegen --test mutations_never_panic
//!
//! (add `SCAN_FUZZ_SEED=<n>` for other programs than the default run's).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic;
use std::time::{Duration, Instant};

use scan_codegen::parse::depth::MAX_DEPTH;

const PROGRAMS: &[&str] = &[
    "pub fn rnn(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>)
         -> Result<(Array2<f64>, Array2<f64>)> {
         let (x, y) = scan(
             |u_tm4, u_t, x_tm3, x_tm1, y_tm1| (tanh(x_tm1.dot(w) + u_t + u_tm4 + y_tm1), x_tm3),
             sequences = [taps(u, [-4, 0])],
             outputs_info = [taps(x0, [-3, -1]), y0],
         );
         Ok((x, y))
     }",
    "pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
         let result = scan(|p, a| p * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
         Ok(result[-1])
     }",
    "pub fn pow2(m: f64) -> Result<Array1<f64>> {
         let v = scan(|p, m| (p * 2.0, until(p * 2.0 > m)), outputs_info = 1.0, non_sequences = m, n_steps = 1024);
         Ok(v)
     }",
    "pub fn nested(m: ArrayView2<f64>, s: f64) -> Result<f64> {
         let totals = map(|row| reduce(|x, acc| acc + x * s, sequences = row, outputs_info = 0.0), sequences = m);
         let z = set_subtensor(totals[0..2], 1.0);
         Ok(z.sum() + totals.max(0) + foldr(|x, a| a - x, sequences = totals, outputs_info = 0.0))
     }",
    "pub fn misc(loc: ArrayView2<i32>, v: ArrayView1<f32>, model: ArrayView2<f32>) -> Result<Array3<f32>> {
         let r = scan(|l, a, m| set_subtensor(zeros_like(m)[l[0]][l[1]], a), outputs_info = None,
                      sequences = [loc, v], non_sequences = model, go_backwards = true, strict = true);
         Ok(where_(r > 0.0, r, -r) as f32)
     }",
];

const REPLACEMENTS: &[&str] = &[
    "0",
    "-1",
    "1.5",
    "true",
    "x",
    "(",
    ")",
    "[",
    "]",
    ",",
    ";",
    "None",
    "taps(u, [0])",
    "until(true)",
    "scan",
    "|a|",
    "n_steps = -1",
    "[]",
    "()",
    "a.dot(a)",
    "u[-100]",
    "..",
    "as bool",
    "sum(x, 7)",
    "i64",
    "ArrayView0<f64>",
    "Array9<f64>",
    "outputs_info = [None]",
];

fn words(src: &str) -> Vec<&str> {
    src.split_inclusive(|c: char| " ,()[]|.;".contains(c))
        .collect()
}

#[test]
fn mutants_are_compiled_or_rejected_never_a_panic() {
    panic::set_hook(Box::new(|_| {}));
    let mut panics = Vec::new();
    let mut count = 0;
    for program in PROGRAMS {
        let w = words(program);
        for i in 0..w.len() {
            let mut variants = vec![String::new()];
            variants.extend(REPLACEMENTS.iter().map(|r| format!("{r} ")));
            for replacement in variants {
                let mutant: String = w[..i]
                    .iter()
                    .copied()
                    .chain(std::iter::once(replacement.as_str()))
                    .chain(w[i + 1..].iter().copied())
                    .collect();
                count += 1;
                let Ok(tokens) = mutant.parse::<proc_macro2::TokenStream>() else {
                    continue;
                };
                if panic::catch_unwind(|| scan_codegen::expand(tokens)).is_err() {
                    panics.push(mutant);
                }
            }
        }
    }
    let _ = panic::take_hook();
    assert!(count > 5000, "only {count} mutants");
    assert!(
        panics.is_empty(),
        "{} of {count} mutants panicked the compiler, e.g.:\n{}",
        panics.len(),
        panics
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n---\n")
    );
}

// ---------------------------------------------------------------------------------------
// Random mutants and token soup.

/// xorshift64*: a few lines, no dependency, reproducible from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

fn cases() -> usize {
    env_number("SCAN_FUZZ_CASES", 1500) as usize
}

fn seed() -> u64 {
    // xorshift needs a non-zero state.
    env_number("SCAN_FUZZ_SEED", 0x5ca9_2024) | 1
}

/// Runs `expand` on each source that lexes; the sources that panicked, and how many lexed.
fn panicking(sources: impl Iterator<Item = String>) -> (Vec<String>, usize) {
    let mut panics = Vec::new();
    let mut lexed = 0;
    for source in sources {
        let Ok(tokens) = source.parse::<proc_macro2::TokenStream>() else {
            continue;
        };
        lexed += 1;
        if panic::catch_unwind(|| scan_codegen::expand(tokens)).is_err() {
            panics.push(source);
        }
    }
    (panics, lexed)
}

fn report(what: &str, panics: &[String], lexed: usize, seed: u64) {
    assert!(
        panics.is_empty(),
        "{} of {lexed} {what} panicked the compiler (SCAN_FUZZ_SEED={seed}), e.g.:\n{}",
        panics.len(),
        panics
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n---\n")
    );
}

#[test]
fn random_mutants_are_compiled_or_rejected_never_a_panic() {
    let seed = seed();
    let mut rng = Rng(seed);
    let n = cases();
    let mutants = (0..n).map(|_| {
        let mut w: Vec<String> = words(PROGRAMS[rng.below(PROGRAMS.len())])
            .into_iter()
            .map(String::from)
            .collect();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(w.len());
            match rng.below(3) {
                0 => w[i] = String::new(),
                1 => w[i] = format!("{} ", rng.pick(REPLACEMENTS)),
                // A word repeated: a duplicate argument, keyword or operand.
                _ => {
                    let j = rng.below(w.len());
                    w[i] = w[j].clone();
                }
            }
        }
        w.concat()
    });
    panic::set_hook(Box::new(|_| {}));
    let (panics, lexed) = panicking(mutants);
    let _ = panic::take_hook();
    // A mutant with an unbalanced bracket does not lex (about half of them).
    assert!(lexed > n / 3, "only {lexed} of {n} mutants lexed");
    report("random mutants", &panics, lexed, seed);
}

/// The words of the step language and of Rust, brackets apart.
const SOUP: &[&str] = &[
    "x",
    "v",
    "a",
    "b",
    "f64",
    "i32",
    "bool",
    "usize",
    "0",
    "1",
    "-1",
    "2.5",
    "1e300",
    "0i64",
    "true",
    "None",
    "scan",
    "map",
    "reduce",
    "foldl",
    "foldr",
    "taps",
    "until",
    "dot",
    "sum",
    "tanh",
    "where_",
    "zeros_like",
    "arange",
    "set_subtensor",
    "shape",
    "T",
    "sequences",
    "outputs_info",
    "non_sequences",
    "n_steps",
    "go_backwards",
    "strict",
    "unroll",
    "let",
    "fn",
    "pub",
    "return",
    "if",
    "else",
    "for",
    "in",
    "mut",
    "as",
    "Ok",
    "Result",
    "ArrayView1",
    "Array1",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "<",
    ">",
    "<=",
    "&&",
    "||",
    "!",
    "=",
    ",",
    ";",
    ":",
    ".",
    "..",
    "|",
    "?",
    "&",
    "->",
    "#",
    "'a",
];

fn soup(rng: &mut Rng) -> String {
    let len = 1 + rng.below(80);
    // Now and then a deep one: brackets only open for a while.
    let deep = rng.below(20) == 0;
    let mut out = String::new();
    let mut open: Vec<char> = Vec::new();
    for i in 0..len + if deep { 400 } else { 0 } {
        let opening = deep && i < 400;
        match if opening { 0 } else { rng.below(10) } {
            0 | 1 => {
                let (o, c) = [('(', ')'), ('[', ']'), ('{', '}')][rng.below(3)];
                out.push(o);
                open.push(c);
            }
            2 if !open.is_empty() => out.push(open.pop().unwrap_or(')')),
            _ => out.push_str(rng.pick(SOUP)),
        }
        out.push(' ');
    }
    while let Some(c) = open.pop() {
        out.push(c);
    }
    match rng.below(4) {
        // Bare soup: the block's own parser sees it.
        0 => out,
        // In a function body, where the step language is parsed.
        1 | 2 => format!("pub fn f(x: f64, v: ArrayView1<f64>) -> Result<f64> {{ {out} }}"),
        // As a scan's step.
        _ => format!(
            "pub fn f(v: ArrayView1<f64>) -> Result<Array1<f64>> {{
                 let r = scan(|x, acc| {out}, sequences = v, outputs_info = 0.0);
                 Ok(r)
             }}"
        ),
    }
}

#[test]
fn token_soup_is_rejected_never_a_panic() {
    let seed = seed();
    let mut rng = Rng(seed.rotate_left(17) | 1);
    let n = cases();
    let sources: Vec<String> = (0..n).map(|_| soup(&mut rng)).collect();
    panic::set_hook(Box::new(|_| {}));
    let (panics, lexed) = panicking(sources.into_iter());
    let _ = panic::take_hook();
    // Brackets are balanced and every word lexes.
    assert_eq!(lexed, n);
    report("token soups", &panics, lexed, seed);
}

// ---------------------------------------------------------------------------------------
// Deep and wide programs, with their time and peak heap.

/// The system allocator, counting the bytes live on each thread and their peak.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        grew(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            grew(new_size as isize - layout.size() as isize);
        }
        q
    }
}

fn grew(bytes: isize) {
    // `try_with`: nothing to count while a thread's locals are being torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What `expand` made of a source: its first compile error, or `None` for code.
struct Outcome {
    error: Option<String>,
    stub: bool,
    time: Duration,
    peak_heap: usize,
}

/// The stack of the thread each deep case runs on.
const STACK: usize = 4 << 20;

fn expand_on_small_stack(source: String) -> Outcome {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let tokens: proc_macro2::TokenStream = source.parse().expect("the case lexes");
            let start = Instant::now();
            let base = LIVE.with(Cell::get);
            PEAK.with(|p| p.set(base));
            let out = scan_codegen::expand(tokens);
            let time = start.elapsed();
            let peak_heap = (PEAK.with(Cell::get) - base).max(0) as usize;
            let text = out.to_string();
            drop(out);
            let error = text.find("compile_error !").map(|at| {
                let message = &text[at..];
                let start = message.find('"').map_or(0, |i| i + 1);
                let end = message[start..]
                    .find('"')
                    .map_or(message.len(), |i| start + i);
                message[start..end].to_string()
            });
            Outcome {
                error,
                stub: text.contains("scan! reported errors for this function"),
                time,
                peak_heap,
            }
        })
        .expect("a thread")
        .join()
        .unwrap_or_else(|_| panic!("the compiler panicked"))
}

/// A function of `x: f64` and `v: ArrayView1<f64>` returning `value` (an `f64`), after
/// `stmts`.
fn program(stmts: &str, value: &str) -> String {
    format!("pub fn f(x: f64, v: ArrayView1<f64>) -> Result<f64> {{ {stmts} Ok({value}) }}")
}

fn parens(n: usize) -> String {
    format!("{}x{}", "(".repeat(n), ")".repeat(n))
}

/// `scan(|a1| scan(|a2| .. a_n + 1.0 .., outputs_info = a1, n_steps = k)[-1], ..)[-1]`:
/// `a0 + k^n`.
fn nested_scans(n: usize, k: usize) -> String {
    let mut e = format!("a{n} + 1.0");
    for i in (1..=n).rev() {
        e = format!(
            "scan(|a{i}| {e}, outputs_info = a{}, n_steps = {k})[-1]",
            i - 1
        );
    }
    e
}

const TOO_DEEP: &str = "nesting deeper than 256 levels";

#[test]
fn deep_and_wide_programs_give_an_error_or_code_in_bounded_time_and_memory() {
    assert_eq!(MAX_DEPTH, 256, "TOO_DEEP names the bound");
    let n_terms = |n: usize| vec!["x"; n].join(" + ");
    let chain = |n: usize| format!("x{}", ".abs()".repeat(n));
    let cases: Vec<(&str, String, Option<&str>)> = vec![
        (
            "10,000-deep parentheses",
            program("", &parens(10_000)),
            Some(TOO_DEEP),
        ),
        (
            "parentheses just within the bound",
            program("", &parens(MAX_DEPTH - 20)),
            None,
        ),
        (
            "10,000-deep brackets in a statement",
            program(
                &format!("let y = {}x{};", "[".repeat(10_000), "]".repeat(10_000)),
                "x",
            ),
            Some(TOO_DEEP),
        ),
        (
            "10,000-deep blocks",
            program(
                "",
                &format!("{}x{}", "{".repeat(10_000), "}".repeat(10_000)),
            ),
            Some(TOO_DEEP),
        ),
        (
            "5,000-element tuple",
            program(&format!("let t = ({});", vec!["x"; 5_000].join(", ")), "x"),
            Some("this value is a tuple of 5000 values"),
        ),
        (
            "5,000-element tuple of sums returned",
            format!(
                "pub fn f(x: f64) -> Result<({})> {{ Ok(({})) }}",
                vec!["f64"; 5_000].join(", "),
                vec!["x + 1.0"; 5_000].join(", ")
            ),
            None,
        ),
        (
            "10,000 unary minuses",
            program("", &format!("{}x", "- ".repeat(10_000))),
            Some(TOO_DEEP),
        ),
        (
            "240 unary minuses",
            program("", &format!("{}x", "- ".repeat(240))),
            None,
        ),
        (
            "10,000 terms",
            program("", &n_terms(10_000)),
            Some(TOO_DEEP),
        ),
        ("120 terms", program("", &n_terms(120)), None),
        ("80 calls in a chain", program("", &chain(80)), None),
        (
            "3,000 calls in a chain",
            program("", &chain(3_000)),
            Some(TOO_DEEP),
        ),
        (
            "casts in a chain",
            program("", &format!("x{}", " as f32 as f64".repeat(60))),
            None,
        ),
        (
            "nested scans",
            program("let a0 = x;", &nested_scans(20, 2)),
            None,
        ),
        (
            "1,000 nested scans",
            program("let a0 = x;", &nested_scans(1_000, 2)),
            Some(TOO_DEEP),
        ),
        (
            "2,000 statements",
            program(
                &(1..=2_000)
                    .map(|i| format!("let y{i} = y{} * 0.5 + x;", i - 1))
                    .collect::<String>()
                    .replace("y0 ", "x "),
                "y2000",
            ),
            None,
        ),
        (
            "a 10,000-deep type",
            format!(
                "pub fn f(x: {}f64{}) -> Result<f64> {{ Ok(1.0) }}",
                "Box<".repeat(10_000),
                ">".repeat(10_000)
            ),
            Some(TOO_DEEP),
        ),
        (
            "a deep type within the bound",
            format!(
                "pub fn f(x: {}f64{}) -> Result<f64> {{ Ok(1.0) }}",
                "Box<".repeat(50),
                ">".repeat(50)
            ),
            Some("unsupported parameter type"),
        ),
    ];
    let mut failures = Vec::new();
    for (name, source, expected) in cases {
        let outcome = expand_on_small_stack(source);
        eprintln!(
            "{name}: {:?} in {:.1?}, peak heap {} KiB",
            outcome
                .error
                .as_ref()
                .map(|e| e.chars().take(60).collect::<String>()),
            outcome.time,
            outcome.peak_heap >> 10
        );
        let as_expected = match (expected, &outcome.error) {
            (None, None) => true,
            (Some(e), Some(got)) => got.contains(e),
            _ => false,
        };
        if !as_expected {
            let got = outcome
                .error
                .as_ref()
                .map(|e| e.chars().take(200).collect::<String>());
            failures.push(format!("{name}: expected {expected:?}, got {got:?}"));
        }
        // On an error, the function is still declared (a stub), so its callers type-check;
        // unless its signature is what nests too deeply.
        if outcome.error.is_some() && !outcome.stub && !name.contains("10,000-deep type") {
            failures.push(format!("{name}: no stub of `f` after the error"));
        }
        // Generous bounds (a debug build on a loaded machine): a blow-up, not a slowdown.
        if outcome.time > Duration::from_secs(30) {
            failures.push(format!("{name}: took {:?}", outcome.time));
        }
        if outcome.peak_heap > 512 << 20 {
            failures.push(format!("{name}: peak heap {} MiB", outcome.peak_heap >> 20));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The reference evaluator recurses over the IR too: programs at the bound evaluate on the
/// same small stack.
#[cfg(feature = "evaluator")]
#[test]
fn deep_programs_evaluate_on_a_small_stack() {
    use scan_codegen::eval::{run, Value};
    let cases = [
        (program("", &parens(MAX_DEPTH - 20)), 2.0),
        (program("", &format!("{}x", "- ".repeat(240))), 2.0),
        (program("", &vec!["x"; 120].join(" + ")), 240.0),
        (program("let a0 = x;", &nested_scans(20, 1)), 3.0),
        (program("let a0 = x;", &nested_scans(3, 2)), 10.0),
    ];
    for (source, expected) in cases {
        let got = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn(move || {
                let args = vec![
                    Value::F64(ndarray::arr0(2.0).into_dyn()),
                    Value::F64(ndarray::arr1(&[1.0, 2.0]).into_dyn()),
                ];
                run(&source, "f", args)
            })
            .expect("a thread")
            .join()
            .unwrap_or_else(|_| panic!("the evaluator panicked"))
            .expect("evaluates");
        assert_eq!(
            format!("{got:?}"),
            format!("{:?}", [Value::F64(ndarray::arr0(expected).into_dyn())])
        );
    }
}
