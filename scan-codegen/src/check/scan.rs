//! Rules of a scan call: taps, initial states, step arguments, step results, `until`.

use proc_macro2::Span;

use crate::diag::Diagnostics;
use crate::ir::{DType, Type};
use crate::messages as msg;

/// Output taps are negative (past steps) and distinct.
pub fn output_taps(taps: &[(i64, Span)], diag: &mut Diagnostics) -> bool {
    let mut ok = true;
    for (i, (tap, span)) in taps.iter().enumerate() {
        if *tap >= 0 {
            diag.error(*span, msg::output_tap_not_negative(*tap));
            ok = false;
        } else if taps[..i].iter().any(|(t, _)| t == tap) {
            diag.error(*span, msg::tap_repeated(*tap));
            ok = false;
        }
    }
    if taps.is_empty() {
        ok = false;
    }
    ok
}

/// Sequence taps are distinct.
pub fn sequence_taps(taps: &[(i64, Span)], diag: &mut Diagnostics) -> bool {
    let mut ok = !taps.is_empty();
    for (i, (tap, span)) in taps.iter().enumerate() {
        if taps[..i].iter().any(|(t, _)| t == tap) {
            diag.error(*span, msg::tap_repeated(*tap));
            ok = false;
        }
    }
    ok
}

/// The type one step of an output has, given its initial state's type and taps: the
/// initial state itself for a single -1 tap, one row of it otherwise. `None` (with an
/// error) when the initial state has no leading axis to hold the deepest tap.
pub fn output_row_type(
    init: Type,
    taps: &[i64],
    init_label: &str,
    span: Span,
    diag: &mut Diagnostics,
) -> Option<Type> {
    if taps == [-1] {
        return Some(init);
    }
    if init.rank == 0 {
        let depth = taps.iter().map(|t| -t).max().unwrap_or(1);
        diag.error(span, msg::init_without_room(taps, depth, init_label, init));
        return None;
    }
    Some(init.with_rank(init.rank - 1))
}

/// The step's arguments match what the loop (`kind`: scan, map, ..) passes, in order.
pub fn step_arguments(
    kind: &str,
    expected: &[String],
    found: usize,
    span: Span,
    diag: &mut Diagnostics,
) -> bool {
    if expected.len() == found {
        return true;
    }
    diag.error(span, msg::step_arguments(kind, found, expected));
    false
}

/// A type written on a step argument agrees with what scan passes there.
pub fn step_argument_type(
    param: &syn::Ident,
    declared: Type,
    passed: Type,
    diag: &mut Diagnostics,
) {
    if declared != passed {
        diag.error(
            param.span(),
            msg::step_argument_type(&param.to_string(), declared, passed),
        );
    }
}

/// What to do with a recurrent output's step result against its initial state's row type.
pub enum ResultFit {
    Same,
    /// Cast the result up to the initial state's dtype (safe, or an untyped literal).
    Upcast(DType),
    Mismatch,
}

pub fn step_result(
    output: usize,
    init_label: &str,
    row: Type,
    found: Type,
    weak: bool,
    span: Span,
    diag: &mut Diagnostics,
) -> ResultFit {
    if found.rank != row.rank {
        diag.error(span, msg::step_result_rank(output, init_label, found, row));
        return ResultFit::Mismatch;
    }
    if found.dtype == row.dtype {
        return ResultFit::Same;
    }
    if weak || found.dtype.casts_safely_to(row.dtype) {
        return ResultFit::Upcast(row.dtype);
    }
    diag.error(
        span,
        msg::init_narrower(output, init_label, found.dtype, row.dtype),
    );
    ResultFit::Mismatch
}

pub fn until_condition(found: Type, span: Span, diag: &mut Diagnostics) -> bool {
    if found == Type::scalar(DType::Bool) {
        return true;
    }
    diag.error(span, msg::until_condition(found));
    false
}

pub fn output_count(declared: usize, returned: usize, span: Span, diag: &mut Diagnostics) -> bool {
    if declared == returned {
        return true;
    }
    diag.error(span, msg::output_count(declared, returned));
    false
}
