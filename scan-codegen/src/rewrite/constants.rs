//! Constants: a non-sequence that is a constant in the outer graph becomes that constant
//! inside the step (the step input is dropped), and a cast of a constant is the constant
//! of the new dtype when the conversion is exact. Later passes then see literal values
//! (push-out, CSE), and the emitted step reads a literal rather than a captured local.
//!
//! Never folded: casts that round or overflow (they keep their run-time semantics).

use super::edit::remove_non_sequence;
use super::{each_scan, Log};
use crate::ir::{DType, Graph, Literal, Op};

pub fn run(g: &mut Graph, log: &mut Log) {
    fold_casts(g, log);
    each_scan(g, |g, op, inputs, label| {
        let mut k = 0;
        while k < op.non_sequences.len() {
            let outer = inputs[op.first_non_sequence_input() + k];
            let Op::Const(value) = g.node(outer).op else {
                k += 1;
                continue;
            };
            let step_input = op.step.inputs[op.first_non_sequence_step_input() + k];
            let mut constant = g.node(outer).clone();
            constant.ty = op.step.ty(step_input);
            let c = op.step.add(constant);
            op.step.replace_uses(step_input, c);
            let name = op.non_sequences[k].label.clone();
            remove_non_sequence(op, inputs, k);
            log.fired(format!(
                "{label}: non-sequence `{name}` is the constant {}: folded into the step",
                show(value)
            ));
        }
    });
    g.normalize();
}

fn show(v: Literal) -> String {
    match v {
        Literal::Bool(b) => b.to_string(),
        Literal::Int(i) => i.to_string(),
        Literal::Float(f) => format!("{f:?}"),
    }
}

/// `cast(constant)` -> the constant itself, where the value survives exactly.
fn fold_casts(g: &mut Graph, log: &mut Log) {
    for i in 0..g.nodes.len() {
        let node = &g.nodes[i];
        if !matches!(node.op, Op::Cast) {
            continue;
        }
        let Op::Const(value) = g.node(node.inputs[0]).op else {
            continue;
        };
        let Some(folded) = exact_cast(value, node.ty.dtype) else {
            continue;
        };
        let from = g.ty(node.inputs[0]).dtype;
        log.fired(format!(
            "constant {} cast from {from} to {}: folded",
            show(value),
            node.ty.dtype
        ));
        let node = &mut g.nodes[i];
        node.op = Op::Const(folded);
        node.inputs.clear();
    }
    g.normalize();
}

/// `value` as a literal of `dtype`, if the conversion loses nothing.
fn exact_cast(value: Literal, dtype: DType) -> Option<Literal> {
    const EXACT_INT_IN_F64: i128 = 1 << 53;
    const EXACT_INT_IN_F32: i128 = 1 << 24;
    match (value, dtype) {
        (Literal::Bool(b), DType::Bool) => Some(Literal::Bool(b)),
        (Literal::Bool(b), DType::F32 | DType::F64) => Some(Literal::Float(b as u8 as f64)),
        (Literal::Bool(b), d) if d.is_int() => Some(Literal::Int(i128::from(b))),
        (Literal::Int(v), d) if d.holds(v) => Some(Literal::Int(v)),
        (Literal::Int(v), DType::F64) if v.abs() <= EXACT_INT_IN_F64 => {
            Some(Literal::Float(v as f64))
        }
        (Literal::Int(v), DType::F32) if v.abs() <= EXACT_INT_IN_F32 => {
            Some(Literal::Float(v as f64))
        }
        (Literal::Float(f), DType::F64) => Some(Literal::Float(f)),
        (Literal::Float(f), DType::F32) if (f as f32) as f64 == f || f.is_nan() => {
            Some(Literal::Float(f))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{apply, assert_same_results, vec1};
    use super::super::Pass;

    #[test]
    fn a_constant_non_sequence_is_folded_into_the_step() {
        let src = "pub fn f(u: ArrayView1<f64>) -> Result<Array1<f64>> {
            let y = scan(|u_t, c| u_t * c, sequences = u, non_sequences = 2.5);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::Constants);
        assert!(
            fired
                .iter()
                .any(|f| f.contains("non-sequence `2.5` is the constant 2.5")),
            "{fired:?}"
        );
        assert!(ir.contains("non_sequences=0"), "{ir}");
        assert_same_results(src, "f", &[vec1(&[1.0, -2.0, 0.5])]);
    }

    #[test]
    fn a_variable_non_sequence_stays() {
        let src = "pub fn f(u: ArrayView1<f64>, c: f64) -> Result<Array1<f64>> {
            let y = scan(|u_t, c| u_t * c, sequences = u, non_sequences = c);
            Ok(y)
        }";
        let (ir, fired) = apply(src, Pass::Constants);
        assert!(fired.is_empty(), "{fired:?}");
        assert!(ir.contains("non_sequences=1"), "{ir}");
    }

    #[test]
    fn exact_casts_fold_and_lossy_ones_do_not() {
        use crate::ir::{DType, Literal};
        assert_eq!(
            super::exact_cast(Literal::Int(3), DType::F64),
            Some(Literal::Float(3.0))
        );
        assert_eq!(super::exact_cast(Literal::Int(1 << 40), DType::I32), None);
        assert_eq!(super::exact_cast(Literal::Float(0.1), DType::F32), None);
        assert_eq!(
            super::exact_cast(Literal::Float(0.5), DType::F32),
            Some(Literal::Float(0.5))
        );
        assert_eq!(super::exact_cast(Literal::Float(2.0), DType::I64), None);
        assert_eq!(super::exact_cast(Literal::Int(-1), DType::U8), None);
        assert_eq!(super::exact_cast(Literal::Int(256), DType::U8), None);
        assert_eq!(
            super::exact_cast(Literal::Int(255), DType::U8),
            Some(Literal::Int(255))
        );
        assert_eq!(
            super::exact_cast(Literal::Int(u64::MAX.into()), DType::U64),
            Some(Literal::Int(u64::MAX.into()))
        );
        assert_eq!(super::exact_cast(Literal::Int(-129), DType::I8), None);
    }
}
