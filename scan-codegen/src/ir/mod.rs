//! The typed scan-graph IR. See docs/ARCHITECTURE.md for the picture.

pub mod elemwise;
pub mod graph;
pub mod linalg;
pub mod print;
pub mod scan;
pub mod types;

pub use elemwise::{ElemOp, Partial, Term, TypeRule};
pub use graph::{Graph, Literal, LoopCheck, Node, NodeId, Op, PathStep, RandomOp, ReduceOp};
pub use linalg::{Assume, LinalgOp, QrMode};
pub use scan::{Checkpoints, NonSequence, Output, OutputKind, ScanOp, Sequence};
pub use types::{DType, Type};

use proc_macro2::Span;

/// How a function parameter arrives from Rust.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// `ArrayViewN<T>` (rank >= 1).
    View,
    /// A scalar of the dtype itself (`f64`, `i32`, `bool`, ...).
    Scalar,
    /// `usize`: an i64 scalar in the graph (counts such as n_steps).
    Usize,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub kind: ParamKind,
    pub span: Span,
}

/// One function of a `scan!` block: its signature and its outer graph.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    /// The declared result types; `graph.outputs` holds the matching values.
    pub results: Vec<Type>,
    /// Whether the declared result is a tuple (even of one element).
    pub tuple_result: bool,
    pub graph: Graph,
}
