//! scan, map, reduce, foldl, foldr -> a `Scan` node with its step as an inner graph.

use super::{Frame, Lowered, Lowerer, Value};
use crate::ast::{Expr, ExprKind, OutputInfo, ScanCall, ScanKind, StepSource};
use crate::check::scan as rules;
use crate::ir::{
    Checkpoints, DType, ElemOp, Literal, Node, NodeId, NonSequence, Op, Output, PathStep, ScanOp,
    Sequence, Type,
};
use crate::messages as msg;
use crate::rewrite::edit::insert_step_input;

/// A step argument to create: its type and its name for messages.
struct StepInput {
    /// `None` when the argument's definition had an error.
    ty: Option<Type>,
    weak: bool,
    describe: String,
}

/// How to call output `index` in messages: its initial state's name, or its position.
fn output_name(index: usize, init_label: &str) -> String {
    let is_name = init_label.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !init_label.starts_with(|c: char| c.is_ascii_digit());
    if is_name {
        init_label.to_string()
    } else {
        format!("output{index}")
    }
}

fn tap_name(label: &str, tap: i64) -> String {
    match tap {
        0 => format!("{label}[t]"),
        t if t > 0 => format!("{label}[t+{t}]"),
        t => format!("{label}[t{t}]"),
    }
}

impl Lowerer<'_> {
    pub(super) fn scan(&mut self, call: &ScanCall) -> Option<Lowered> {
        let step = match &call.step {
            StepSource::Closure(f) => f.clone(),
            StepSource::Name(name) => match self.closure(name) {
                Some(f) => f,
                None => {
                    self.diag
                        .error(name.span(), msg::not_a_step_function(&name.to_string()));
                    return None;
                }
            },
        };
        let mut ok = true;
        let mut step_inputs: Vec<StepInput> = Vec::new();
        let mut outer_inputs: Vec<NodeId> = Vec::new();

        // Sequences.
        let mut sequences = Vec::new();
        for s in &call.sequences {
            let taps: Vec<(i64, proc_macro2::Span)> = match &s.taps {
                Some((taps, _)) => taps.clone(),
                None => vec![(0, s.value.span)],
            };
            // A sequence whose expression failed still gives the step its arguments, so
            // that the step is checked and no false "takes N arguments" follows.
            let failed = |step_inputs: &mut Vec<StepInput>| {
                for (tap, _) in &taps {
                    step_inputs.push(StepInput {
                        ty: None,
                        weak: false,
                        describe: tap_name(&s.value.label, *tap),
                    });
                }
            };
            let Some(v) = self.value(&s.value) else {
                ok = false;
                failed(&mut step_inputs);
                continue;
            };
            let t = self.ty(v);
            if t.rank == 0 {
                self.diag
                    .error(s.value.span, msg::sequence_is_scalar(&s.value.label, t));
                ok = false;
                failed(&mut step_inputs);
                continue;
            }
            ok &= rules::sequence_taps(&taps, self.diag);
            for (tap, _) in &taps {
                step_inputs.push(StepInput {
                    ty: Some(t.with_rank(t.rank - 1)),
                    weak: false,
                    describe: tap_name(&s.value.label, *tap),
                });
            }
            outer_inputs.push(v.id);
            sequences.push(Sequence {
                taps: taps.iter().map(|t| t.0).collect(),
                arange: false,
                label: s.value.label.clone(),
                span: s.value.span,
            });
        }

        // Outputs and their initial states.
        let mut outputs = Vec::new();
        // Per output: the expected type of one step and the initial state's label.
        let mut rows: Vec<Option<(Type, String)>> = Vec::new();
        if let Some((infos, _)) = &call.outputs_info {
            for (i, info) in infos.iter().enumerate() {
                match info {
                    OutputInfo::None(span) => {
                        outputs.push(Output {
                            taps: Vec::new(),
                            keep: None,
                            total: false,
                            label: format!("output {i}"),
                            span: *span,
                        });
                        rows.push(None);
                    }
                    OutputInfo::Init(t) => {
                        let taps: Vec<(i64, proc_macro2::Span)> = match &t.taps {
                            Some((taps, _)) => taps.clone(),
                            None => vec![(-1, t.value.span)],
                        };
                        let taps_ok = rules::output_taps(&taps, self.diag);
                        let tap_values: Vec<i64> = taps.iter().map(|t| t.0).collect();
                        let init = self.value(&t.value);
                        let row = init.and_then(|v| {
                            let it = self.ty(v);
                            rules::output_row_type(
                                it,
                                &tap_values,
                                &t.value.label,
                                t.value.span,
                                self.diag,
                            )
                            .map(|row| (v, row))
                        });
                        let Some((init, row)) = row else {
                            ok = false;
                            rows.push(None);
                            outputs.push(Output {
                                taps: Vec::new(),
                                keep: None,
                                total: false,
                                label: t.value.label.clone(),
                                span: t.value.span,
                            });
                            // Keep the step's argument count right so its body is still checked.
                            for tap in &tap_values {
                                step_inputs.push(StepInput {
                                    ty: None,
                                    weak: false,
                                    describe: tap_name(&output_name(i, &t.value.label), *tap),
                                });
                            }
                            continue;
                        };
                        ok &= taps_ok;
                        for tap in &tap_values {
                            step_inputs.push(StepInput {
                                ty: Some(row),
                                weak: init.weak,
                                describe: tap_name(&output_name(i, &t.value.label), *tap),
                            });
                        }
                        outer_inputs.push(init.id);
                        rows.push(Some((row, t.value.label.clone())));
                        outputs.push(Output {
                            taps: tap_values,
                            keep: None,
                            total: false,
                            label: t.value.label.clone(),
                            span: t.value.span,
                        });
                    }
                }
            }
        }

        // Explicit non-sequences.
        let mut non_sequences = Vec::new();
        // Per explicit non-sequence's step argument (from `listed_from` on): its outer node.
        let listed_from = step_inputs.len();
        let mut listed_outer: Vec<Option<NodeId>> = Vec::new();
        for e in &call.non_sequences {
            let Some(v) = self.value(e) else {
                ok = false;
                // Still a step argument (see the sequences).
                step_inputs.push(StepInput {
                    ty: None,
                    weak: false,
                    describe: e.label.clone(),
                });
                listed_outer.push(None);
                continue;
            };
            listed_outer.push(Some(v.id));
            step_inputs.push(StepInput {
                ty: Some(self.ty(v)),
                weak: v.weak,
                describe: e.label.clone(),
            });
            outer_inputs.push(v.id);
            non_sequences.push(NonSequence {
                label: e.label.clone(),
                implicit: false,
            });
        }

        // The number of steps.
        let n_steps = call
            .n_steps
            .as_ref()
            .map(|e| self.index_operand(e, "n_steps"));
        // The direction, when it is a run-time bool: a scalar bool where the scan is called.
        let backwards_flag = call.backwards_flag.as_ref().map(|e| {
            let v = self.value(e)?;
            let t = self.ty(v);
            if t != Type::scalar(DType::Bool) {
                self.diag
                    .error(e.span, msg::backwards_flag_type(&e.label, t));
                return None;
            }
            Some(v.id)
        });
        if n_steps.is_none() && sequences.is_empty() && call.sequences.is_empty() {
            // An incomplete call (an argument lost to an error) may have meant some.
            if !call.incomplete {
                self.diag
                    .error(call.span, msg::needs_steps(call.kind.name()));
            }
            ok = false;
        }

        // The step. Its arguments are not counted when the call is incomplete: what it is
        // passed is not known (its parameters are then silently unresolved).
        let described: Vec<String> = step_inputs.iter().map(|s| s.describe.clone()).collect();
        let arguments_ok = !call.incomplete
            && rules::step_arguments(
                call.kind.name(),
                &described,
                step.params.len(),
                step.params_span,
                self.diag,
            );
        ok &= arguments_ok;
        self.frames.push(Frame::new(call.strict));
        for (k, param) in step.params.iter().enumerate() {
            let input = step_inputs.get(k).and_then(|i| i.ty.map(|ty| (ty, i.weak)));
            if let (Some((ty, _)), Some(Some(declared))) = (input, step.annotations.get(k)) {
                rules::step_argument_type(param, declared.ty, ty, self.diag);
            }
            match input {
                Some((ty, weak)) if arguments_ok => {
                    let id = self.graph().add_input(&param.to_string(), ty, param.span());
                    let value = Value { id, weak };
                    self.bind(param, value);
                    let outer = k.checked_sub(listed_from).and_then(|i| listed_outer.get(i));
                    if let Some(Some(outer)) = outer {
                        self.frames
                            .last_mut()
                            .expect("step frame")
                            .listed
                            .insert(*outer, value);
                    }
                }
                _ => self.poison_name(param),
            }
        }
        self.statements(&step.body);
        let step_result = self.step_result(&step.body.result);
        // Results are fitted to their outputs while the step's frame is still open, so
        // casts land in the step's graph.
        let fitted = step_result.and_then(|(returned, until)| {
            self.fit_step_results(
                call,
                returned,
                step.body.result.span,
                &rows,
                &mut outputs,
                &mut ok,
            )
            .map(|results| (results, until))
        });
        let frame = self.frames.pop().expect("step frame");
        let (mut results, until) = fitted?;
        let mut step = frame.graph;
        for (outer, name) in &frame.captures {
            outer_inputs.push(*outer);
            non_sequences.push(NonSequence {
                label: name.clone(),
                implicit: true,
            });
        }
        if let Some(Some(n)) = n_steps {
            outer_inputs.push(n);
        } else if let Some(None) = n_steps {
            ok = false;
        }
        match backwards_flag {
            Some(Some(flag)) => outer_inputs.push(flag),
            Some(None) => ok = false,
            None => {}
        }
        let result_types: Vec<Type> = results.iter().map(|id| step.ty(*id)).collect();
        // `checkpoints` with `until`: a hidden output counts the steps taken, so that a
        // gradient learns their number without keeping a trace for its length.
        let mut counter = None;
        if let (Some(_), Some(_)) = (call.checkpoints, until) {
            let n_recurrent = outputs.iter().filter(|o| o.is_recurrent()).count();
            let zero = self
                .graph()
                .add_const(Literal::Int(0), DType::I64, call.span, "0");
            outer_inputs.insert(sequences.len() + n_recurrent, zero);
            let taps: usize = sequences.iter().map(|s| s.taps.len()).sum::<usize>()
                + outputs.iter().map(|o| o.taps.len()).sum::<usize>();
            let label = "steps taken";
            let ty = Type::scalar(DType::I64);
            let tap = insert_step_input(&mut step, taps, &format!("{label}[t-1]"), ty, call.span);
            let one = step.add_const(Literal::Int(1), DType::I64, call.span, "1");
            let next = step.add(Node {
                op: Op::Elemwise(ElemOp::Add),
                inputs: vec![tap, one],
                ty,
                span: call.span,
                label: label.to_string(),
            });
            counter = Some(outputs.len());
            results.push(next);
            outputs.push(Output {
                taps: vec![-1],
                keep: None,
                total: false,
                label: label.to_string(),
                span: call.span,
            });
        }
        if let Some(cond) = until {
            results.push(cond);
        }
        step.outputs = results;
        if !ok {
            return None;
        }

        let op = ScanOp {
            name: call.name.clone(),
            sequences,
            outputs,
            non_sequences,
            has_n_steps: n_steps.is_some(),
            go_backwards: call.go_backwards,
            backwards_flag: backwards_flag.is_some(),
            has_until: until.is_some(),
            interchange: false,
            lanes: false,
            unroll: call.unroll,
            max_steps: None,
            truncate_gradient: call.truncate_gradient,
            checkpoints: call
                .checkpoints
                .map(|(every, _)| Checkpoints { every, counter }),
            step,
        };
        let label = call
            .name
            .clone()
            .unwrap_or_else(|| call.kind.name().to_string());
        let scan = self.add_at(
            Op::Scan(Box::new(op)),
            outer_inputs,
            Type::scalar(DType::Bool),
            call.span,
            &label,
        );
        let mut values = Vec::new();
        for (i, t) in result_types.iter().enumerate() {
            let all = self.add_at(
                Op::ScanOutput { index: i },
                vec![scan],
                t.with_rank(t.rank + 1),
                call.span,
                &label,
            );
            let id = match call.kind {
                ScanKind::Reduce | ScanKind::Foldl | ScanKind::Foldr => {
                    let last =
                        self.graph()
                            .add_const(Literal::Int(-1), DType::I64, call.span, "-1");
                    self.add_at(
                        Op::Subtensor {
                            path: vec![PathStep::Index],
                        },
                        vec![all, last],
                        *t,
                        call.span,
                        &format!("{label} result"),
                    )
                }
                ScanKind::Scan | ScanKind::Map => all,
            };
            values.push(Value { id, weak: false });
        }
        Some(match values.as_slice() {
            [one] => Lowered::Single(*one),
            _ => Lowered::Tuple(values),
        })
    }

    /// Matches the step's returned values with `outputs_info` (every value is a map output
    /// when it is absent): recurrent results must fit their initial state's row type, a safe
    /// upcast is inserted. Clears `ok` on a mismatch.
    fn fit_step_results(
        &mut self,
        call: &ScanCall,
        returned: Vec<(Value, &Expr)>,
        result_span: proc_macro2::Span,
        rows: &[Option<(Type, String)>],
        outputs: &mut Vec<Output>,
        ok: &mut bool,
    ) -> Option<Vec<NodeId>> {
        if call.outputs_info.is_none() {
            for (i, (_, e)) in returned.iter().enumerate() {
                outputs.push(Output {
                    taps: Vec::new(),
                    keep: None,
                    total: false,
                    label: format!("output {i}"),
                    span: e.span,
                });
            }
        } else if outputs.len() != returned.len() && call.incomplete {
            // An entry of outputs_info was lost to a reported error.
            return None;
        } else if !rules::output_count(outputs.len(), returned.len(), result_span, self.diag) {
            return None;
        }
        let mut results = Vec::new();
        for (i, (v, e)) in returned.iter().enumerate() {
            let id = match rows.get(i).and_then(|r| r.as_ref()) {
                None => v.id,
                Some((row, label)) => {
                    let found = self.ty(*v);
                    match rules::step_result(i, label, *row, found, v.weak, e.span, self.diag) {
                        rules::ResultFit::Same => v.id,
                        rules::ResultFit::Upcast(d) => self.cast(*v, d, e),
                        rules::ResultFit::Mismatch => {
                            *ok = false;
                            v.id
                        }
                    }
                }
            };
            results.push(id);
        }
        Some(results)
    }

    /// The step's returned values (with their expressions) and its `until` condition.
    #[allow(clippy::type_complexity)]
    fn step_result<'e>(
        &mut self,
        result: &'e Expr,
    ) -> Option<(Vec<(Value, &'e Expr)>, Option<NodeId>)> {
        // PyTensor's shapes too: a list of results `[a, b]` (not one stacked array: a step
        // returning a list returns several outputs), and `([a, b], until(c))`.
        let mut items: Vec<&Expr> = match &result.kind {
            ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().collect(),
            _ => vec![result],
        };
        if let [first, last] = items[..] {
            if let (ExprKind::List(values) | ExprKind::Tuple(values), ExprKind::Until(_)) =
                (&first.kind, &last.kind)
            {
                items = values.iter().chain([last]).collect();
            }
        }
        let Some((last, rest)) = items.split_last() else {
            self.diag.error(result.span, msg::no_step_value());
            return None;
        };
        let (values, until) = match &last.kind {
            ExprKind::Until(cond) => (rest, Some(cond)),
            _ => (&items[..], None),
        };
        let mut out = Vec::new();
        let mut ok = true;
        for e in values {
            match self.value(e) {
                Some(v) => out.push((v, *e)),
                None => ok = false,
            }
        }
        let cond = match until {
            Some(c) => {
                let v = self.value(c)?;
                let t = self.ty(v);
                if !rules::until_condition(t, c.span, self.diag) {
                    return None;
                }
                Some(v.id)
            }
            None => None,
        };
        ok.then_some((out, cond))
    }
}
