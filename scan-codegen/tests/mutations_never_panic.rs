//! Mutated programs never panic the compiler: every word of a few real programs is deleted
//! or replaced by a token from a list of likely mistakes, and each mutant goes through the
//! whole pipeline (`expand`, which emits either code or errors). Errors are expected;
//! panics are bugs.

use std::panic;

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
