//! Sums of products by loop-invariant matrices, `a_1 · b_1 + .. + a_n · b_n` (the
//! stack_dots rewrite): the `b_i` are stacked by rows once before the loop
//! ([`stack_rows`]), and each step runs one product `[a_1 .. a_n] · [b_1; ..; b_n]`, its
//! left operands copied side by side into a buffer of its own ([`StackedDot`]). An RNN
//! with output feedback (the scan tutorial's `x_{t-1} W + y_{t-1} W_fb`) makes one
//! vector-matrix product per step instead of two and an addition, for a copy of the left
//! operands (`n_x + n_y` elements), as a hand-written loop keeping them side by side does.
//!
//! numpy's broadcasting makes the sum legal for shapes whose stacked form is not (a product
//! of one column beside one of n, a one-row matrix beside m rows): each step compares the
//! shapes first (a few integers) and, when they do not fit, makes the products and adds
//! them as the unstacked program did, with its errors.

use ndarray::{s, Array, Array2, ArrayView1, ArrayView2, Dimension, Ix1, Ix2, Zip};

use crate::element::{Element, Number};
use crate::error::Result;
use crate::kernels::buffer::{broadcast_shape, try_ensure_shape, Destination};
use crate::kernels::dot::{dot_mm, dot_vm};
use crate::kernels::packed::PackedMatrix;

/// `out = concatenate(b, axis=0)` when the matrices have one column count, else an empty
/// `0 x 0` matrix: never an error, so that a program whose products broadcast still runs
/// ([`StackedDot`] sees that `out` does not fit and adds the products instead).
pub fn stack_rows<T: Element>(
    out: &mut Array2<T>,
    b: &[ArrayView2<'_, T>],
    what: &str,
) -> Result<()> {
    let n = b.first().map_or(0, |b| b.ncols());
    if b.iter().any(|b| b.ncols() != n) {
        return try_ensure_shape(what, out, Ix2(0, 0));
    }
    let k = b.iter().map(|b| b.nrows()).sum();
    try_ensure_shape(what, out, Ix2(k, n))?;
    let mut row = 0;
    for b in b {
        out.slice_mut(s![row..row + b.nrows(), ..]).assign(b);
        row += b.nrows();
    }
    Ok(())
}

/// The memory of one stacked product in a loop, declared before it: the stacked matrix
/// packed ([`PackedMatrix`], when it is large enough to pay), the left operands side by
/// side, and the separate products of the unstacked fallback. A step allocates nothing
/// after the first.
#[derive(Clone, Debug)]
pub struct StackedDot<T: 'static, D: Dimension> {
    packed: PackedMatrix<T>,
    left: Array2<T>,
    parts: Vec<Array<T, D>>,
}

impl<T: Element, D: Dimension> Default for StackedDot<T, D> {
    fn default() -> Self {
        StackedDot {
            packed: PackedMatrix::default(),
            left: Array2::default((0, 0)),
            parts: Vec::new(),
        }
    }
}

/// Whether `[a_1 .. a_n] · s` equals `Σ a_i · b_i` with nothing broadcast: every `b_i` has
/// `s`'s columns, their rows add up to `s`'s, and each `a_i` (given by its last length)
/// has its `b_i`'s rows.
fn fits<T>(
    s: &ArrayView2<'_, T>,
    b: &[ArrayView2<'_, T>],
    inner: impl ExactSizeIterator<Item = usize>,
) -> bool {
    let (k, n) = s.dim();
    inner.len() == b.len()
        && b.iter().all(|b| b.ncols() == n)
        && b.iter().map(|b| b.nrows()).sum::<usize>() == k
        && inner.zip(b).all(|(len, b)| len == b.nrows())
}

/// `out = Σ parts` with numpy's broadcasting, added left to right: the unstacked sum.
fn add_all<'o, T: Number, D: Dimension>(
    out: impl Destination<'o, T, D>,
    parts: &[Array<T, D>],
    what: &str,
) -> Result<()> {
    // Pairwise, so that nothing is allocated: ones first, which broadcast to anything.
    let mut shape: D = broadcast_shape(what, &[])?;
    for p in parts {
        shape = broadcast_shape(what, &[shape.slice(), p.shape()])?;
    }
    let mut out = out.prepare(shape.clone(), what)?;
    for (i, p) in parts.iter().enumerate() {
        // `broadcast_shape` accepted every part.
        let Some(p) = p.broadcast(shape.clone()) else {
            continue;
        };
        if i == 0 {
            out.assign(&p);
        } else {
            Zip::from(&mut out)
                .and(&p)
                .for_each(|o, &x| *o = o.num_add(x));
        }
    }
    Ok(())
}

macro_rules! stacked_impl {
    ($t:ty) => {
        impl<D: Dimension> StackedDot<$t, D> {
            /// Packs the stacked matrix `s` for the products of the loop (before it): as
            /// vectors' (`PackedMatrix::pack_vectors`) when the left operands are vectors.
            pub fn pack(&mut self, s: ArrayView2<'_, $t>) {
                if D::NDIM == Some(1) {
                    self.packed.pack_vectors(s);
                } else {
                    self.packed.pack(s);
                }
            }
        }

        impl StackedDot<$t, Ix1> {
            /// `out = a_1 · b_1 + .. + a_n · b_n` for vectors `a_i`, `s` the `b_i` stacked
            /// ([`stack_rows`]): one product when the shapes fit, else the products named
            /// by `products` added with broadcasting (the sum named by `what`).
            pub fn dot_v<'o>(
                &mut self,
                out: impl Destination<'o, $t, Ix1>,
                s: ArrayView2<'_, $t>,
                a: &[ArrayView1<'_, $t>],
                b: &[ArrayView2<'_, $t>],
                products: &[&str],
                what: &str,
            ) -> Result<()> {
                if fits(&s, b, a.iter().map(|a| a.len())) {
                    try_ensure_shape(what, &mut self.left, Ix2(1, s.nrows()))?;
                    let mut at = 0;
                    for a in a {
                        self.left.slice_mut(s![0, at..at + a.len()]).assign(a);
                        at += a.len();
                    }
                    return self.packed.dot_vm(out, self.left.row(0), s, what);
                }
                self.parts.resize_with(a.len(), Default::default);
                for (((p, a), b), product) in self.parts.iter_mut().zip(a).zip(b).zip(products) {
                    dot_vm(p, *a, *b, product)?;
                }
                add_all(out, &self.parts, what)
            }
        }

        impl StackedDot<$t, Ix2> {
            /// `out = a_1 · b_1 + .. + a_n · b_n` for matrices `a_i` (see
            /// [`Self::dot_v`]; stacked only when they have one row count).
            pub fn dot_m<'o>(
                &mut self,
                out: impl Destination<'o, $t, Ix2>,
                s: ArrayView2<'_, $t>,
                a: &[ArrayView2<'_, $t>],
                b: &[ArrayView2<'_, $t>],
                products: &[&str],
                what: &str,
            ) -> Result<()> {
                let m = a.first().map_or(0, |a| a.nrows());
                if a.iter().all(|a| a.nrows() == m) && fits(&s, b, a.iter().map(|a| a.ncols())) {
                    try_ensure_shape(what, &mut self.left, Ix2(m, s.nrows()))?;
                    let mut at = 0;
                    for a in a {
                        self.left.slice_mut(s![.., at..at + a.ncols()]).assign(a);
                        at += a.ncols();
                    }
                    return self.packed.dot_mm(out, self.left.view(), s, what);
                }
                self.parts.resize_with(a.len(), Default::default);
                for (((p, a), b), product) in self.parts.iter_mut().zip(a).zip(b).zip(products) {
                    dot_mm(p, *a, *b, product)?;
                }
                add_all(out, &self.parts, what)
            }
        }
    };
}

stacked_impl!(f32);
stacked_impl!(f64);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use ndarray::{array, Array1};

    #[test]
    fn stacks_rows_of_one_column_count_only() {
        let (w, v) = (array![[1.0, 2.0], [3.0, 4.0]], array![[5.0, 6.0]]);
        let mut out = Array2::<f64>::default((0, 0));
        stack_rows(&mut out, &[w.view(), v.view()], "s").unwrap();
        assert_eq!(out, array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]);
        let one = array![[7.0], [8.0]];
        stack_rows(&mut out, &[w.view(), one.view()], "s").unwrap();
        assert_eq!(out.dim(), (0, 0));
    }

    #[test]
    fn one_product_when_the_shapes_fit() {
        let (w, v) = (array![[1.0, 2.0], [3.0, 4.0]], array![[5.0, 6.0]]);
        let (x, y) = (array![1.0, -1.0], array![2.0]);
        let mut s = Array2::default((0, 0));
        stack_rows(&mut s, &[w.view(), v.view()], "s").unwrap();
        let mut st = StackedDot::<f64, Ix1>::default();
        let mut out = Array1::default(0);
        let (a, b) = ([x.view(), y.view()], [w.view(), v.view()]);
        st.dot_v(&mut out, s.view(), &a, &b, &["x.dot(w)", "y.dot(v)"], "sum")
            .unwrap();
        assert_eq!(out, x.dot(&w) + y.dot(&v));
        assert_eq!(st.left.dim(), (1, 3), "the left operands side by side");
    }

    #[test]
    fn products_that_broadcast_are_added_as_numpy_adds_them() {
        // dot(x, w) has 2 columns, dot(y, one) 1: numpy broadcasts the sum.
        let (w, one) = (array![[1.0, 2.0], [3.0, 4.0]], array![[10.0]]);
        let (x, y) = (array![1.0, -1.0], array![2.0]);
        let mut s = Array2::default((0, 0));
        stack_rows(&mut s, &[w.view(), one.view()], "s").unwrap();
        let mut st = StackedDot::<f64, Ix1>::default();
        let mut out = Array1::default(0);
        let (a, b) = ([x.view(), y.view()], [w.view(), one.view()]);
        st.dot_v(
            &mut out,
            s.view(),
            &a,
            &b,
            &["x.dot(w)", "y.dot(one)"],
            "sum",
        )
        .unwrap();
        assert_eq!(out, array![-2.0 + 20.0, -2.0 + 20.0]);

        // Matrices: one row beside two rows.
        let (p, q) = (array![[1.0, 0.0]], array![[1.0], [2.0]]);
        let v = array![[5.0, 6.0]];
        stack_rows(&mut s, &[w.view(), v.view()], "s").unwrap();
        let mut st = StackedDot::<f64, Ix2>::default();
        let mut out = Array2::default((0, 0));
        let (a, b) = ([p.view(), q.view()], [w.view(), v.view()]);
        st.dot_m(&mut out, s.view(), &a, &b, &["p.dot(w)", "q.dot(v)"], "sum")
            .unwrap();
        assert_eq!(out, p.dot(&w) + q.dot(&v));
        assert_eq!(out.dim(), (2, 2));
    }

    #[test]
    fn a_misfit_operand_is_the_products_error() {
        // x has 3 elements for w's 2 rows; y has 1 for v's 1: together 4, not s's 3 rows,
        // but a split of the right total would not be accepted either.
        let (w, v) = (array![[1.0, 2.0], [3.0, 4.0]], array![[5.0, 6.0]]);
        let (x, y) = (array![1.0, 2.0, 3.0], array![1.0]);
        let mut s = Array2::default((0, 0));
        stack_rows(&mut s, &[w.view(), v.view()], "s").unwrap();
        let mut st = StackedDot::<f64, Ix1>::default();
        let mut out = Array1::default(0);
        let e = st
            .dot_v(
                &mut out,
                s.view(),
                &[x.view(), y.view()],
                &[w.view(), v.view()],
                &["x.dot(w)", "y.dot(v)"],
                "sum",
            )
            .unwrap_err();
        assert!(
            matches!(e, Error::Dot { ref what, .. } if what == "x.dot(w)"),
            "{e}"
        );
        let (x, y) = (array![1.0], array![1.0, 2.0]);
        let e = st
            .dot_v(
                &mut out,
                s.view(),
                &[x.view(), y.view()],
                &[w.view(), v.view()],
                &["x.dot(w)", "y.dot(v)"],
                "sum",
            )
            .unwrap_err();
        assert!(
            matches!(e, Error::Dot { ref what, .. } if what == "x.dot(w)"),
            "{e}"
        );
    }
}
