//! The elementwise family: every operation that maps scalars to a scalar and broadcasts
//! over arrays the numpy way. One table holds each operation's surface name, arity and type
//! rule; the emitter and the evaluator each hold their own formula, keyed by the same enum.

use super::types::DType;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// numpy's `floor_divide` (`//`): rounds toward negative infinity.
    FloorDiv,
    Neg,
    Not,
    And,
    Or,
    /// Exclusive or of bools (numpy's `logical_xor`, `a ^ b`).
    Xor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Abs,
    Exp,
    Log,
    Tanh,
    Sigmoid,
    Sqrt,
    Pow,
    /// Integer power with a literal exponent.
    Powi(i32),
    Maximum,
    Minimum,
    /// `where(cond, a, b)`: the condition is bool, the branches share the result dtype.
    Where,
    Sin,
    Cos,
    Tan,
    Arcsin,
    Arccos,
    Arctan,
    Sinh,
    Cosh,
    Arcsinh,
    Arccosh,
    Arctanh,
    Log1p,
    Expm1,
    Log2,
    Log10,
    Exp2,
    /// `x * x`; keeps integer dtypes (wrapping), as numpy.
    Square,
    /// `1 / x`, in the float dtype (PyTensor's rule; numpy keeps integers).
    Reciprocal,
    /// -1, 0 or 1 (NaN for NaN, +0 for -0); keeps integer dtypes.
    Sign,
    Floor,
    Ceil,
    /// Round half to even, as numpy's `round`/`rint`.
    Round,
    Trunc,
    IsNan,
    IsInf,
    IsFinite,
    /// `log(1 + exp(x))`, computed without overflow.
    Softplus,
    /// `log(sigmoid(x)) = -softplus(-x)`.
    LogSigmoid,
    /// `maximum(x, 0)`; keeps integer dtypes.
    Relu,
    Arctan2,
    /// `log(exp(a) + exp(b))`, computed without overflow.
    LogAddExp,
    /// `clip(x, lo, hi) = minimum(maximum(x, lo), hi)`, the three promoted together.
    Clip,
    Erf,
    /// `1 - erf(x)`, accurate where erf is near 1.
    Erfc,
    /// `exp(x^2) erfc(x)`, finite where erfc underflows.
    Erfcx,
    /// The inverse of erf on [-1, 1].
    Erfinv,
    /// `log(1 - exp(x))` for `x <= 0`, accurate on both sides of `-ln 2`.
    Log1mexp,
    /// `log|Gamma(x)|` (scipy's `gammaln`).
    Gammaln,
    /// `Gamma'(x) / Gamma(x)` (scipy's `digamma`, also `psi`).
    Digamma,
}

/// How an operation's operand and result dtypes follow from its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeRule {
    /// Numbers in, promoted dtype out.
    Arith,
    /// Numbers in, computed in (and returning) the float dtype of the promotion.
    Float,
    /// Numbers in, promoted for the comparison, bool out.
    Compare,
    /// Bools in, bool out.
    Logical,
    /// Bool condition, then two numbers promoted together.
    Select,
    /// Numbers in, tested in the float dtype of the promotion, bool out (`isnan`).
    FloatTest,
}

impl ElemOp {
    /// Functions callable by name (or as methods) in the step language.
    pub const NAMED: &'static [(&'static str, ElemOp)] = &[
        ("abs", ElemOp::Abs),
        ("exp", ElemOp::Exp),
        ("log", ElemOp::Log),
        ("ln", ElemOp::Log),
        ("tanh", ElemOp::Tanh),
        ("sigmoid", ElemOp::Sigmoid),
        ("sqrt", ElemOp::Sqrt),
        ("pow", ElemOp::Pow),
        ("powf", ElemOp::Pow),
        ("maximum", ElemOp::Maximum),
        ("minimum", ElemOp::Minimum),
        ("where_", ElemOp::Where),
        ("switch", ElemOp::Where),
        ("select", ElemOp::Where),
        ("sin", ElemOp::Sin),
        ("cos", ElemOp::Cos),
        ("tan", ElemOp::Tan),
        ("arcsin", ElemOp::Arcsin),
        ("asin", ElemOp::Arcsin),
        ("arccos", ElemOp::Arccos),
        ("acos", ElemOp::Arccos),
        ("arctan", ElemOp::Arctan),
        ("atan", ElemOp::Arctan),
        ("sinh", ElemOp::Sinh),
        ("cosh", ElemOp::Cosh),
        ("arcsinh", ElemOp::Arcsinh),
        ("asinh", ElemOp::Arcsinh),
        ("arccosh", ElemOp::Arccosh),
        ("acosh", ElemOp::Arccosh),
        ("arctanh", ElemOp::Arctanh),
        ("atanh", ElemOp::Arctanh),
        ("log1p", ElemOp::Log1p),
        ("ln_1p", ElemOp::Log1p),
        ("expm1", ElemOp::Expm1),
        ("exp_m1", ElemOp::Expm1),
        ("log2", ElemOp::Log2),
        ("log10", ElemOp::Log10),
        ("exp2", ElemOp::Exp2),
        ("square", ElemOp::Square),
        ("reciprocal", ElemOp::Reciprocal),
        ("recip", ElemOp::Reciprocal),
        ("sign", ElemOp::Sign),
        ("floor", ElemOp::Floor),
        ("ceil", ElemOp::Ceil),
        ("round", ElemOp::Round),
        ("round_ties_even", ElemOp::Round),
        ("trunc", ElemOp::Trunc),
        ("isnan", ElemOp::IsNan),
        ("is_nan", ElemOp::IsNan),
        ("isinf", ElemOp::IsInf),
        ("is_infinite", ElemOp::IsInf),
        ("isfinite", ElemOp::IsFinite),
        ("is_finite", ElemOp::IsFinite),
        ("softplus", ElemOp::Softplus),
        ("log_sigmoid", ElemOp::LogSigmoid),
        ("relu", ElemOp::Relu),
        ("arctan2", ElemOp::Arctan2),
        ("atan2", ElemOp::Arctan2),
        ("logaddexp", ElemOp::LogAddExp),
        ("clip", ElemOp::Clip),
        ("floor_div", ElemOp::FloorDiv),
        ("floor_divide", ElemOp::FloorDiv),
        ("erf", ElemOp::Erf),
        ("erfc", ElemOp::Erfc),
        ("erfcx", ElemOp::Erfcx),
        ("erfinv", ElemOp::Erfinv),
        ("log1mexp", ElemOp::Log1mexp),
        ("gammaln", ElemOp::Gammaln),
        ("digamma", ElemOp::Digamma),
        ("psi", ElemOp::Digamma),
        ("logical_and", ElemOp::And),
        ("logical_or", ElemOp::Or),
        ("logical_xor", ElemOp::Xor),
        ("logical_not", ElemOp::Not),
    ];

    pub fn by_name(name: &str) -> Option<ElemOp> {
        ElemOp::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
    }

    pub fn name(self) -> &'static str {
        match self {
            ElemOp::Add => "add",
            ElemOp::Sub => "sub",
            ElemOp::Mul => "mul",
            ElemOp::Div => "div",
            ElemOp::Rem => "rem",
            ElemOp::FloorDiv => "floor_div",
            ElemOp::Neg => "neg",
            ElemOp::Not => "logical_not",
            ElemOp::And => "logical_and",
            ElemOp::Or => "logical_or",
            ElemOp::Xor => "logical_xor",
            ElemOp::Lt => "lt",
            ElemOp::Le => "le",
            ElemOp::Gt => "gt",
            ElemOp::Ge => "ge",
            ElemOp::Eq => "eq",
            ElemOp::Ne => "ne",
            ElemOp::Abs => "abs",
            ElemOp::Exp => "exp",
            ElemOp::Log => "log",
            ElemOp::Tanh => "tanh",
            ElemOp::Sigmoid => "sigmoid",
            ElemOp::Sqrt => "sqrt",
            ElemOp::Pow => "pow",
            ElemOp::Powi(_) => "powi",
            ElemOp::Maximum => "maximum",
            ElemOp::Minimum => "minimum",
            ElemOp::Where => "where",
            ElemOp::Sin => "sin",
            ElemOp::Cos => "cos",
            ElemOp::Tan => "tan",
            ElemOp::Arcsin => "arcsin",
            ElemOp::Arccos => "arccos",
            ElemOp::Arctan => "arctan",
            ElemOp::Sinh => "sinh",
            ElemOp::Cosh => "cosh",
            ElemOp::Arcsinh => "arcsinh",
            ElemOp::Arccosh => "arccosh",
            ElemOp::Arctanh => "arctanh",
            ElemOp::Log1p => "log1p",
            ElemOp::Expm1 => "expm1",
            ElemOp::Log2 => "log2",
            ElemOp::Log10 => "log10",
            ElemOp::Exp2 => "exp2",
            ElemOp::Square => "square",
            ElemOp::Reciprocal => "reciprocal",
            ElemOp::Sign => "sign",
            ElemOp::Floor => "floor",
            ElemOp::Ceil => "ceil",
            ElemOp::Round => "round",
            ElemOp::Trunc => "trunc",
            ElemOp::IsNan => "isnan",
            ElemOp::IsInf => "isinf",
            ElemOp::IsFinite => "isfinite",
            ElemOp::Softplus => "softplus",
            ElemOp::LogSigmoid => "log_sigmoid",
            ElemOp::Relu => "relu",
            ElemOp::Arctan2 => "arctan2",
            ElemOp::LogAddExp => "logaddexp",
            ElemOp::Clip => "clip",
            ElemOp::Erf => "erf",
            ElemOp::Erfc => "erfc",
            ElemOp::Erfcx => "erfcx",
            ElemOp::Erfinv => "erfinv",
            ElemOp::Log1mexp => "log1mexp",
            ElemOp::Gammaln => "gammaln",
            ElemOp::Digamma => "digamma",
        }
    }

    pub fn arity(self) -> usize {
        match self {
            ElemOp::Neg
            | ElemOp::Not
            | ElemOp::Abs
            | ElemOp::Exp
            | ElemOp::Log
            | ElemOp::Tanh
            | ElemOp::Sigmoid
            | ElemOp::Sqrt
            | ElemOp::Powi(_)
            | ElemOp::Sin
            | ElemOp::Cos
            | ElemOp::Tan
            | ElemOp::Arcsin
            | ElemOp::Arccos
            | ElemOp::Arctan
            | ElemOp::Sinh
            | ElemOp::Cosh
            | ElemOp::Arcsinh
            | ElemOp::Arccosh
            | ElemOp::Arctanh
            | ElemOp::Log1p
            | ElemOp::Expm1
            | ElemOp::Log2
            | ElemOp::Log10
            | ElemOp::Exp2
            | ElemOp::Square
            | ElemOp::Reciprocal
            | ElemOp::Sign
            | ElemOp::Floor
            | ElemOp::Ceil
            | ElemOp::Round
            | ElemOp::Trunc
            | ElemOp::IsNan
            | ElemOp::IsInf
            | ElemOp::IsFinite
            | ElemOp::Softplus
            | ElemOp::LogSigmoid
            | ElemOp::Relu
            | ElemOp::Erf
            | ElemOp::Erfc
            | ElemOp::Erfcx
            | ElemOp::Erfinv
            | ElemOp::Log1mexp
            | ElemOp::Gammaln
            | ElemOp::Digamma => 1,
            ElemOp::Where | ElemOp::Clip => 3,
            _ => 2,
        }
    }

    pub fn rule(self) -> TypeRule {
        match self {
            ElemOp::Add
            | ElemOp::Sub
            | ElemOp::Mul
            | ElemOp::Rem
            | ElemOp::FloorDiv
            | ElemOp::Neg
            | ElemOp::Abs
            | ElemOp::Powi(_)
            | ElemOp::Maximum
            | ElemOp::Minimum
            | ElemOp::Square
            | ElemOp::Sign
            | ElemOp::Relu
            | ElemOp::Clip => TypeRule::Arith,
            ElemOp::Div
            | ElemOp::Exp
            | ElemOp::Log
            | ElemOp::Tanh
            | ElemOp::Sigmoid
            | ElemOp::Sqrt
            | ElemOp::Pow
            | ElemOp::Sin
            | ElemOp::Cos
            | ElemOp::Tan
            | ElemOp::Arcsin
            | ElemOp::Arccos
            | ElemOp::Arctan
            | ElemOp::Sinh
            | ElemOp::Cosh
            | ElemOp::Arcsinh
            | ElemOp::Arccosh
            | ElemOp::Arctanh
            | ElemOp::Log1p
            | ElemOp::Expm1
            | ElemOp::Log2
            | ElemOp::Log10
            | ElemOp::Exp2
            | ElemOp::Reciprocal
            | ElemOp::Floor
            | ElemOp::Ceil
            | ElemOp::Round
            | ElemOp::Trunc
            | ElemOp::Softplus
            | ElemOp::LogSigmoid
            | ElemOp::Arctan2
            | ElemOp::LogAddExp
            | ElemOp::Erf
            | ElemOp::Erfc
            | ElemOp::Erfcx
            | ElemOp::Erfinv
            | ElemOp::Log1mexp
            | ElemOp::Gammaln
            | ElemOp::Digamma => TypeRule::Float,
            ElemOp::IsNan | ElemOp::IsInf | ElemOp::IsFinite => TypeRule::FloatTest,
            ElemOp::Lt | ElemOp::Le | ElemOp::Gt | ElemOp::Ge | ElemOp::Eq | ElemOp::Ne => {
                TypeRule::Compare
            }
            ElemOp::Not | ElemOp::And | ElemOp::Or | ElemOp::Xor => TypeRule::Logical,
            ElemOp::Where => TypeRule::Select,
        }
    }

    /// A transcendental function (a libm-class computation per element, unlike the float
    /// rule's division, square root and roundings): worth a pass over a whole sequence
    /// even on scalar rows (push_out_seq).
    pub fn is_transcendental(self) -> bool {
        self.rule() == TypeRule::Float
            && !matches!(
                self,
                ElemOp::Div
                    | ElemOp::Sqrt
                    | ElemOp::Reciprocal
                    | ElemOp::Floor
                    | ElemOp::Ceil
                    | ElemOp::Round
                    | ElemOp::Trunc
            )
    }

    /// The dtype the operands are cast to before the operation, given the promoted dtype
    /// of the (non-condition) operands. `None` when the operands are not allowed.
    pub fn operand_dtype(self, promoted: DType) -> Option<DType> {
        match self.rule() {
            TypeRule::Arith | TypeRule::Compare | TypeRule::Select => {
                if promoted.is_number() || matches!(self, ElemOp::Eq | ElemOp::Ne | ElemOp::Where) {
                    Some(promoted)
                } else {
                    None
                }
            }
            TypeRule::Float | TypeRule::FloatTest => Some(promoted.to_float()),
            TypeRule::Logical => (promoted == DType::Bool).then_some(DType::Bool),
        }
    }

    /// The dtype of the result, given the operand dtype.
    pub fn result_dtype(self, operand: DType) -> DType {
        match self.rule() {
            TypeRule::Compare | TypeRule::Logical | TypeRule::FloatTest => DType::Bool,
            _ => operand,
        }
    }
}

/// A formula of a gradient rule (reverse mode, `grad/`): what an operand's adjoint gets
/// from one elementwise operation, written with the result's adjoint `G`, the result `Y`,
/// the operands `X(k)` and constants, combined by elementwise operations. Every float term
/// has the operation's float dtype; a comparison in it gives bools (for `Where`).
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    G,
    Y,
    X(usize),
    C(f64),
    Op(ElemOp, Vec<Term>),
}

/// How the gradient reaches one operand of an elementwise operation ([`ElemOp::partials`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Partial {
    /// The operand's adjoint gets this term (of the result's shape; `grad/` sums it back to
    /// the operand's own shape where the operand was broadcast).
    Flows(Term),
    /// Nothing: the operand is a condition, or the operation is piecewise constant in it
    /// (floor, sign, comparisons), so its gradient is zero, as PyTensor's.
    Stops,
    /// Differentiable, but the derivative has no formula in the runtime (named): a compile
    /// error naming it, never a silent zero.
    Missing(&'static str),
}

fn t1(op: ElemOp, a: Term) -> Term {
    Term::Op(op, vec![a])
}

fn t2(op: ElemOp, a: Term, b: Term) -> Term {
    Term::Op(op, vec![a, b])
}

fn mul(a: Term, b: Term) -> Term {
    t2(ElemOp::Mul, a, b)
}

fn div(a: Term, b: Term) -> Term {
    t2(ElemOp::Div, a, b)
}

fn neg(a: Term) -> Term {
    t1(ElemOp::Neg, a)
}

fn sq(a: Term) -> Term {
    mul(a.clone(), a)
}

/// `where(cond, G, 0)` (`keep`) or `where(cond, 0, G)`: the adjoint routed by a condition.
fn routed(cond: Term, keep: bool) -> Term {
    let (a, b) = if keep {
        (Term::G, Term::C(0.0))
    } else {
        (Term::C(0.0), Term::G)
    };
    Term::Op(ElemOp::Where, vec![cond, a, b])
}

impl ElemOp {
    /// The gradient rule, next to the forward rule: for each operand, what its adjoint gets
    /// from this operation (reverse mode, `grad/rules.rs`), for a float result. Choices at
    /// ties and kinks are PyTensor's (docs/SEMANTICS.md, "Gradients"): `abs` gives 0 at 0
    /// (`G * sign(x)`), `maximum`/`minimum` give the whole adjoint to the first operand at
    /// a tie (`relu(x)`, `maximum(x, 0)`, gives 1 at 0), `clip` PyTensor's masks, `pow`
    /// nothing to the exponent where the base is 0; sign and the roundings stop it.
    pub fn partials(self) -> Vec<Partial> {
        use ElemOp as E;
        use Partial::{Flows, Missing, Stops};
        use Term::{C, G, X, Y};
        let x = || X(0);
        let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
        match self {
            E::Add => vec![Flows(G), Flows(G)],
            E::Sub => vec![Flows(G), Flows(neg(G))],
            E::Mul => vec![Flows(mul(G, X(1))), Flows(mul(G, X(0)))],
            E::Div => vec![Flows(div(G, X(1))), Flows(neg(div(mul(G, X(0)), sq(X(1)))))],
            // numpy's `%` of floats: x - floor(x / y) y.
            E::Rem => vec![Flows(G), Flows(neg(mul(t2(E::FloorDiv, X(0), X(1)), G)))],
            E::FloorDiv => vec![Stops, Stops],
            E::Neg => vec![Flows(neg(G))],
            E::Abs => vec![Flows(mul(G, t1(E::Sign, x())))],
            E::Exp => vec![Flows(mul(G, Y))],
            E::Log => vec![Flows(div(G, x()))],
            E::Tanh => vec![Flows(mul(G, t2(E::Sub, C(1.0), sq(Y))))],
            E::Sigmoid => vec![Flows(mul(G, mul(Y, t2(E::Sub, C(1.0), Y))))],
            E::Sqrt => vec![Flows(div(mul(G, C(0.5)), Y))],
            E::Pow => vec![
                Flows(mul(
                    mul(G, X(1)),
                    t2(E::Pow, X(0), t2(E::Sub, X(1), C(1.0))),
                )),
                Flows(Term::Op(
                    E::Where,
                    vec![
                        t2(E::Eq, X(0), C(0.0)),
                        C(0.0),
                        mul(mul(G, t1(E::Log, X(0))), Y),
                    ],
                )),
            ],
            E::Powi(0) => vec![Stops],
            E::Powi(k) => vec![Flows(mul(mul(G, C(f64::from(k))), t1(E::Powi(k - 1), x())))],
            E::Maximum | E::Minimum => {
                let first = t2(E::Eq, Y, X(0));
                vec![
                    Flows(routed(first.clone(), true)),
                    Flows(routed(first, false)),
                ]
            }
            E::Where => vec![Stops, Flows(routed(X(0), true)), Flows(routed(X(0), false))],
            E::Sin => vec![Flows(mul(G, t1(E::Cos, x())))],
            E::Cos => vec![Flows(neg(mul(G, t1(E::Sin, x()))))],
            E::Tan => vec![Flows(mul(G, t2(E::Add, C(1.0), sq(Y))))],
            E::Arcsin => vec![Flows(div(G, t1(E::Sqrt, t2(E::Sub, C(1.0), sq(x())))))],
            E::Arccos => vec![Flows(neg(div(G, t1(E::Sqrt, t2(E::Sub, C(1.0), sq(x()))))))],
            E::Arctan => vec![Flows(div(G, t2(E::Add, C(1.0), sq(x()))))],
            E::Sinh => vec![Flows(mul(G, t1(E::Cosh, x())))],
            E::Cosh => vec![Flows(mul(G, t1(E::Sinh, x())))],
            E::Arcsinh => vec![Flows(div(G, t1(E::Sqrt, t2(E::Add, sq(x()), C(1.0)))))],
            E::Arccosh => vec![Flows(div(G, t1(E::Sqrt, t2(E::Sub, sq(x()), C(1.0)))))],
            E::Arctanh => vec![Flows(div(G, t2(E::Sub, C(1.0), sq(x()))))],
            E::Log1p => vec![Flows(div(G, t2(E::Add, C(1.0), x())))],
            E::Expm1 => vec![Flows(mul(G, t1(E::Exp, x())))],
            E::Log2 => vec![Flows(div(G, mul(x(), C(std::f64::consts::LN_2))))],
            E::Log10 => vec![Flows(div(G, mul(x(), C(std::f64::consts::LN_10))))],
            E::Exp2 => vec![Flows(mul(G, mul(Y, C(std::f64::consts::LN_2))))],
            E::Square => vec![Flows(mul(G, mul(C(2.0), x())))],
            E::Reciprocal => vec![Flows(neg(div(G, sq(x()))))],
            E::Sign | E::Floor | E::Ceil | E::Round | E::Trunc => vec![Stops],
            E::Softplus => vec![Flows(mul(G, t1(E::Sigmoid, x())))],
            E::LogSigmoid => vec![Flows(mul(G, t1(E::Sigmoid, neg(x()))))],
            // maximum(x, 0): the tie at 0 goes to x, as `maximum`'s.
            E::Relu => vec![Flows(routed(t2(E::Eq, Y, X(0)), true))],
            // d atan2(a, b) = (b da - a db) / (a^2 + b^2).
            E::Arctan2 => {
                let r2 = || t2(E::Add, sq(X(0)), sq(X(1)));
                vec![
                    Flows(div(mul(G, X(1)), r2())),
                    Flows(neg(div(mul(G, X(0)), r2()))),
                ]
            }
            E::LogAddExp => vec![
                Flows(mul(G, t1(E::Exp, t2(E::Sub, X(0), Y)))),
                Flows(mul(G, t1(E::Exp, t2(E::Sub, X(1), Y)))),
            ],
            // PyTensor's Clip: x where lo <= x <= hi, lo where x < lo, hi where x > hi.
            E::Clip => vec![
                Flows(routed(
                    t2(E::And, t2(E::Ge, X(0), X(1)), t2(E::Le, X(0), X(2))),
                    true,
                )),
                Flows(routed(t2(E::Lt, X(0), X(1)), true)),
                Flows(routed(t2(E::Gt, X(0), X(2)), true)),
            ],
            E::Erf => vec![Flows(mul(
                mul(G, C(two_over_sqrt_pi)),
                t1(E::Exp, neg(sq(x()))),
            ))],
            E::Erfc => vec![Flows(neg(mul(
                mul(G, C(two_over_sqrt_pi)),
                t1(E::Exp, neg(sq(x()))),
            )))],
            // d erfcx = 2 x erfcx(x) - 2 / sqrt(pi).
            E::Erfcx => vec![Flows(mul(
                G,
                t2(E::Sub, mul(mul(C(2.0), x()), Y), C(two_over_sqrt_pi)),
            ))],
            // d erfinv = sqrt(pi) / 2 exp(erfinv(x)^2).
            E::Erfinv => vec![Flows(mul(
                mul(G, C(1.0 / two_over_sqrt_pi)),
                t1(E::Exp, sq(Y)),
            ))],
            // d log(1 - e^x) = -1 / (e^-x - 1).
            E::Log1mexp => vec![Flows(neg(div(G, t1(E::Expm1, neg(x())))))],
            E::Gammaln => vec![Flows(mul(G, t1(E::Digamma, x())))],
            E::Digamma => vec![Missing("trigamma")],
            // Bool results: no gradient flows through them.
            E::Not
            | E::And
            | E::Or
            | E::Xor
            | E::Lt
            | E::Le
            | E::Gt
            | E::Ge
            | E::Eq
            | E::Ne
            | E::IsNan
            | E::IsInf
            | E::IsFinite => vec![Stops; self.arity()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_each_function_is_callable_by_its_own_name() {
        for (i, (name, op)) in ElemOp::NAMED.iter().enumerate() {
            assert!(
                ElemOp::NAMED[..i].iter().all(|(n, _)| n != name),
                "{name} listed twice"
            );
            assert_eq!(ElemOp::by_name(name), Some(*op));
            // `where` is spelled `where_` (a Rust keyword).
            if *op != ElemOp::Where {
                assert_eq!(ElemOp::by_name(op.name()), Some(*op), "{name}");
            }
        }
    }

    #[test]
    fn every_operation_has_a_gradient_rule_per_operand() {
        let mut ops: Vec<ElemOp> = ElemOp::NAMED.iter().map(|(_, op)| *op).collect();
        ops.extend([
            ElemOp::Add,
            ElemOp::Sub,
            ElemOp::Mul,
            ElemOp::Div,
            ElemOp::Rem,
            ElemOp::Neg,
            ElemOp::Not,
            ElemOp::And,
            ElemOp::Or,
            ElemOp::Xor,
            ElemOp::Lt,
            ElemOp::Eq,
            ElemOp::Powi(0),
            ElemOp::Powi(3),
        ]);
        for op in ops {
            let partials = op.partials();
            assert_eq!(partials.len(), op.arity(), "{}", op.name());
            // A formula reads only the operation's own operands.
            fn operands(t: &Term, arity: usize) -> bool {
                match t {
                    Term::X(k) => *k < arity,
                    Term::Op(op, args) => {
                        args.len() == op.arity() && args.iter().all(|a| operands(a, arity))
                    }
                    Term::G | Term::Y | Term::C(_) => true,
                }
            }
            for p in &partials {
                if let Partial::Flows(t) = p {
                    assert!(operands(t, op.arity()), "{}: {t:?}", op.name());
                }
            }
        }
        assert_eq!(
            ElemOp::Digamma.partials(),
            vec![Partial::Missing("trigamma")]
        );
        assert_eq!(ElemOp::Floor.partials(), vec![Partial::Stops]);
    }

    #[test]
    fn numpy_dtype_rules_of_the_functions() {
        use DType::*;
        let operand_and_result = |op: ElemOp, promoted: DType| {
            op.operand_dtype(promoted).map(|d| (d, op.result_dtype(d)))
        };
        // Transcendental functions, reciprocal and rounding compute integers in f64.
        for op in [
            ElemOp::Sin,
            ElemOp::Arctanh,
            ElemOp::Log1p,
            ElemOp::Exp2,
            ElemOp::Reciprocal,
        ]
        .into_iter()
        .chain([
            ElemOp::Floor,
            ElemOp::Round,
            ElemOp::Softplus,
            ElemOp::LogAddExp,
        ])
        .chain([
            ElemOp::Erf,
            ElemOp::Erfc,
            ElemOp::Erfcx,
            ElemOp::Erfinv,
            ElemOp::Log1mexp,
            ElemOp::Gammaln,
            ElemOp::Digamma,
        ]) {
            assert_eq!(
                operand_and_result(op, I32),
                Some((F64, F64)),
                "{}",
                op.name()
            );
            assert_eq!(
                operand_and_result(op, F32),
                Some((F32, F32)),
                "{}",
                op.name()
            );
        }
        // square, sign, relu and clip keep integers and reject bools.
        for op in [ElemOp::Square, ElemOp::Sign, ElemOp::Relu, ElemOp::Clip] {
            assert_eq!(
                operand_and_result(op, I32),
                Some((I32, I32)),
                "{}",
                op.name()
            );
            assert_eq!(
                operand_and_result(op, F32),
                Some((F32, F32)),
                "{}",
                op.name()
            );
            assert_eq!(operand_and_result(op, Bool), None, "{}", op.name());
        }
        // isnan and kin test in the float dtype and give bools.
        for op in [ElemOp::IsNan, ElemOp::IsInf, ElemOp::IsFinite] {
            assert_eq!(operand_and_result(op, I64), Some((F64, Bool)));
            assert_eq!(operand_and_result(op, F32), Some((F32, Bool)));
        }
        assert_eq!(ElemOp::Clip.arity(), 3);
        assert_eq!(ElemOp::Arctan2.arity(), 2);
        assert_eq!(ElemOp::by_name("atan2"), Some(ElemOp::Arctan2));
        assert_eq!(ElemOp::by_name("signum"), None);
        assert_eq!(ElemOp::by_name("psi"), Some(ElemOp::Digamma));
        assert!(ElemOp::Erfcx.is_transcendental() && ElemOp::Digamma.is_transcendental());
    }
}
