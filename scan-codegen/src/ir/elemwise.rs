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
    Neg,
    Not,
    And,
    Or,
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
            ElemOp::Neg => "neg",
            ElemOp::Not => "not",
            ElemOp::And => "and",
            ElemOp::Or => "or",
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
            | ElemOp::Powi(_) => 1,
            ElemOp::Where => 3,
            _ => 2,
        }
    }

    pub fn rule(self) -> TypeRule {
        match self {
            ElemOp::Add
            | ElemOp::Sub
            | ElemOp::Mul
            | ElemOp::Rem
            | ElemOp::Neg
            | ElemOp::Abs
            | ElemOp::Powi(_)
            | ElemOp::Maximum
            | ElemOp::Minimum => TypeRule::Arith,
            ElemOp::Div
            | ElemOp::Exp
            | ElemOp::Log
            | ElemOp::Tanh
            | ElemOp::Sigmoid
            | ElemOp::Sqrt
            | ElemOp::Pow => TypeRule::Float,
            ElemOp::Lt | ElemOp::Le | ElemOp::Gt | ElemOp::Ge | ElemOp::Eq | ElemOp::Ne => {
                TypeRule::Compare
            }
            ElemOp::Not | ElemOp::And | ElemOp::Or => TypeRule::Logical,
            ElemOp::Where => TypeRule::Select,
        }
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
            TypeRule::Float => Some(promoted.to_float()),
            TypeRule::Logical => (promoted == DType::Bool).then_some(DType::Bool),
        }
    }

    /// The dtype of the result, given the operand dtype.
    pub fn result_dtype(self, operand: DType) -> DType {
        match self.rule() {
            TypeRule::Compare | TypeRule::Logical => DType::Bool,
            _ => operand,
        }
    }
}
