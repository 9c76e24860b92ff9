//! Stage 2: surface AST -> typed scan graph. Names are resolved through a stack of frames
//! (one per graph being built: the function body, then each enclosing step), types are
//! inferred node by node, and casts are made explicit, so later stages never guess.

mod call;
mod expr;
mod grad;
mod inline;
mod linalg;
mod random;
mod scan;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{Block, ExprKind, FnDef, Pattern, Program, StepFn, Stmt};
use crate::diag::Diagnostics;
use crate::ir::{self, Graph, NodeId, Op, Type};
use crate::messages as msg;

/// A value in a graph being built. `weak` marks untyped literals (and values computed only
/// from them), whose dtype adapts to the other operand as numpy's Python scalars do.
#[derive(Clone, Copy, Debug)]
pub struct Value {
    pub id: NodeId,
    pub weak: bool,
}

/// What an expression lowers to: one value, or a tuple (scan results, step returns).
pub enum Lowered {
    Single(Value),
    Tuple(Vec<Value>),
}

struct Frame {
    graph: Graph,
    names: HashMap<String, Value>,
    /// Names whose definition failed: uses are silently unresolved, so one mistake is
    /// reported once, not again at every use.
    poisoned: HashSet<String>,
    /// Implicit non-sequences: (node in the enclosing graph, name).
    captures: Vec<(NodeId, String)>,
    /// The explicit non-sequences of a step: node in the enclosing graph -> the step
    /// argument that receives it. A name read from outside that resolves to one of them
    /// reads that argument (PyTensor's strict scans list what the step reads by name).
    listed: HashMap<NodeId, Value>,
    strict: bool,
    /// Names are not looked up outside this frame's scope: the body of an inlined
    /// function (`inline.rs`) is being lowered in it.
    opaque: bool,
    /// Step functions bound by `let step = |..| ..;`, lowered where a scan uses them.
    closures: HashMap<String, Rc<StepFn>>,
}

impl Frame {
    fn new(strict: bool) -> Frame {
        Frame {
            graph: Graph::default(),
            names: HashMap::new(),
            poisoned: HashSet::new(),
            captures: Vec::new(),
            listed: HashMap::new(),
            strict,
            opaque: false,
            closures: HashMap::new(),
        }
    }
}

pub struct Lowerer<'d> {
    frames: Vec<Frame>,
    diag: &'d mut Diagnostics,
    /// The block's functions, which a call may inline (`inline.rs`).
    functions: &'d [FnDef],
    /// The functions being inlined, innermost last (a call of one of them is recursion).
    inlining: Vec<String>,
}

pub fn program(p: &Program, diag: &mut Diagnostics) -> Vec<ir::Function> {
    p.functions
        .iter()
        .filter_map(|f| {
            Lowerer {
                frames: Vec::new(),
                diag: &mut *diag,
                functions: &p.functions,
                inlining: vec![f.name.to_string()],
            }
            .function(f)
        })
        .collect()
}

impl Lowerer<'_> {
    fn graph(&mut self) -> &mut Graph {
        &mut self
            .frames
            .last_mut()
            .expect("a frame is always open while lowering")
            .graph
    }

    fn ty(&self, v: Value) -> Type {
        self.frames.last().expect("open frame").graph.ty(v.id)
    }

    /// The step function bound to `name` by `let name = |..| ..;` in this scope.
    fn closure(&self, name: &syn::Ident) -> Option<Rc<StepFn>> {
        let key = name.to_string();
        for frame in self.frames.iter().rev() {
            if frame.names.contains_key(&key) {
                return None;
            }
            if let Some(f) = frame.closures.get(&key) {
                return Some(f.clone());
            }
            if frame.opaque {
                break;
            }
        }
        None
    }

    fn bind(&mut self, name: &syn::Ident, v: Value) {
        let n = name.to_string();
        if n != "_" {
            let frame = self.frames.last_mut().expect("open frame");
            frame.closures.remove(&n);
            frame.names.insert(n, v);
        }
    }

    /// Resolves `name` in frame `level`, capturing it from enclosing frames as an implicit
    /// non-sequence of each step it crosses.
    fn lookup(&mut self, level: usize, name: &syn::Ident) -> Option<Value> {
        let key = name.to_string();
        if let Some(v) = self.frames[level].names.get(&key) {
            return Some(*v);
        }
        if self.frames[level].poisoned.contains(&key) {
            return None;
        }
        if level == 0 || self.frames[level].opaque {
            return None;
        }
        let outer = self.lookup(level - 1, name)?;
        if let Some(&listed) = self.frames[level].listed.get(&outer.id) {
            self.frames[level].names.insert(key, listed);
            return Some(listed);
        }
        let ty = self.frames[level - 1].graph.ty(outer.id);
        if self.frames[level].strict {
            self.diag.error(name.span(), msg::strict_capture(&key));
        }
        let frame = &mut self.frames[level];
        let id = frame.graph.add_input(&key, ty, name.span());
        frame.captures.push((outer.id, key.clone()));
        let v = Value {
            id,
            weak: outer.weak,
        };
        frame.names.insert(key, v);
        Some(v)
    }

    /// Whether `name` resolves to a failed binding in some enclosing frame.
    fn is_poisoned(&self, name: &syn::Ident) -> bool {
        let key = name.to_string();
        for frame in self.frames.iter().rev() {
            if frame.names.contains_key(&key) {
                return false;
            }
            if frame.poisoned.contains(&key) {
                return true;
            }
            if frame.opaque {
                return false;
            }
        }
        false
    }

    fn function(&mut self, f: &FnDef) -> Option<ir::Function> {
        self.frames.push(Frame::new(false));
        let mut params = Vec::new();
        for p in &f.params {
            let name = p.name.to_string();
            let id = self.graph().add_input(&name, p.ty.ty, p.name.span());
            self.bind(&p.name, Value { id, weak: false });
            params.push(ir::Param {
                name,
                ty: p.ty.ty,
                kind: p.ty.kind,
                span: p.name.span(),
            });
        }
        for name in &f.failed_params {
            self.poison_name(name);
        }
        self.statements(&f.body);
        let result = &f.body.result;
        let outputs = match &result.kind {
            // The result types did not parse (reported): the value is checked alone.
            ExprKind::Ok(inner) if !f.results_ok => self.expr(inner).and(None),
            ExprKind::Ok(inner) => self.function_results(f, inner),
            _ => {
                self.diag.error(result.span, msg::function_end());
                None
            }
        };
        let frame = self.frames.pop().expect("function frame");
        let mut graph = frame.graph;
        graph.outputs = outputs?;
        Some(ir::Function {
            name: f.name.to_string(),
            params,
            results: f.results.iter().map(|r| r.ty).collect(),
            tuple_result: f.tuple_result,
            graph,
        })
    }

    /// Matches the returned values against the declared result types.
    fn function_results(&mut self, f: &FnDef, e: &crate::ast::Expr) -> Option<Vec<NodeId>> {
        let values = match self.expr(e)? {
            Lowered::Single(v) if !f.tuple_result => vec![v],
            Lowered::Tuple(vs) if f.tuple_result => vs,
            Lowered::Single(_) => {
                self.diag
                    .error(e.span, msg::result_not_tuple(f.results.len()));
                return None;
            }
            Lowered::Tuple(vs) => {
                self.diag.error(e.span, msg::result_is_tuple(vs.len()));
                return None;
            }
        };
        if values.len() != f.results.len() {
            self.diag
                .error(e.span, msg::result_count(f.results.len(), values.len()));
            return None;
        }
        let mut out = Vec::new();
        for (v, declared) in values.into_iter().zip(&f.results) {
            let found = self.ty(v);
            let id = if v.weak && found.rank == declared.ty.rank {
                self.cast(v, declared.ty.dtype, e)
            } else {
                v.id
            };
            let found = self.graph().ty(id);
            if found != declared.ty {
                self.diag
                    .error(e.span, msg::result_type(declared.ty, found));
            }
            out.push(id);
        }
        Some(out)
    }

    fn statements(&mut self, block: &Block) {
        for stmt in &block.stmts {
            let (pattern, value) = match stmt {
                Stmt::Let { pattern, value } => (pattern, value),
                Stmt::Failed(pattern) => {
                    self.poison(pattern);
                    continue;
                }
            };
            if let (Pattern::Name(n), ExprKind::Closure(f)) = (pattern, &value.kind) {
                let frame = self.frames.last_mut().expect("open frame");
                frame.names.remove(&n.to_string());
                frame.closures.insert(n.to_string(), f.clone());
                continue;
            }
            match self.expr(value) {
                Some(lowered) => self.bind_pattern(pattern, lowered),
                None => self.poison(pattern),
            }
        }
    }

    /// Marks the names of a failed binding (see `Frame::poisoned`).
    pub(super) fn poison(&mut self, pattern: &Pattern) {
        match pattern {
            Pattern::Name(n) => self.poison_name(n),
            Pattern::Wild(_) => {}
            Pattern::Tuple(ps, _) => ps.iter().for_each(|p| self.poison(p)),
        }
    }

    pub(super) fn poison_name(&mut self, name: &syn::Ident) {
        let frame = self.frames.last_mut().expect("open frame");
        frame.names.remove(&name.to_string());
        frame.poisoned.insert(name.to_string());
    }

    /// Binds the names of `pattern`; on a mismatch (reported), poisons them, so that their
    /// uses are not reported again.
    fn bind_pattern(&mut self, pattern: &Pattern, value: Lowered) {
        match (pattern, value) {
            (Pattern::Wild(_), _) => {}
            (Pattern::Name(n), Lowered::Single(v)) => self.bind(n, v),
            (Pattern::Name(n), Lowered::Tuple(vs)) => {
                self.diag.error(n.span(), msg::tuple_to_name(vs.len()));
                self.poison_name(n);
            }
            (Pattern::Tuple(ps, s), Lowered::Tuple(vs)) => {
                if ps.len() != vs.len() {
                    self.diag.error(*s, msg::pattern_length(vs.len(), ps.len()));
                    self.poison(pattern);
                    return;
                }
                for (p, v) in ps.iter().zip(vs) {
                    self.bind_pattern(p, Lowered::Single(v));
                }
            }
            (Pattern::Tuple(_, s), Lowered::Single(_)) => {
                self.diag.error(*s, msg::not_a_tuple());
                self.poison(pattern);
            }
        }
    }

    /// The names visible from the current frame, for "did you mean" hints.
    fn visible_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for frame in self.frames.iter().rev() {
            out.extend(frame.names.keys().cloned());
            out.extend(frame.poisoned.iter().cloned());
            if frame.opaque {
                break;
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Adds a node to the current graph, typed, spanned and labelled from `e`.
    fn add(&mut self, op: Op, inputs: Vec<NodeId>, ty: Type, e: &crate::ast::Expr) -> NodeId {
        self.add_at(op, inputs, ty, e.span, &e.label)
    }

    /// Adds a node that stands for no single expression (a scan and its results).
    fn add_at(
        &mut self,
        op: Op,
        inputs: Vec<NodeId>,
        ty: Type,
        span: proc_macro2::Span,
        label: &str,
    ) -> NodeId {
        let label = label.to_string();
        self.graph().add(ir::Node {
            op,
            inputs,
            ty,
            span,
            label,
        })
    }
}
