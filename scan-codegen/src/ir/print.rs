//! Text form of a graph, with tap information on scan nodes: what `explain` prints and what
//! snapshot tests compare (the equivalent of PyTensor's `debugprint(print_op_info=True)`).

use std::fmt::Write;

use super::graph::{Graph, Literal, Op};
use super::Function;

pub fn function(f: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    graph(&f.graph, 1, &mut out);
    out
}

fn graph(g: &Graph, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for (i, node) in g.nodes.iter().enumerate() {
        let inputs: Vec<String> = node.inputs.iter().map(|n| format!("%{}", n.0)).collect();
        let op = match &node.op {
            Op::Input { index, name } => format!("input#{index} {name}"),
            Op::Const(Literal::Bool(b)) => format!("const {b}"),
            Op::Const(Literal::Int(v)) => format!("const {v}"),
            Op::Const(Literal::Float(v)) => format!("const {v:?}"),
            Op::Elemwise(e) => e.name().to_string(),
            Op::Cast => "cast".to_string(),
            Op::Dot => "dot".to_string(),
            Op::MatMul => "matmul".to_string(),
            Op::Reduce { op, axis } => match axis {
                Some(a) => format!("{}(axis={a})", op.name()),
                None => op.name().to_string(),
            },
            Op::FillLike { value } => format!("fill_like({value:?})"),
            Op::Arange => "arange".to_string(),
            Op::Shape { axis } => format!("shape[{axis}]"),
            Op::Full => "full".to_string(),
            Op::Eye => "eye".to_string(),
            Op::Reshape => "reshape".to_string(),
            Op::Concatenate { axis } => format!("concatenate(axis={axis})"),
            Op::Stack { axis } => format!("stack(axis={axis})"),
            Op::Squeeze { axis } => format!("squeeze(axis={axis})"),
            Op::BroadcastTo => "broadcast_to".to_string(),
            Op::BroadcastArrays { index } => format!("broadcast_arrays[{index}]"),
            Op::Unbroadcast => "sum_to_shape".to_string(),
            Op::Diag => "diag".to_string(),
            Op::Tri { upper } => if *upper { "triu" } else { "tril" }.to_string(),
            Op::IdentityLike => "identity_like".to_string(),
            Op::Linalg(op) => op.describe(),
            Op::Take { axis } => format!("take(axis={axis})"),
            Op::MaskTake => "take_mask".to_string(),
            Op::MaskSet { inc } => if *inc { "inc_mask" } else { "set_mask" }.to_string(),
            Op::Scatter { axis, inc } => format!(
                "{}(axis={axis})",
                if *inc { "inc_scatter" } else { "set_scatter" }
            ),
            Op::Random(r) => format!("random.{}", r.name()),
            Op::Cumulative { product, axis } => format!(
                "{}{}",
                if *product { "cumprod" } else { "cumsum" },
                axis.map(|a| format!("(axis={a})")).unwrap_or_default()
            ),
            Op::Subtensor { path } => format!("subtensor{path:?}"),
            Op::SetSubtensor { path, inc } => {
                format!(
                    "{}{path:?}",
                    if *inc {
                        "inc_subtensor"
                    } else {
                        "set_subtensor"
                    }
                )
            }
            Op::Transpose => "transpose".to_string(),
            Op::Permute { axes } => format!("transpose{axes:?}"),
            Op::ZeroStepShape => "zero_step_shape".to_string(),
            Op::LastOr => "last_or".to_string(),
            Op::DotSum { transpose, .. } => match transpose {
                [false, false] => "dot_sum".to_string(),
                [true, false] => "dot_sum(p.T)".to_string(),
                [false, true] => "dot_sum(q.T)".to_string(),
                [true, true] => "dot_sum(p.T, q.T)".to_string(),
            },
            Op::DotAdd { subtract: false } => "dot_add".to_string(),
            Op::DotAdd { subtract: true } => "dot_sub".to_string(),
            Op::StackRows => "stack_rows".to_string(),
            Op::StackedDot { .. } => "stacked_dot".to_string(),
            Op::JoinSlices { axis, .. } => format!("join_slices(axis={axis})"),
            Op::Fused(_) => "fused".to_string(),
            Op::Scan(s) => {
                let seqs: Vec<String> = s
                    .sequences
                    .iter()
                    .map(|q| {
                        let index = if q.arange { " (loop index)" } else { "" };
                        format!("{}{index} taps={:?}", q.label, q.taps)
                    })
                    .collect();
                let outs: Vec<String> = s
                    .outputs
                    .iter()
                    .map(|o| {
                        let keep = match o.keep {
                            Some(k) => format!(" keep={k}"),
                            None => String::new(),
                        };
                        format!("{} {:?} taps={:?}{keep}", o.label, o.kind(), o.taps)
                    })
                    .collect();
                format!(
                    "scan{} sequences=[{}] outputs=[{}] non_sequences={} n_steps={} go_backwards={} until={}{}{}{}{}{}",
                    s.name.as_deref().map(|n| format!(" {n:?}")).unwrap_or_default(),
                    seqs.join(", "),
                    outs.join(", "),
                    s.non_sequences.len(),
                    s.has_n_steps,
                    if s.backwards_flag { "flag".to_string() } else { s.go_backwards.to_string() },
                    s.has_until,
                    if s.interchange { " interchange" } else { "" },
                    if s.lanes { " lanes" } else { "" },
                    if s.unroll > 1 { format!(" unroll={}", s.unroll) } else { String::new() },
                    s.max_steps.map(|m| format!(" max_steps={m}")).unwrap_or_default(),
                    s.checkpoints.map(|c| format!(" checkpoints={}", c.every)).unwrap_or_default()
                )
            }
            Op::ScanOutput { index } => format!("scan_output#{index}"),
            Op::Part { index } => format!("part#{index}"),
        };
        let args = if inputs.is_empty() {
            String::new()
        } else {
            format!("({})", inputs.join(", "))
        };
        // A scan node has no value of its own: its results are the scan_output nodes (a
        // linear-algebra node with several results: its part nodes).
        let ty = if matches!(node.op, Op::Scan(_)) || node.op.has_parts() {
            String::new()
        } else {
            format!(" : {}", node.ty)
        };
        let _ = writeln!(out, "{pad}%{i} = {op}{args}{ty}");
        match &node.op {
            Op::Scan(s) => graph(&s.step, depth + 1, out),
            Op::Fused(body) => graph(body, depth + 1, out),
            _ => {}
        }
    }
    let outs: Vec<String> = g.outputs.iter().map(|n| format!("%{}", n.0)).collect();
    let _ = writeln!(out, "{pad}return ({})", outs.join(", "));
}

#[cfg(test)]
mod tests {
    const RNN: &str = "
        pub fn rnn(u: ArrayView2<f64>, x0: ArrayView2<f64>, y0: ArrayView1<f64>, w: ArrayView2<f64>)
            -> Result<(Array2<f64>, Array2<f64>)>
        {
            let (x, y) = scan(
                |u_tm4, u_t, x_tm3, x_tm1, y_tm1| (tanh(x_tm1.dot(w) + u_t + u_tm4 + y_tm1), x_tm3),
                sequences = [taps(u, [-4, 0])],
                outputs_info = [taps(x0, [-3, -1]), y0],
            );
            Ok((x, y))
        }";

    #[test]
    fn prints_taps_kinds_and_the_step() {
        let text = crate::explain(RNN).unwrap();
        assert!(
            text.contains("scan sequences=[u taps=[-4, 0]] outputs=[x0 Mitsot taps=[-3, -1], y0 Sitsot taps=[-1]] non_sequences=1"),
            "{text}"
        );
        // The step's inputs in PyTensor's order, then the implicit non-sequence `w`.
        for (i, name) in ["u_tm4", "u_t", "x_tm3", "x_tm1", "y_tm1", "w"]
            .iter()
            .enumerate()
        {
            assert!(
                text.contains(&format!("input#{i} {name}")),
                "{name}: {text}"
            );
        }
        assert!(
            text.contains("%5 = scan_output#0(%4) : matrix of f64"),
            "{text}"
        );
        assert!(text.contains("%6 = dot(%3, %5) : vector of f64"), "{text}");
    }
}
