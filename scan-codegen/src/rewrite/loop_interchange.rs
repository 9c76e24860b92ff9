//! Loop interchange: a recurrence whose step is elementwise — every element of every
//! result depends only on the same element of its own past taps, of same-shaped sequence
//! rows and of non-sequences that are scalars or have the row's shape — runs "element
//! chunks outer, steps inner" (`ScanOp::interchange`): the emitter takes a chunk of
//! elements, runs every step on it with its taps held in small local arrays, and writes
//! only the trace rows the output keeps. `power` over a large vector then does its k
//! multiplies per element in cache instead of k sweeps through memory.
//!
//! It applies when all of these hold (conservative; each has a "must not" test below):
//! - the step is elementwise: its nodes are only `Input`, `Const`, `Elemwise`, `Cast` and
//!   `Fused` chains of those (a `Dot`, `Reduce`, `Subtensor`, `SetSubtensor`, `Transpose`, `FillLike`, `Arange` or a
//!   nested `Scan` can make an element read other elements, or build new shapes);
//! - there is at least one recurrent output (a map has no state to keep in cache);
//! - every output's row has the same rank r >= 1 (scalar recurrences already live in
//!   registers);
//! - every sequence tap is a row of rank r, every output tap has rank r, and every
//!   non-sequence has rank 0 or r (same rank; the emitter checks at run time that the
//!   shapes are equal, and runs the ordinary loop otherwise, so broadcasting and shape
//!   errors stay exactly as they were);
//! - there is no `until` (the step that stops depends on all elements);
//! - the taps reach back at most [`MAX_ROWS`] rows in all (each output holds `max|tap| + 1`
//!   rows of one chunk in local arrays on the stack, 128 bytes each).
//!
//! A direction chosen at run time (`go_backwards = flag`) is left to the ordinary loop.
//! Any keep (save-mem), taps of any depth and `go_backwards` are fine: the flag changes the
//! loop's order, not what it computes; each element sees the same operations in the same
//! order, so results are bit-identical. The emitter also falls back to the ordinary loop
//! at run time for zero steps or inputs that are not contiguous (standard layout).

use super::{scan_label, Log};
use crate::ir::{Graph, Op, ScanOp};

/// At most this many rows of chunk history in all (`max|tap| + 1` per output): 8 KiB of
/// stack per chunk loop.
pub const MAX_ROWS: usize = 64;

pub fn run(g: &mut Graph, log: &mut Log) {
    for node in &mut g.nodes {
        let label = scan_label(node);
        let Op::Scan(op) = &mut node.op else { continue };
        match eligible(op) {
            Ok(()) if !op.interchange => {
                op.interchange = true;
                let outputs = op.outputs.len();
                let s = if outputs == 1 { "" } else { "s" };
                log.fired(format!(
                    "{label}: elementwise recurrence over {outputs} output{s}: element chunks outer, steps inner"
                ));
            }
            // An earlier round's decision that no longer holds (never expected: the other
            // passes only remove or move work).
            Err(why) if op.interchange => {
                op.interchange = false;
                log.fired(format!("{label}: steps outer again ({why})"));
            }
            _ => {}
        }
    }
}

/// `Ok` when `op` may run element chunks outer, else why not.
pub fn eligible(op: &ScanOp) -> Result<(), String> {
    let step = &op.step;
    if op.has_until {
        return Err("`until` depends on every element".to_string());
    }
    if op.backwards_flag {
        return Err("the direction is chosen at run time".to_string());
    }
    if !op.outputs.iter().any(|o| o.is_recurrent()) {
        return Err("no recurrent output".to_string());
    }
    if let Some(node) = step.nodes.iter().find(|n| !elementwise(&n.op)) {
        return Err(format!("`{}` is not elementwise", node.label));
    }
    let results = &step.outputs[..op.outputs.len()];
    let rank = match results.first() {
        Some(&r) => step.ty(r).rank,
        None => return Err("no output".to_string()),
    };
    if rank == 0 {
        return Err("scalar rows".to_string());
    }
    if let Some(&r) = results.iter().find(|&&r| step.ty(r).rank != rank) {
        return Err(format!("`{}` has another rank", step.node(r).label));
    }
    let rows: usize = op.outputs.iter().map(|o| o.depth() as usize + 1).sum();
    if rows > MAX_ROWS {
        return Err(format!(
            "{rows} rows of history, more than {MAX_ROWS} on the stack"
        ));
    }
    let first_ns = op.first_non_sequence_step_input();
    for (pos, &input) in step.inputs.iter().enumerate() {
        let r = step.ty(input).rank;
        let fits = if pos < first_ns {
            r == rank
        } else {
            r == 0 || r == rank
        };
        if !fits {
            return Err(format!(
                "step argument `{}` has rank {r}, rows have rank {rank}",
                step.node(input).label
            ));
        }
    }
    Ok(())
}

/// An operation whose every output element reads only the same element of its operands
/// (or scalars): a fused chain counts when its own body is made of such operations.
fn elementwise(op: &Op) -> bool {
    match op {
        Op::Input { .. } | Op::Const(_) | Op::Elemwise(_) | Op::Cast => true,
        Op::Fused(body) => {
            body.outputs.len() == 1
                && body.nodes.iter().all(|n| {
                    matches!(
                        n.op,
                        Op::Input { .. } | Op::Const(_) | Op::Elemwise(_) | Op::Cast
                    )
                })
        }
        _ => false,
    }
}

/// Whether `g` holds a scan marked for interchange (for tests).
#[cfg(test)]
fn interchanged(g: &Graph) -> Vec<bool> {
    g.nodes
        .iter()
        .filter_map(|n| match &n.op {
            Op::Scan(op) => Some(op.interchange),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, vec1, Value};
    use super::super::{Config, Pass};

    const POWER: &str = "pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
        let result = scan(|prior_result, a| prior_result * a, outputs_info = ones_like(a), non_sequences = a, n_steps = k);
        Ok(result[-1])
    }";

    /// Whether the pass alone fires on `src`, checking the printed IR agrees.
    fn fires(src: &str) -> bool {
        let (ir, fired) = apply(src, Pass::LoopInterchange);
        assert_eq!(
            fired.is_empty(),
            !ir.contains(" interchange"),
            "{fired:?}\n{ir}"
        );
        !fired.is_empty()
    }

    #[test]
    fn power_fires_and_says_so() {
        let (ir, fired) = apply(POWER, Pass::LoopInterchange);
        assert_eq!(
            fired,
            vec!["loop_interchange: scan of `prior_result * a`: elementwise recurrence over 1 output: element chunks outer, steps inner"]
        );
        assert!(ir.contains("until=false interchange"), "{ir}");
        for n in [0i64, 1, 2, 7] {
            assert_same_results(POWER, "power", &[vec1(&[1.5, -0.5, 2.0]), Value::from(n)]);
        }
    }

    /// A direction chosen at run time stays with the ordinary loop (a literal one
    /// interchanges).
    #[test]
    fn a_run_time_direction_does_not_fire() {
        let src = |dir: &str| {
            format!(
                "pub fn f(u: ArrayView2<f64>, x0: ArrayView1<f64>, back: bool) -> Result<Array2<f64>> {{
                    let x = scan(|u_t, x| x * 0.5 + u_t, sequences = u, outputs_info = x0, go_backwards = {dir});
                    Ok(x)
                }}"
            )
        };
        assert!(fires(&src("true")));
        assert!(!fires(&src("back")));
        let u = Value::from(ndarray::Array2::from_shape_fn((4, 2), |(i, j)| {
            i as f64 - j as f64
        }));
        for back in [false, true] {
            assert_same_results(
                &src("back"),
                "f",
                &[u.clone(), vec1(&[1.0, -1.0]), Value::from(back)],
            );
        }
    }

    #[test]
    fn fires_once_with_every_pass() {
        let (functions, fired) = crate::compile_with(POWER, &Config::all()).unwrap();
        let ours: Vec<_> = fired
            .iter()
            .filter(|f| f.pass == "loop_interchange")
            .collect();
        assert_eq!(ours.len(), 1, "{fired:?}");
        assert_eq!(super::interchanged(&functions[0].graph), vec![true]);
    }

    #[test]
    fn fires_with_mitsot_taps_a_sequence_a_scalar_and_a_map_output() {
        let src = "pub fn f(u: ArrayView2<f64>, x0: ArrayView2<f64>, c: f64) -> Result<(Array2<f64>, Array2<f64>)> {
            let (x, y) = scan(
                |u_t, x_tm3, x_tm1, c| (x_tm1 * c + x_tm3 * 0.5 + u_t, exp(x_tm1) - u_t),
                sequences = u,
                outputs_info = [taps(x0, [-3, -1]), None],
                non_sequences = c,
            );
            Ok((x, y))
        }";
        assert!(fires(src));
        let u = Value::from(ndarray::Array2::from_shape_fn((5, 2), |(i, j)| {
            i as f64 - j as f64
        }));
        let x0 = Value::from(ndarray::Array2::from_shape_fn((3, 2), |(i, j)| {
            0.1 * (i + j) as f64
        }));
        assert_same_results(src, "f", &[u, x0, Value::from(0.9)]);
    }

    #[test]
    fn fires_with_an_integer_state_and_casts() {
        let src =
            "pub fn f(x0: ArrayView1<i64>, a: ArrayView1<i32>, k: usize) -> Result<Array1<f64>> {
            let x = scan(|x, a| x * 3 + a, outputs_info = x0, non_sequences = a, n_steps = k);
            Ok(x[-1] * 0.5)
        }";
        assert!(fires(src));
    }

    #[test]
    fn must_not_fire_when_an_element_reads_other_elements() {
        for (step, what) in [
            ("|h, w| tanh(h.dot(w))", "a dot"),
            ("|h, w| h * sum(h)", "a reduction"),
            ("|h, w| h * h[0]", "indexing"),
            ("|h, w| h + w[0]", "indexing a non-sequence row"),
            ("|h, w| transpose(h) * 2.0", "a transpose"),
            ("|h, w| set_subtensor(h[0], 1.0)", "set_subtensor"),
            ("|h, w| zeros_like(h) + h", "fill_like"),
        ] {
            let src = format!(
                "pub fn f(h0: ArrayView1<f64>, w: ArrayView2<f64>, k: usize) -> Result<Array2<f64>> {{
                    let h = scan({step}, outputs_info = h0, non_sequences = w, n_steps = k);
                    Ok(h)
                }}"
            );
            assert!(!fires(&src), "{what}: {step}");
        }
    }

    #[test]
    fn must_not_fire_on_a_nested_scan_in_the_step() {
        let src = "pub fn f(h0: ArrayView1<f64>, k: usize) -> Result<Array2<f64>> {
            let h = scan(
                |h| scan(|g| g * 0.5, outputs_info = h, n_steps = 2)[-1],
                outputs_info = h0,
                n_steps = k,
            );
            Ok(h)
        }";
        let (ir, fired) = apply(src, Pass::LoopInterchange);
        // The inner scan is elementwise and may be interchanged; the outer one may not.
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert!(fired[0].contains("scan of `g * 0.5`"), "{fired:?}");
        let (functions, _) =
            crate::compile_with(src, &Config::only(&[Pass::LoopInterchange])).unwrap();
        assert_eq!(
            super::interchanged(&functions[0].graph),
            vec![false],
            "{ir}"
        );
    }

    #[test]
    fn must_not_fire_with_until() {
        let src = "pub fn f(x0: ArrayView1<f64>, k: usize) -> Result<Array2<f64>> {
            let x = scan(|x| (x * 0.5, until(x[0] < 0.1)), outputs_info = x0, n_steps = k);
            Ok(x)
        }";
        assert!(!fires(src));
        let src = "pub fn f(x0: ArrayView1<f64>, lim: f64, k: usize) -> Result<Array2<f64>> {
            let x = scan(|x, lim| (x * 0.5, until(lim < 0.1)), outputs_info = x0, non_sequences = lim, n_steps = k);
            Ok(x)
        }";
        assert!(
            !fires(src),
            "until on a scalar still stops every element's loop"
        );
    }

    #[test]
    fn must_not_fire_with_deep_taps() {
        let deep = |tap: i64| {
            format!(
                "pub fn f(x0: ArrayView2<f64>, k: usize) -> Result<Array2<f64>> {{
                    let x = scan(|a, b| a * 0.5 + b, outputs_info = taps(x0, [{tap}, -1]), n_steps = k);
                    Ok(x)
                }}"
            )
        };
        assert!(fires(&deep(-63)), "64 rows of history");
        assert!(!fires(&deep(-64)), "65 rows of history");
    }

    #[test]
    fn must_not_fire_on_scalar_rows() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let s = scan(|u_t, s| s + u_t, sequences = u, outputs_info = 0.0);
            Ok(s)
        }";
        assert!(!fires(src));
    }

    #[test]
    fn must_not_fire_on_a_map() {
        let src = "pub fn f(u: ArrayView2<f64>) -> Result<Array2<f64>> {
            let y = scan(|u_t| u_t * 2.0, sequences = u);
            Ok(y)
        }";
        assert!(!fires(src));
    }

    #[test]
    fn must_not_fire_when_ranks_differ() {
        // Outputs of different ranks.
        let src = "pub fn f(x0: ArrayView1<f64>, m0: ArrayView2<f64>, k: usize) -> Result<(Array2<f64>, Array3<f64>)> {
            let (x, m) = scan(|x, m| (x * 2.0, m * 0.5), outputs_info = [x0, m0], n_steps = k);
            Ok((x, m))
        }";
        assert!(!fires(src));
        // A sequence row of another rank than the output (broadcast against it).
        let src = "pub fn f(u: ArrayView1<f64>, x0: ArrayView1<f64>) -> Result<Array2<f64>> {
            let x = scan(|u_t, x| x + u_t, sequences = u, outputs_info = x0);
            Ok(x)
        }";
        assert!(!fires(src));
        // A non-sequence of a lower, non-zero rank (a row broadcast over a matrix state).
        let src =
            "pub fn f(x0: ArrayView2<f64>, v: ArrayView1<f64>, k: usize) -> Result<Array3<f64>> {
            let x = scan(|x, v| x * v, outputs_info = x0, non_sequences = v, n_steps = k);
            Ok(x)
        }";
        assert!(!fires(src));
        // A non-sequence of a higher rank (unused here: still not taken, conservatively).
        let src =
            "pub fn f(x0: ArrayView1<f64>, m: ArrayView2<f64>, k: usize) -> Result<Array2<f64>> {
            let x = scan(|x, m| x * 2.0, outputs_info = x0, non_sequences = m, n_steps = k);
            Ok(x)
        }";
        assert!(!fires(src));
    }
}
