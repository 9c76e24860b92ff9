//! A program with 50 outputs (with taps, several kinds) and the rewrites on compiles in
//! well under a second: no pass is quadratic in a way that shows at realistic sizes.
//! (The bound is generous on purpose: this guards against a blow-up, not a regression
//! of a few percent, which is what benchmarks are for.)

use std::time::Instant;

fn program(outputs: usize) -> String {
    let mut args = Vec::new();
    let mut results = Vec::new();
    let mut infos = Vec::new();
    for i in 0..outputs {
        match i % 3 {
            // MITSOT with taps [-2, -1]
            0 => {
                args.push(format!("a{i}_tm2, a{i}_tm1"));
                results.push(format!("a{i}_tm1 * 0.5 + a{i}_tm2 * 0.25 + u_t"));
                infos.push("taps(x0, [-2, -1])".to_string());
            }
            // SITSOT
            1 => {
                args.push(format!("b{i}"));
                results.push(format!("tanh(b{i} + u_t * {i}.0)"));
                infos.push("h0".to_string());
            }
            // NITSOT
            _ => {
                results.push(format!("exp(u_t) * {i}.0"));
                infos.push("None".to_string());
            }
        }
    }
    let names: Vec<String> = (0..outputs).map(|i| format!("o{i}")).collect();
    let sums: Vec<String> = names.iter().map(|n| format!("{n}[-1]")).collect();
    format!(
        "pub fn many(u: ArrayView1<f64>, x0: ArrayView1<f64>, h0: f64) -> Result<f64> {{
            let ({names}) = scan(
                |u_t, {args}| ({results}),
                sequences = u,
                outputs_info = [{infos}],
            );
            Ok({sums})
        }}",
        names = names.join(", "),
        args = args.join(", "),
        results = results.join(", "),
        infos = infos.join(", "),
        sums = sums.join(" + "),
    )
}

#[test]
fn fifty_outputs_with_taps_compile_in_well_under_a_second() {
    let source = program(50);
    // Warm-up (lazy statics), then the measured expansion.
    scan_codegen::expand_to_string(&program(3)).unwrap();
    let start = Instant::now();
    let expanded = scan_codegen::expand_to_string(&source).unwrap_or_else(|e| panic!("{e}"));
    let elapsed = start.elapsed();
    assert!(expanded.contains("pub fn many"), "{expanded}");
    assert!(
        elapsed.as_secs_f64() < 1.0,
        "50 outputs took {elapsed:?} to compile"
    );
    let explained = scan_codegen::explain(&source).unwrap();
    assert!(explained.contains("save_mem"), "{explained}");
}
