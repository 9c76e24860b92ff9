//! The catalogue of compile-error messages: every text the front end reports (the parser,
//! the lowering, the rules of `check/`) is built here from its parts, so that the wording
//! can be reviewed in one place. The rule for each: it says what was expected and what was
//! found, and gives one concrete hint (what to write instead). The errors are raised where
//! the mistake is found, spanned on the user's token (`diag::Diagnostics`); the texts are
//! pinned by the trybuild cases in `tests/ui/` (named by kind: `spec_`, `taps_`, `types_`,
//! `step_`, `strict_`, `signature_`, `syntax_`, `index_`, `call_`, `cascade_`, `stub_`).
//!
//! Types are written with their article here (`a vector of f64`): [`a`].

use std::fmt::Display;

use crate::ir::{DType, Type};

/// `t` with its article: "a scalar f64", "a vector of i64", "a rank-3 array of f32".
pub fn a(t: Type) -> String {
    format!("a {t}")
}

/// "did you mean `x`? " when there is a close name, else nothing.
fn did_you_mean(close: Option<&str>) -> String {
    close.map_or(String::new(), |c| format!("did you mean `{c}`? "))
}

// ---------------------------------------------------------------------------------------
// signature: the `fn` line of a scan! function
// ---------------------------------------------------------------------------------------

pub fn qualifier() -> String {
    "scan! functions are plain `fn`s: remove this qualifier".into()
}

pub fn generic() -> String {
    "scan! functions are not generic: dtypes and ranks are static".into()
}

pub fn self_parameter() -> String {
    "scan! functions take no `self`: pass the array as a parameter, `x: ArrayView1<f64>`".into()
}

/// A parameter written as a pattern (`(a, b): (f64, f64)`), not a name.
pub fn parameter_name(found: &str) -> String {
    format!("expected a parameter name, found `{found}`: write one `name: Type` per parameter")
}

/// What a parameter type should have been, for [`unsupported_param_type`].
pub enum ParamHint {
    /// `Array1<T>`: the owned array where a view is taken.
    Owned {
        rank: String,
        dtype: String,
    },
    /// `&ArrayView1<T>`, `&f64`: a reference.
    Reference,
    /// `Vec<T>`, `&[T]`: a Rust sequence.
    Sequence,
    /// `ArrayView5<T>` and up.
    RankTooHigh,
    /// `u32`, `f16`, `isize`, `i8`, ...: another number type.
    Number,
    None,
}

pub fn unsupported_param_type(found: &str, hint: ParamHint) -> String {
    let hint = match hint {
        ParamHint::Owned { rank, dtype } => format!(
            "; take a view, `ArrayView{rank}<{dtype}>`, and call the function with `x.view()`"
        ),
        ParamHint::Reference => "; take the view or the scalar by value, without `&`".into(),
        ParamHint::Sequence => {
            "; take an array view, `ArrayView1<T>` (`ArrayView1::from(&v[..])` makes one from a slice)"
                .into()
        }
        ParamHint::RankTooHigh => {
            "; arrays of rank 5 or more are not supported as parameters: reshape to rank 4 or less before the call".into()
        }
        ParamHint::Number => {
            "; convert the value to one of these before the call (`n as i64`)".into()
        }
        ParamHint::None => String::new(),
    };
    format!(
        "unsupported parameter type `{found}`: expected `ArrayView1<T>` .. `ArrayView4<T>`, a scalar `T`, or `usize`, with T one of {DTYPES}{hint}"
    )
}

pub fn unsupported_result_type(found: &str, view: Option<usize>) -> String {
    let hint = match view {
        Some(rank) => format!("; a function returns arrays it owns: `Array{rank}<T>`"),
        None => String::new(),
    };
    format!(
        "unsupported result type `{found}`: expected `Array0<T>` .. `Array4<T>` or a scalar, with T one of {DTYPES}{hint}"
    )
}

pub fn missing_result() -> String {
    "a scan! function returns `Result<...>`, found no return type: add `-> Result<T>` or `-> Result<(T1, T2)>`".into()
}

pub fn result_not_result(found: &str) -> String {
    format!(
        "a scan! function returns `Result<...>` (scan_runtime::Result), found `{found}`: write `Result<{found}>`"
    )
}

pub fn nesting_too_deep(max: usize) -> String {
    format!(
        "nesting deeper than {max} levels: this expression nests too many brackets or chains too many operators for the compiler; split it with `let` bindings"
    )
}

pub fn inner_attribute() -> String {
    "a scan! block takes one inner attribute, `#![rewrites(..)]`".into()
}

pub fn rewrite_item(passes: &str) -> String {
    format!("expected a pass name, `all`, `none` or `all_except(..)`; the passes are: {passes}")
}

pub fn unknown_rewrite(passes: &str) -> String {
    format!("unknown rewrite pass; the passes are: {passes}")
}

// ---------------------------------------------------------------------------------------
// syntax: what the step language does not have
// ---------------------------------------------------------------------------------------

/// The dtypes of the step language, for messages.
const DTYPES: &str = "f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool";

pub fn literal_suffix(suffix: &str) -> String {
    format!(
        "unsupported literal suffix `{suffix}`: expected one of {}",
        DTYPES.trim_end_matches(", bool")
    )
}

pub fn integer_out_of_range(err: impl Display) -> String {
    format!("integer literal out of range: {err}")
}

/// An integer literal that is not a value of its dtype: its suffix's (`300u8`, `-1u32`),
/// i64 for an untyped literal alone, or, for an untyped literal among typed operands,
/// the dtype it adapts to (`x + 300` of a u8 `x`: numpy 2 raises OverflowError).
pub fn literal_out_of_range(value: i128, dtype: DType, how: LiteralDType) -> String {
    let (lo, hi) = dtype.int_range().unwrap_or((0, 0));
    let range = format!("{dtype} holds {lo}..={hi}");
    match how {
        LiteralDType::Suffix => format!(
            "integer literal `{value}{dtype}` is out of range: {range}; write a value in range or another suffix"
        ),
        LiteralDType::Default if DType::U64.holds(value) => format!(
            "integer literal `{value}` is out of range for i64, the dtype of an untyped integer literal: give it the suffix u64 (`{value}u64`)"
        ),
        LiteralDType::Default => format!(
            "integer literal `{value}` is out of range for i64, the dtype of an untyped integer literal, and for every other integer dtype"
        ),
        LiteralDType::Adapted => format!(
            "integer literal `{value}` is out of range for {dtype}, the dtype it takes from the other operands ({range}; numpy raises OverflowError): cast the other operand to a wider dtype (`x as i64`) or write a value in range"
        ),
    }
}

/// Where an integer literal's dtype came from, for [`literal_out_of_range`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiteralDType {
    /// Its suffix.
    Suffix,
    /// None: an untyped literal alone is i64.
    Default,
    /// The typed operands it adapts to.
    Adapted,
}

pub fn float_with_integer_suffix() -> String {
    "a float literal cannot have an integer suffix: write `1.5` or `1.5f32`".into()
}

pub fn unsupported_literal() -> String {
    "unsupported literal: expected a number or a bool".into()
}

pub fn unsupported_path() -> String {
    "expected a variable name or a constant such as `f64::INFINITY` or `std::f64::consts::PI` (other paths are not part of the step language)".into()
}

pub fn unsupported_binary_operator(op: &str) -> String {
    let hint = match op {
        "<<" | ">>" => " (bit shifts of integers are not part of the step language)",
        _ => "",
    };
    format!(
        "unsupported operator `{op}`: expected one of + - * / % < <= > >= == != && || & | ^{hint}"
    )
}

pub fn unsupported_unary_operator(op: &str) -> String {
    let hint = if op == "*" {
        ": values are not references, write the name itself"
    } else {
        ""
    };
    format!("unsupported operator `{op}`: expected unary `-` or `!`{hint}")
}

/// `x = ..`, `x += ..`.
pub fn assignment(target: &str) -> String {
    format!(
        "scan! values are immutable: `{target}` cannot be assigned; bind the new value with its own `let`, `let {target}_next = ...;`"
    )
}

pub fn mutable_binding() -> String {
    "scan! values are immutable: remove `mut`, and bind each new value with its own `let`".into()
}

pub fn expected_function_name() -> String {
    "expected a function name: the step language calls functions by name, `f(x)` or `x.f()`".into()
}

pub fn one_argument(name: &str, found: usize) -> String {
    format!("`{name}` takes one argument, found {found}")
}

pub fn taps_outside_spec() -> String {
    "`taps(x, [..])` is only valid inside `sequences = [..]` or `outputs_info = [..]`".into()
}

pub fn turbofish() -> String {
    "turbofish is not supported: use `x as f32` to cast".into()
}

pub fn inclusive_range() -> String {
    "inclusive ranges `a..=b` are not supported: use `a..b`".into()
}

pub fn cast_target(found: &str) -> String {
    format!("expected a dtype to cast to: one of f32, f64, i32, i64, bool, found `{found}`")
}

/// An expression of a kind the step language does not have: what to write instead.
pub fn unsupported_expression(kind: &str) -> String {
    match kind {
        "if" | "match" => format!(
            "`{kind}` is not part of the step language (a step is one expression computed on whole arrays): choose elementwise with `where_(cond, a, b)`"
        ),
        "return" => "`return` is not part of the step language: a step's value is its closure's final expression, without `return` or `;`".into(),
        "?" => "`?` is not part of the step language: a scan! call returns its value itself (the function's `Result` reports run-time errors); remove the `?`".into(),
        "for" | "while" | "loop" | "break" | "continue" => format!(
            "`{kind}` loops are not part of the step language: a loop over the rows of an array is `scan`, `map` or `reduce`, and `sum(x)`, `max(x)` .. reduce an array"
        ),
        "&" => "references are not part of the step language: values are passed by value, write `x`".into(),
        "macro" => "macros are not part of the step language: write a list `[a, b]` for an array, `x[(.., 1..3)]` for a slice".into(),
        "block" => "a block `{ .. }` is only a closure's body: bind intermediate values with `let` in the step's body".into(),
        _ => "unsupported expression in scan!: expected arithmetic, a function or method call, indexing, slicing, a cast, a tuple or a list".into(),
    }
}

/// `x.name`: numpy's attributes, what to write instead.
pub fn field(base: &str, name: &str) -> String {
    match name {
        "T" => format!("`{base}.T` is numpy's transpose: write `{base}.t()` or `transpose({base})`"),
        "shape" => format!("`{base}.shape` is a tuple in numpy: read one length, `{base}.shape[0]` (or `{base}.len()`, `{base}.ncols()`)"),
        "ndim" => format!("`{base}.ndim`: ranks are fixed when compiling, not read at run time; the signature gives the rank of `{base}`"),
        "size" => format!("`{base}.size` is not supported: multiply the lengths, `{base}.shape[0] * {base}.shape[1]`"),
        _ => format!("field access `{base}.{name}` is not part of the step language: call a function, `{name}({base})` or `{base}.{name}()`"),
    }
}

pub fn let_else() -> String {
    "`let ... else` is not supported in scan!: bind the value with a plain `let`".into()
}

pub fn let_without_value() -> String {
    "a `let` in scan! needs a value: `let name = expr;`".into()
}

pub fn statement_with_semicolon() -> String {
    "expected `let name = expr;` or the block's final value (no trailing `;`)".into()
}

pub fn trailing_semicolon() -> String {
    "the block's final value ends with `;`: remove the `;` (the block returns its last expression)"
        .into()
}

pub fn statement() -> String {
    "expected `let name = expr;` or the block's final value".into()
}

pub fn no_final_value() -> String {
    "this block has no final value: end it with the expression it returns, without `;`".into()
}

pub fn type_annotation() -> String {
    "type annotations are not needed in scan!: types are inferred; remove `: T`".into()
}

pub fn pattern() -> String {
    "expected a name, `_` or a tuple of names".into()
}

pub fn slice_arity(found: usize) -> String {
    format!(
        "`slice` takes 1 to 3 arguments, as Python's: `slice(stop)`, `slice(start, stop)`, `slice(start, stop, step)` (numpy's `x[start:stop:step]`, `None` for a bound left out), found {found}"
    )
}

pub fn slice_step_zero() -> String {
    "a slice step cannot be zero".into()
}

// ---------------------------------------------------------------------------------------
// spec: the arguments of scan, map, reduce, foldl, foldr
// ---------------------------------------------------------------------------------------

pub fn missing_step(kind: &str) -> String {
    format!("`{kind}` needs a step function: `{kind}(|x_tm1| ..., ...)`")
}

pub fn expected_keyword() -> String {
    "expected a keyword such as `sequences`".into()
}

pub fn unknown_keyword(key: &str, kind: &str, close: Option<&str>, valid: &[&str]) -> String {
    let hint = match (key, kind) {
        ("outputs_info", "map") => {
            "map has no outputs_info (it feeds nothing back): use `scan` for a recurrence; "
                .to_string()
        }
        ("go_backwards", "foldl" | "foldr") => {
            "foldl runs forwards and foldr backwards: choose the fold; ".to_string()
        }
        _ => did_you_mean(close),
    };
    format!(
        "unknown keyword `{key}` for {kind}: {hint}expected one of {}",
        valid.join(", ")
    )
}

pub fn extra_positional(kind: &str, positional: &[&str]) -> String {
    format!(
        "unexpected positional argument: {kind} takes at most {} after the step ({}, in PyTensor's order); pass the others as `keyword = value`",
        positional.len(),
        positional.join(", ")
    )
}

/// `|x| [a, b], until(c)`: Python's `return [a, b], until(c)` without the parentheses.
pub fn until_outside_step() -> String {
    "`until(..)` here is an argument of the scan call, not a value of the step: in a closure the comma ends the step; put the step's values in parentheses, `|x| ([a, b], until(cond))`".into()
}

pub fn keyword_twice(key: &str, positional: Option<usize>) -> String {
    match positional {
        Some(k) => format!(
            "`{key}` is given twice: the argument in position {k} after the step is already the {key} (PyTensor's order: sequences, outputs_info, non_sequences, n_steps); remove one"
        ),
        None => format!("`{key}` is given twice: give each keyword once, with a list `[a, b]` for several values"),
    }
}

/// `outputs_info = (a, None)`: Python's tuple.
pub fn tuple_for_list(key: &str, items: &str) -> String {
    format!("`{key}` takes a list, found a tuple (Python's spelling): write `[{items}]`")
}

pub fn name_not_string() -> String {
    "expected a string literal for `name`, such as `name = \"rnn\"`".into()
}

pub fn unroll(max: usize, found: &str) -> String {
    format!(
        "`unroll` takes an integer literal from 1 to {max}: the copies of the step per loop trip, found `{found}`"
    )
}

pub fn truncate_gradient(found: &str) -> String {
    format!(
        "`truncate_gradient` takes a positive integer literal: the last steps a gradient backpropagates through (`-1`, the default, for all of them), found `{found}`"
    )
}

pub fn checkpoints(found: &str) -> String {
    format!(
        "`checkpoints` takes a positive integer literal: the steps between two states a gradient's forward pass stores (`checkpoints = 32` keeps every 32nd), found `{found}`"
    )
}

/// `checkpoints = n` beside `truncate_gradient = k`.
pub fn checkpoints_with_truncate() -> String {
    "`checkpoints` cannot be combined with `truncate_gradient`: truncated backpropagation stops inside a segment of recomputed steps; keep one of them".into()
}

pub fn flag_not_bool(key: &str, found: &str) -> String {
    format!("`{key}` takes `true` or `false`, found `{found}`: the choice is made when compiling")
}

/// `go_backwards = e` with `e` not a scalar bool.
pub fn backwards_flag_type(label: &str, found: Type) -> String {
    let hint = if found.rank > 0 {
        format!("reduce it to one bool, `any({label})` or `all({label})`")
    } else {
        format!("compare it, `{label} != 0`")
    };
    format!("`go_backwards` takes a bool: `true` or `false` (chosen when compiling) or a scalar bool value such as a `bool` parameter (chosen at run time), but `{label}` is {}; {hint}", a(found))
}

pub fn taps_arity() -> String {
    "expected `taps(value, [tap, ..])`".into()
}

pub fn tap_not_literal(found: &str) -> String {
    format!(
        "a tap is an integer literal such as -1, found `{found}`: taps are fixed when compiling"
    )
}

/// `taps(None, [-1])`: PyTensor's `dict(initial=None, taps=[-1])`.
pub fn taps_without_init() -> String {
    "an output with taps needs an initial state, found `None`: give one, `taps(x0, [-1])`, or write `None` alone for an output that is not fed back".into()
}

pub fn not_a_step_function(name: &str) -> String {
    format!(
        "`{name}` is not a step function: write a closure here, or bind one first with `let {name} = |..| ..;`"
    )
}

pub fn expected_step_closure() -> String {
    "expected the step function as a closure, `|x_tm1, a| x_tm1 * a`, or the name of one bound by `let step = |..| ..;`".into()
}

pub fn sequence_is_scalar(label: &str, t: Type) -> String {
    format!(
        "a sequence is iterated over its leading axis; `{label}` is {}: pass it in `non_sequences` to read it at every step",
        a(t)
    )
}

pub fn needs_steps(kind: &str) -> String {
    format!(
        "`{kind}` needs `sequences` or `n_steps` to know how many steps to run: add `n_steps = k`"
    )
}

pub fn no_step_value() -> String {
    "the step returns no value: return one per output".into()
}

// ---------------------------------------------------------------------------------------
// taps, step arguments and results, until (the rules of `check/scan.rs`)
// ---------------------------------------------------------------------------------------

pub fn output_tap_not_negative(tap: i64) -> String {
    format!("output taps must be negative (a step reads earlier steps of its outputs): found {tap}; use -1 for the previous step")
}

pub fn tap_repeated(tap: i64) -> String {
    format!("tap {tap} is repeated: each tap is listed once; remove this one")
}

pub fn init_without_room(taps: &[i64], depth: i64, init_label: &str, init: Type) -> String {
    format!(
        "an output with taps {taps:?} needs an initial state with one more leading axis than a step's result, of length {depth} (init[0] is output[t-{depth}]); `{init_label}` is {}",
        a(init)
    )
}

pub fn step_arguments(kind: &str, found: usize, passed: &[String]) -> String {
    format!(
        "the step takes {found} argument(s) but {kind} passes {}: {} (every tap of each sequence, then every tap of each output, then the non_sequences)",
        passed.len(),
        if passed.is_empty() {
            "none".to_string()
        } else {
            passed.join(", ")
        }
    )
}

pub fn step_argument_type(param: &str, declared: Type, passed: Type) -> String {
    format!(
        "step argument `{param}` is declared {} but scan passes {} here",
        a(declared),
        a(passed)
    )
}

pub fn step_result_rank(output: usize, init_label: &str, found: Type, row: Type) -> String {
    format!(
        "output {output}: the step returns {} but the initial state `{init_label}` gives {} per step (ranks must match)",
        a(found),
        a(row)
    )
}

pub fn init_narrower(output: usize, init_label: &str, found: DType, init: DType) -> String {
    format!(
        "output {output}: the step returns {found} but the initial state `{init_label}` is {init}: an initial state must not be narrower than the step's result (no implicit downcast); give the initial state dtype {found} or cast the result with `as {init}`"
    )
}

pub fn until_condition(found: Type) -> String {
    let hint = if found.dtype == DType::Bool {
        "reduce it to one with `all(..)` or `any(..)`"
    } else if found.rank == 0 {
        "compare it, `until(x > tol)`"
    } else {
        "compare and reduce it, `until(all(x > tol))`"
    };
    format!(
        "the condition of `until` must be a scalar bool, found {}: {hint}",
        a(found)
    )
}

pub fn until_not_last() -> String {
    "`until(cond)` must be the last value a step returns: `(x_t, until(cond))`".into()
}

pub fn output_count(declared: usize, returned: usize) -> String {
    format!(
        "the step returns {returned} value(s) but outputs_info has {declared} entr{}: one entry per returned value (`None` for a value that is not fed back)",
        if declared == 1 { "y" } else { "ies" }
    )
}

// ---------------------------------------------------------------------------------------
// strict
// ---------------------------------------------------------------------------------------

pub fn strict_capture(name: &str) -> String {
    format!(
        "`{name}` is defined outside the step but not passed to it: with `strict = true`, add `{name}` to `non_sequences` (the step reads it by that name, or by the step argument that receives it)"
    )
}

// ---------------------------------------------------------------------------------------
// names, bindings and function results
// ---------------------------------------------------------------------------------------

pub fn unknown_name(name: &str, close: Option<&str>) -> String {
    match close {
        Some(c) => format!(
            "unknown name `{name}`: not a parameter, a `let` binding or a step argument; did you mean `{c}`?"
        ),
        None => format!(
            "unknown name `{name}`: not a parameter, a `let` binding or a step argument"
        ),
    }
}

pub fn step_function_as_value(name: &str) -> String {
    format!("`{name}` is a step function: pass it to scan, map, reduce, foldl or foldr")
}

pub fn closure_as_value() -> String {
    "a closure is a step function: write it in a scan, map, reduce, foldl or foldr call, or bind it with `let step = |..| ..;` and pass `step`".into()
}

pub fn ok_not_last() -> String {
    "`Ok(..)` is only valid as a function's final value".into()
}

pub fn expected_one_value(found: usize) -> String {
    format!(
        "expected one value, found a tuple of {found}: destructure it first, `let (a, b) = ...;`"
    )
}

pub fn function_end() -> String {
    "a scan! function ends with `Ok(value)` or `Ok((a, b))`".into()
}

pub fn result_not_tuple(declared: usize) -> String {
    format!("the signature returns a tuple of {declared} values: return `Ok((a, b, ..))`")
}

pub fn result_is_tuple(found: usize) -> String {
    format!("the signature returns one value but this is a tuple of {found}: return one value, or declare `Result<(T1, T2, ..)>`")
}

pub fn result_count(declared: usize, found: usize) -> String {
    format!("the signature returns {declared} values but {found} are returned here")
}

pub fn result_type(declared: Type, found: Type) -> String {
    let hint = if declared.rank == found.rank {
        format!(": cast it with `as {}`", declared.dtype)
    } else {
        String::new()
    };
    format!(
        "the signature declares {} here but the value is {}{hint}",
        a(declared),
        a(found)
    )
}

/// A tuple bound to one name.
pub fn tuple_to_name(count: usize) -> String {
    let pattern = if count <= 8 {
        format!("`let ({}) = ...`", vec!["_"; count].join(", "))
    } else {
        format!("a pattern of {count} names")
    };
    format!("this value is a tuple of {count} values: destructure it with {pattern}")
}

pub fn pattern_length(values: usize, names: usize) -> String {
    format!("expected a pattern of {values} names to match the {values} values, found {names}")
}

pub fn not_a_tuple() -> String {
    "this value is not a tuple: bind it to one name".into()
}

// ---------------------------------------------------------------------------------------
// calls: functions of the step language and of the block
// ---------------------------------------------------------------------------------------

pub fn arity(name: &str, expected: &str, found: usize) -> String {
    format!("`{name}` takes {expected} argument(s), found {found}")
}

/// An unknown function or method: ndarray's own methods say what to write instead, others
/// get the closest known name.
pub fn unknown_function(name: &str, method: bool, close: Option<&str>) -> String {
    let what = if method { "method" } else { "function" };
    if let Some(hint) = ndarray_method(name) {
        return format!("`{name}` is ndarray's, not a {what} of the step language; {hint}");
    }
    match close {
        Some(c) => format!("unknown {what} `{name}`: did you mean `{c}`?"),
        None => format!("unknown {what} `{name}`: not a function of the step language (docs/SEMANTICS.md lists them) nor a `fn` of this scan! block"),
    }
}

/// What to write instead of one of ndarray's (or Rust's) methods.
fn ndarray_method(name: &str) -> Option<String> {
    Some(match name {
        "mapv" | "map" | "mapv_into" | "map_inplace" | "mapv_inplace" | "apply" | "zip_mut_with" => {
            "functions and operators apply elementwise to whole arrays: write `exp(x)` or `x * 2.0` on the array itself".into()
        }
        "iter" | "into_iter" | "iter_mut" | "outer_iter" | "axis_iter" | "rows" | "columns"
        | "lanes" | "collect" | "fold" | "for_each" => {
            "there are no iterators in a step: reduce with `sum(x)`, `max(x)`, .., or iterate over rows with `map(|row| .., sequences = x)`".into()
        }
        "to_owned" | "clone" | "view" | "into_owned" | "as_standard_layout" | "to_vec"
        | "into_dyn" | "reborrow" | "cloned" | "copied" => {
            "values are arrays already, with no views or copies to manage: write the value itself".into()
        }
        "sum_axis" | "mean_axis" | "var_axis" | "std_axis" | "fold_axis" => format!(
            "write `{}(x, axis)` with the axis an integer literal",
            name.trim_end_matches("_axis")
        ),
        "Axis" => "an axis is an integer literal: `sum(x, 0)`, not `Axis(0)`".into(),
        "len_of" => "write `x.shape[k]` for the length of axis k".into(),
        "row" | "index_axis" => "index it, `x[i]` (or `x[(.., i)]` for axis 1)".into(),
        "column" => "index it, `x[(.., j)]`".into(),
        "slice_axis" | "slice_mut" | "slice_move" => "slice it, `x[(.., 1..3)]`".into(),
        "assign" | "fill" => "values are immutable: `set_subtensor(x[a..b], v)` returns the array with that part replaced".into(),
        "insert_axis" => "write `expand_dims(x, axis)` or `x[(.., None)]`".into(),
        "remove_axis" => "write `squeeze(x, axis)`".into(),
        "reversed_axes" | "permuted_axes" => "write `transpose(x)` or `transpose(x, axes)`".into(),
        "into_shape" | "into_shape_with_order" | "to_shape" => "write `reshape(x, (n, m))`".into(),
        "unwrap" | "expect" => "a step has no `Option` or `Result` to unwrap: remove it".into(),
        "ndim" => "ranks are fixed when compiling: the signature gives each value's rank".into(),
        "scalar_sum" => "write `sum(x)`".into(),
        _ => return None,
    })
}

pub fn own_function_recursion(name: &str) -> String {
    format!("`{name}` calls itself (directly or through other functions): scan! functions are inlined where they are called, so they cannot recurse")
}

pub fn own_function_arity(name: &str, params: &[String], found: usize) -> String {
    format!(
        "`{name}` takes {} argument(s) ({}), found {found}",
        params.len(),
        params.join(", ")
    )
}

pub fn own_function_argument(name: &str, param: &str, declared: Type, found: Type) -> String {
    format!(
        "`{name}` takes {} as `{param}`, found {}",
        a(declared),
        a(found)
    )
}

// ---------------------------------------------------------------------------------------
// calls: per-function rules (lower/call.rs)
// ---------------------------------------------------------------------------------------

/// A keyword argument given to a function that takes none (only the linear algebra does).
pub fn no_keyword_arguments(name: &str) -> String {
    format!("`{name}` takes no keyword arguments: pass its arguments by position, in numpy's order (only the linear algebra's options and the random draws' `dtype` are keywords)")
}

pub fn full_value(found: Type) -> String {
    format!(
        "the value of `full` is a scalar, found {}: `full(shape, value)` fills with one value (`broadcast_to(x, shape)` repeats an array)",
        a(found)
    )
}

pub fn full_like_value(found: Type) -> String {
    format!(
        "the value of `full_like` is a scalar, found {}: `full_like(x, value)` fills x's shape with one value",
        a(found)
    )
}

pub fn powi_exponent() -> String {
    "the exponent of `powi` is an integer literal (i32); use `pow` for a computed exponent".into()
}

pub fn powi_negative_of_integers(dtype: &str, k: i32) -> String {
    format!(
        "an integer to a negative power is not an integer (numpy raises): `powi` of {dtype} \
         with exponent {k}; cast first (`powi(x as f64, {k})`) or use `pow`, which computes \
         integers in f64"
    )
}

pub fn join_not_a_list(name: &str) -> String {
    format!("`{name}` takes a list of arrays: `{name}([a, b], axis)`")
}

pub fn squeeze_without_axis() -> String {
    "`squeeze` needs the axis to remove, `squeeze(x, 0)` or `squeeze(x, (0, 2))`: lengths are known only at run time, and the rank of every value is fixed when compiling".into()
}

pub fn broadcast_to_drops_axes(label: &str, t: Type, lengths: usize) -> String {
    format!(
        "`broadcast_to` keeps every axis: `{label}` is {} but the shape has {lengths} length{}",
        a(t),
        if lengths == 1 { "" } else { "s" }
    )
}

/// A shape (`full`, `broadcast_to`, `reshape`) of more axes than any value may have.
pub fn shape_rank_limit(axes: usize, max: usize) -> String {
    format!("a shape of {axes} axes: at most {max} are supported")
}

pub fn diag_rank(t: Type) -> String {
    format!(
        "`diag` takes a vector (to make a matrix) or a matrix (to take its diagonal), found {}",
        a(t)
    )
}

/// `tril`, `triu` of a scalar or a vector.
pub fn tri_rank(name: &str, t: Type) -> String {
    format!(
        "`{name}` takes an array of rank 2 or more (it acts on the last two axes), found {}",
        a(t)
    )
}

pub fn identity_like_rank(t: Type) -> String {
    format!(
        "`identity_like` takes a matrix (an identity of its shape), found {}",
        a(t)
    )
}

/// `slice(..)` called as a function rather than written as an index.
pub fn slice_as_function() -> String {
    "`slice(start, stop, step)` is an index, as Python's slice object: `x[slice(None, None, -1)]` is numpy's `x[::-1]`, `x[(.., slice(1, None, 2))]` is `x[:, 1::2]`".into()
}

pub fn outer_rank(t: Type) -> String {
    format!(
        "`outer` takes two vectors, found {}: flatten it first",
        a(t)
    )
}

pub fn shape_axis_literal() -> String {
    "the axis of `shape` is an integer literal (`x.shape[0]`, `x.shape[-1]`)".into()
}

/// `x.shape[axis]` (or `nrows`, `ncols`, `len`) of an axis the value does not have.
pub fn shape_no_axis(label: &str, rank: usize, axis: i64) -> String {
    format!(
        "`{label}` has rank {rank}: it has no axis {axis}{}",
        if rank == 0 {
            " (a scalar has no shape)"
        } else {
            ""
        }
    )
}

pub fn transpose_axes(t: Type) -> String {
    format!(
        "the axes of `transpose` are a permutation of 0..{}: each axis of the {t} once",
        t.rank
    )
}

/// `dot` or a reduction (`max`, `mean`, ..) of bools.
pub fn numbers_not_bool(name: &str) -> String {
    format!("`{name}` expects numbers, found bool: cast it with `as i64` or `as f64`")
}

/// `concatenate([])`, `stack([])`, `[]`: `name` is "`concatenate`", "`stack`" or "a list".
pub fn join_empty(name: &str) -> String {
    format!("{name} needs at least one value to join: its shape would be unknown")
}

pub fn concatenate_scalar(label: &str) -> String {
    format!("`concatenate` joins arrays along an axis, but `{label}` is a scalar: use `stack` or a list `[a, b]` to make a vector of scalars")
}

pub fn join_ranks(name: &str, first_label: &str, first: Type, label: &str, t: Type) -> String {
    format!(
        "{name} joins values of one rank: `{first_label}` is {} but `{label}` is {}",
        a(first),
        a(t)
    )
}

pub fn join_rank_limit(name: &str, rank: usize, axes: usize, max: usize) -> String {
    format!("{name} of values of rank {rank} would have {axes} axes: at most {max} are supported")
}

pub fn axis_twice(axis: usize) -> String {
    format!("axis {axis} is given twice: give each axis once")
}

pub fn axis_literal(found: &str) -> String {
    format!("an axis is an integer literal, found `{found}`: write `0`, `1`, .. or `-1` (axes are fixed when compiling)")
}

pub fn axis_out_of_range(axis: i64, t: Type) -> String {
    let rank = t.rank as i64;
    format!(
        "axis {axis} is out of range for {} (valid: {}..{})",
        a(t),
        -rank,
        rank
    )
}

/// A mask of more axes than the array it indexes (a read `x[mask]` or `set_subtensor`).
pub fn mask_rank(mask: Type, label: &str, x: Type) -> String {
    format!(
        "the mask is {} but `{label}` is {}: a mask covers the leading axes of the array it indexes",
        a(mask),
        a(x)
    )
}

pub fn set_subtensor_target() -> String {
    "the first argument of set_subtensor is an indexed value, such as `x[i][j]` or `x[a..b]`".into()
}

pub fn inc_subtensor_bool() -> String {
    "`inc_subtensor` adds numbers, but the array is bool: use `set_subtensor`".into()
}

pub fn set_subtensor_value_rank(value: Type, region: Type) -> String {
    format!(
        "the value is {} but the target region is {}: the value broadcasts into the region, so its rank is at most the region's",
        a(value),
        a(region)
    )
}

pub fn set_subtensor_value_dtype(value: DType, array: DType) -> String {
    format!("the value is {value} but the array is {array}: cast it with `as {array}`")
}

// ---------------------------------------------------------------------------------------
// gradients: `grad(cost, wrt)` (lower/grad.rs, grad/)
// ---------------------------------------------------------------------------------------

pub fn grad_cost(found: Type) -> String {
    format!(
        "the cost of `grad` is a float scalar, found {}: reduce it to one number first, `grad(sum(y), x)` or `grad(mean(y), x)`",
        a(found)
    )
}

pub fn grad_wrt_not_a_name(found: &str) -> String {
    format!("`grad` differentiates with respect to names bound to values, found `{found}`: bind it first, `let v = {found};`, compute the cost from `v` and write `grad(cost, v)` (or a list of names, `grad(cost, [a, b])`)")
}

pub fn grad_wrt_not_float(name: &str, found: Type) -> String {
    format!("`{name}` is {}: integers and bools have no gradient; differentiate with respect to a float value (a cast made before the cost reads it: `let {name}_f = {name} as f64;`)", a(found))
}

pub fn grad_disconnected(name: &str) -> String {
    format!("the cost does not depend on `{name}`, so its gradient is not defined (as PyTensor's `grad` raises by default): remove `{name}` from the list, or use `zeros_like({name})` if a zero gradient is what you want")
}

/// An error of the backward pass of a scan's step (`grad/scan.rs`), with the scan named.
pub fn grad_in_scan_step(error: &str, scan: &str) -> String {
    format!("{error} (in the step of `{scan}`, which the cost reads)")
}

/// An op on the way from the cost to a differentiated value with no gradient rule
/// (`detail` says which use of it, e.g. "of a matrix").
pub fn grad_no_rule(op: &str, detail: Option<&str>) -> String {
    let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
    format!(
        "`grad` cannot differentiate through `{op}`{detail}: it has no gradient rule; compute the cost without it, or from values it does not read"
    )
}

/// A differentiable function whose derivative the runtime cannot compute.
pub fn grad_missing_derivative(op: &str, derivative: &str) -> String {
    format!(
        "`grad` cannot differentiate through `{op}`: its derivative, `{derivative}`, has no formula in the runtime; compute the cost without it"
    )
}

/// A gradient rule that made a contribution of the wrong type: a compiler bug, reported.
pub fn grad_internal(op: &str, found: Type, expected: Type) -> String {
    format!(
        "internal error: the gradient rule of `{op}` made {} where {} was expected; please report it",
        a(found),
        a(expected)
    )
}

/// The backward passes of a checkpointed scan's last steps and of its segments, built from
/// the same step, came out differently (`grad/checkpoints.rs`).
pub fn grad_checkpoints_internal(scan: &str) -> String {
    format!("internal error: the backward passes over the segments of `{scan}` (`checkpoints`) do not match; please report it")
}

// ---------------------------------------------------------------------------------------
// linear algebra (lower/linalg.rs)
// ---------------------------------------------------------------------------------------

pub fn positional_after_keyword() -> String {
    "a positional argument after a keyword argument: write the positional arguments first (Python's rule)".into()
}

/// `expected`: "1", "2 (and up to 3 options)".
pub fn linalg_positional(name: &str, expected: &str, found: usize) -> String {
    format!("`{name}` takes {expected} positional argument(s), found {found}")
}

pub fn linalg_keyword_twice(name: &str, key: &str) -> String {
    format!("`{name}` got `{key}` twice: give it once, by position or by name")
}

pub fn linalg_unknown_keyword(
    name: &str,
    key: &str,
    close: Option<&str>,
    options: &[&str],
) -> String {
    let hint = match close {
        Some(c) => format!("did you mean `{c}`?"),
        None if options.is_empty() => format!("`{name}` takes no keyword arguments"),
        None => format!(
            "`{name}` takes {}",
            options
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("unknown keyword argument `{key}` of `{name}`: {hint}")
}

pub fn linalg_matrix_rank(name: &str, t: Type) -> String {
    format!(
        "`{name}` takes a matrix (batches of matrices are not supported), found {}",
        a(t)
    )
}

pub fn linalg_rhs_rank(name: &str, t: Type) -> String {
    format!(
        "the right-hand side of `{name}` is a vector or a matrix (one column per right-hand side), found {}",
        a(t)
    )
}

pub fn linalg_float(name: &str, t: Type, label: &str) -> String {
    format!(
        "`{name}` computes in f32 or f64, found {}: cast it (`{label} as f64`)",
        a(t)
    )
}

pub fn cho_solve_factor() -> String {
    "the first argument of `cho_solve` is `(c, lower)`, as scipy's, or the lower factor `c` alone"
        .into()
}

pub fn linalg_bool_option(name: &str, option: &str) -> String {
    format!("`{option}` of `{name}` is a literal `true` or `false` (it chooses the code compiled)")
}

/// `allowed`: the strings, quoted and joined (`"gen", "pos", "sym"`).
pub fn linalg_string_option(
    name: &str,
    option: &str,
    allowed: &str,
    found: Option<&str>,
) -> String {
    match found {
        Some(s) => format!("`{option}` of `{name}` is one of {allowed}, found \"{s}\""),
        None => format!("`{option}` of `{name}` is a string literal, one of {allowed}"),
    }
}

pub fn trans_option() -> String {
    "`trans` of `solve_triangular` is 0, 1 or 2, or \"N\", \"T\" or \"C\", as scipy's".into()
}

// ---------------------------------------------------------------------------------------
// types of operands
// ---------------------------------------------------------------------------------------

pub fn where_condition(found: Type) -> String {
    format!(
        "the condition of `where` must be bool, found {}: compare it, `where_(x > 0.0, a, b)`",
        a(found)
    )
}

pub fn elemwise_operands(op: &str, expected: &str, found: DType) -> String {
    let hint = if expected == "bool" && found != DType::Bool {
        "; `&`, `|`, `^` and `!` are the logical operations of bool arrays (numpy's \
         `logical_and`, ..), not bitwise ones: compare numbers first (`x != 0`)"
    } else {
        ""
    };
    format!("`{op}` expects {expected}, found {found}{hint}")
}

/// An index, a bound, a count (`n_steps`) that is not a scalar integer.
pub fn scalar_integer(what: &str, found: Type) -> String {
    let hint = if found.rank > 0 {
        "index or reduce it to one value"
    } else if found.dtype == DType::Bool {
        "use an integer"
    } else {
        "cast it with `as i64`"
    };
    format!(
        "{what} must be a scalar integer, found {}: {hint}",
        a(found)
    )
}

pub fn dot_ranks(a_ty: Type, b_ty: Type) -> String {
    let hint = if a_ty.rank == 0 || b_ty.rank == 0 {
        "use `*` to scale by a scalar"
    } else {
        "for a product of stacks of matrices (batched), write `matmul(a, b)`; for arrays of rank 4 or more, loop over the leading axis with `map`, or `reshape`"
    };
    format!(
        "`dot` multiplies vectors, matrices and stacks of matrices (rank 3), at most one of them a stack, found {} and {}; {hint}",
        a(a_ty),
        a(b_ty)
    )
}

/// `matmul` of operands of rank 0 or above 3.
pub fn matmul_ranks(a_ty: Type, b_ty: Type) -> String {
    let hint = if a_ty.rank == 0 || b_ty.rank == 0 {
        "numpy's `matmul` takes no scalar: use `*` to scale by one"
    } else {
        "for arrays of rank 4 or more, loop over the leading axis with `map`, or `reshape` to a stack of matrices"
    };
    format!(
        "`matmul` multiplies vectors, matrices and stacks of matrices (ranks 1 to 3), found {} and {}; {hint}",
        a(a_ty),
        a(b_ty)
    )
}

/// `tensordot` without its axes, or with axes it does not take.
pub fn tensordot_axes(found: Option<&str>) -> String {
    let what = match found {
        None => "`tensordot` needs its axes: numpy's default of 2 is not supported".to_string(),
        Some(f) => format!("`tensordot` contracts one axis of each array, found axes `{f}`"),
    };
    format!("{what}; write `tensordot(a, b, 1)` (a's last axis with b's first) or `tensordot(a, b, ([i], [j]))` (a's axis i with b's axis j), the axes integer literals")
}

/// `tensordot` whose contraction has no product kernel.
pub fn tensordot_ranks(a_ty: Type, b_ty: Type) -> String {
    format!(
        "`tensordot` of {} and {} is not supported: the contracted axis is moved last in the first array and first in the second, which then must be a vector or a matrix (`dot`'s ranks: the first of rank 1 to 3, the second of rank 1 or 2); write `matmul` or `dot`, or `reshape` to those ranks",
        a(a_ty),
        a(b_ty)
    )
}

// ---------------------------------------------------------------------------------------
// index: indexing and slicing
// ---------------------------------------------------------------------------------------

pub fn boolean_mask_read(label: &str) -> String {
    format!("`{label}` is a boolean mask: it selects on the leading axes by itself, `x[mask]` or `set_subtensor(x[mask], v)`, not inside a tuple index, in `take`, or after other indexing in `set_subtensor`; index in two steps, `x[mask][(.., j)]`")
}

pub fn index_array_type(found: Type) -> String {
    format!(
        "an index array is an array of integers (numpy's `x[idx]`), found {}",
        a(found)
    )
}

/// An index array of rank 2 or more written through.
pub fn scatter_index_rank(found: Type) -> String {
    format!(
        "`set_subtensor`/`inc_subtensor` through an index array take a vector of indices, found {}: `reshape` the indices (and the value) to one axis",
        a(found)
    )
}

/// A gather whose result would have more axes than supported.
pub fn gather_rank(x: Type, idx: Type, max: usize) -> String {
    format!(
        "indexing {} with {} would make {} axes: at most {max} are supported",
        a(x),
        a(idx),
        x.rank + idx.rank - 1
    )
}

pub fn index_array_write_nested() -> String {
    "`set_subtensor`/`inc_subtensor` with an index array write into the array itself, `x[idx]` or `x[(.., idx)]` (other items `..`), not into a part of it already indexed".into()
}

pub fn index_array_mixed() -> String {
    "an index array in a tuple index goes with slices and `..` only (numpy would move the axes of several index arrays, or of one beside integers or None): index in two steps, `x[(.., idx)][(0, ..)]`".into()
}

pub fn too_many_indices_scalar(label: &str) -> String {
    format!("too many indices: `{label}` is a scalar")
}

pub fn too_many_indices(t: Type) -> String {
    format!("too many indices: the value is {}", a(t))
}

// --- keyword arguments, strings and random numbers -------------------------------------

pub fn matmul_of_bools() -> String {
    "`matmul` expects numbers, found bool: cast with `as f64` (or `as i64`) first".into()
}

pub fn string_out_of_place() -> String {
    "a string is only valid as the value of a keyword argument that takes one (`assume_a = \"pos\"`, `on_error = \"nan\"`)".into()
}

pub fn keyword_out_of_place(name: &impl Display) -> String {
    format!("a keyword argument `{name} = ..` is only valid in a call of a function that takes it (the linear algebra functions' options, the random draws' `dtype`: docs/SEMANTICS.md)")
}

pub fn keyword_without_name() -> String {
    "expected a keyword argument `name = value` (a name on the left)".into()
}

pub fn draw_dtype() -> String {
    "the dtype of a draw is `f32` or `f64` (`dtype = f32`)".into()
}

/// A keyword the random function `name` does not take (`draws` takes `dtype`).
pub fn draw_keyword(name: &str, draws: bool) -> String {
    if draws {
        format!("`{name}` takes only the keyword `dtype = f32` (or `f64`)")
    } else {
        format!("`{name}` takes no keyword argument: pass its arguments by position")
    }
}

pub fn scalar_logits() -> String {
    "the logits of `categorical` are an array (one category per element of the last axis), found a scalar: give a vector, one logit per category".into()
}

pub fn not_a_key(t: Type) -> String {
    let hint = if t.rank > 0 && t.dtype == DType::I64 {
        ": an array of keys gives one key per row (`keys[t]`, or pass it as a sequence)"
    } else {
        ": make one with `rng_key(seed)`, `split(key)` or a draw's first result"
    };
    format!("a random key is a scalar i64, found {t}{hint}")
}

pub fn float_parameter(what: &str, t: Type) -> String {
    format!("{what} is a float, found {t}: cast it with `as f64`")
}

// --- a .scan file that does not split into tokens (build scripts and scanc) -------------

pub fn unterminated_string() -> String {
    "unterminated string: this string is never closed".into()
}

pub fn bad_char_literal() -> String {
    "invalid character literal or lifetime: the step language has neither; a keyword's text is written in double quotes (`assume_a = \"pos\"`)".into()
}

pub fn unterminated_comment() -> String {
    "unterminated block comment: this `/*` is never closed".into()
}

pub fn unclosed_delimiter(c: char) -> String {
    format!("unclosed delimiter: this `{c}` is never closed")
}

pub fn unexpected_closing(c: char) -> String {
    format!("unexpected closing delimiter `{c}`: it closes nothing, or a delimiter opened before it is not closed")
}

pub fn unexpected_character(c: char) -> String {
    format!("unexpected character `{c}`: it is not part of any Rust token")
}

pub fn not_tokens() -> String {
    "the source does not split into Rust tokens: look for an unclosed string, comment or delimiter before this point".into()
}

// ---------------------------------------------------------------------------------------
// gradients of the linear algebra (grad/linalg.rs)
// ---------------------------------------------------------------------------------------

/// A factorisation whose results include an arbitrary basis (`svd`'s vectors with
/// `full_matrices = true`, `qr`'s `q` with mode "complete"): `option` is the option as
/// written, `instead` what to write.
pub fn grad_arbitrary_basis(op: &str, option: &str, instead: &str) -> String {
    format!(
        "`grad` cannot differentiate through `{op}` with `{option}`: past min(m, n) its columns are an arbitrary basis, which has no derivative; write `{instead}`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndarray_methods_say_what_to_write_and_others_get_the_closest_name() {
        let m = unknown_function("mapv", true, Some("max"));
        assert!(m.starts_with("`mapv` is ndarray's, not a method"), "{m}");
        assert!(m.contains("`x * 2.0`"), "{m}");
        assert_eq!(
            unknown_function("sume", true, Some("sum")),
            "unknown method `sume`: did you mean `sum`?"
        );
        assert!(unknown_function("gelu", false, None).starts_with("unknown function `gelu`: not"));
        // None of ndarray's names is a function of the step language.
        for name in [
            "mapv", "iter", "to_owned", "sum_axis", "Axis", "row", "assign",
        ] {
            assert!(ndarray_method(name).is_some(), "{name}");
            assert!(crate::ir::ElemOp::by_name(name).is_none(), "{name}");
        }
    }

    #[test]
    fn types_are_written_with_their_article() {
        let v = Type::new(DType::F64, 1);
        assert_eq!(a(v), "a vector of f64");
        assert_eq!(
            until_condition(Type::new(DType::Bool, 1)),
            "the condition of `until` must be a scalar bool, found a vector of bool: reduce it to one with `all(..)` or `any(..)`"
        );
        assert!(scalar_integer("n_steps", Type::scalar(DType::F32)).ends_with("`as i64`"));
    }
}
