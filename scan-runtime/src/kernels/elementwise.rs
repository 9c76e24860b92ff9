//! Elementwise maps with numpy broadcasting, writing into a reused output buffer.
//!
//! The output's rank `D` is the largest input rank; lower-rank inputs (scalars as 0-d
//! views from `ndarray::aview0`) broadcast. The shape check runs before `Zip`, whose
//! `and_broadcast` would otherwise panic.

use ndarray::{Array, ArrayView, Dimension, Zip};

use crate::element::Element;
use crate::error::Result;
use crate::kernels::buffer::{broadcast_shape, ensure_shape};

/// `out = f(a)` elementwise.
pub fn map1<A, U, D, Da>(
    out: &mut Array<U, D>,
    a: ArrayView<'_, A, Da>,
    what: &str,
    f: impl Fn(A) -> U,
) -> Result<()>
where
    A: Copy,
    U: Element,
    D: Dimension,
    Da: Dimension,
{
    let shape: D = broadcast_shape(what, &[a.shape()])?;
    ensure_shape(out, shape);
    Zip::from(out).and_broadcast(a).for_each(|o, &x| *o = f(x));
    Ok(())
}

/// `out = f(a, b)` elementwise with broadcasting.
pub fn map2<A, B, U, D, Da, Db>(
    out: &mut Array<U, D>,
    a: ArrayView<'_, A, Da>,
    b: ArrayView<'_, B, Db>,
    what: &str,
    f: impl Fn(A, B) -> U,
) -> Result<()>
where
    A: Copy,
    B: Copy,
    U: Element,
    D: Dimension,
    Da: Dimension,
    Db: Dimension,
{
    let shape: D = broadcast_shape(what, &[a.shape(), b.shape()])?;
    ensure_shape(out, shape);
    Zip::from(out)
        .and_broadcast(a)
        .and_broadcast(b)
        .for_each(|o, &x, &y| *o = f(x, y));
    Ok(())
}

/// `out = f(a, b, c)` elementwise with broadcasting (`where(c, a, b)` and friends).
pub fn map3<A, B, C, U, D, Da, Db, Dc>(
    out: &mut Array<U, D>,
    a: ArrayView<'_, A, Da>,
    b: ArrayView<'_, B, Db>,
    c: ArrayView<'_, C, Dc>,
    what: &str,
    f: impl Fn(A, B, C) -> U,
) -> Result<()>
where
    A: Copy,
    B: Copy,
    C: Copy,
    U: Element,
    D: Dimension,
    Da: Dimension,
    Db: Dimension,
    Dc: Dimension,
{
    let shape: D = broadcast_shape(what, &[a.shape(), b.shape(), c.shape()])?;
    ensure_shape(out, shape);
    Zip::from(out)
        .and_broadcast(a)
        .and_broadcast(b)
        .and_broadcast(c)
        .for_each(|o, &x, &y, &z| *o = f(x, y, z));
    Ok(())
}

/// `out = f(a, b, c, d)` elementwise with broadcasting (a fused chain of four arrays).
#[allow(clippy::too_many_arguments)]
pub fn map4<A, B, C, E, U, D, Da, Db, Dc, De>(
    out: &mut Array<U, D>,
    a: ArrayView<'_, A, Da>,
    b: ArrayView<'_, B, Db>,
    c: ArrayView<'_, C, Dc>,
    d: ArrayView<'_, E, De>,
    what: &str,
    f: impl Fn(A, B, C, E) -> U,
) -> Result<()>
where
    A: Copy,
    B: Copy,
    C: Copy,
    E: Copy,
    U: Element,
    D: Dimension,
    Da: Dimension,
    Db: Dimension,
    Dc: Dimension,
    De: Dimension,
{
    let shape: D = broadcast_shape(what, &[a.shape(), b.shape(), c.shape(), d.shape()])?;
    ensure_shape(out, shape);
    Zip::from(out)
        .and_broadcast(a)
        .and_broadcast(b)
        .and_broadcast(c)
        .and_broadcast(d)
        .for_each(|o, &x, &y, &z, &w| *o = f(x, y, z, w));
    Ok(())
}

/// `out = f(a, b, c, d, e)` elementwise with broadcasting (a fused chain of five arrays,
/// the most `Zip` takes beside the output).
#[allow(clippy::too_many_arguments)]
pub fn map5<A, B, C, E, F, U, D, Da, Db, Dc, De, Df>(
    out: &mut Array<U, D>,
    a: ArrayView<'_, A, Da>,
    b: ArrayView<'_, B, Db>,
    c: ArrayView<'_, C, Dc>,
    d: ArrayView<'_, E, De>,
    e: ArrayView<'_, F, Df>,
    what: &str,
    f: impl Fn(A, B, C, E, F) -> U,
) -> Result<()>
where
    A: Copy,
    B: Copy,
    C: Copy,
    E: Copy,
    F: Copy,
    U: Element,
    D: Dimension,
    Da: Dimension,
    Db: Dimension,
    Dc: Dimension,
    De: Dimension,
    Df: Dimension,
{
    let shape: D = broadcast_shape(
        what,
        &[a.shape(), b.shape(), c.shape(), d.shape(), e.shape()],
    )?;
    ensure_shape(out, shape);
    Zip::from(out)
        .and_broadcast(a)
        .and_broadcast(b)
        .and_broadcast(c)
        .and_broadcast(d)
        .and_broadcast(e)
        .for_each(|o, &x, &y, &z, &w, &v| *o = f(x, y, z, w, v));
    Ok(())
}

#[cfg(test)]
mod wide_tests {
    use super::*;
    use ndarray::{array, Array2};

    #[test]
    fn map4_and_map5_broadcast_every_operand() {
        let a = array![[1.0, 2.0], [3.0, 4.0]];
        let row = array![10.0, 20.0];
        let col = array![[100.0], [200.0]];
        let mut out = Array2::<f64>::zeros((0, 0));
        map4(
            &mut out,
            a.view(),
            row.view(),
            col.view(),
            a.view(),
            "x",
            |p, q, r, s| p + q + r + s,
        )
        .unwrap();
        assert_eq!(out, array![[112.0, 124.0], [216.0, 228.0]]);
        map5(
            &mut out,
            a.view(),
            row.view(),
            col.view(),
            a.view(),
            row.view(),
            "x",
            |p, q, r, s, t| p * q + r - s * t,
        )
        .unwrap();
        assert_eq!(out, array![[100.0, 100.0], [200.0, 200.0]]);
        let bad = array![1.0, 2.0, 3.0];
        let e = map4(
            &mut out,
            a.view(),
            bad.view(),
            col.view(),
            a.view(),
            "f * c + i * g",
            |p, q, r, s| p + q + r + s,
        )
        .unwrap_err();
        assert!(e.to_string().contains("f * c + i * g"), "{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::math;
    use ndarray::{array, aview0, aview1, s, Array0, Array1, Array2, Array3, ArrayD, IxDyn};

    #[test]
    fn map1_same_shape_and_cast() {
        let a = array![[1.0f64, -2.0], [3.0, -4.0]];
        let mut out = Array2::<f64>::zeros((0, 0));
        map1(&mut out, a.view(), "abs(a)", math::abs).unwrap();
        assert_eq!(out, array![[1.0, 2.0], [3.0, 4.0]]);
        let mut flags = Array2::<bool>::default((0, 0));
        map1(&mut flags, a.view(), "a > 0", |x| x > 0.0).unwrap();
        assert_eq!(flags, array![[true, false], [true, false]]);
    }

    #[test]
    fn map1_scalar_view() {
        let x = 2.0f32;
        let mut out = Array0::<f32>::zeros(());
        map1(&mut out, aview0(&x), "exp(x)", math::exp).unwrap();
        assert_eq!(out[()], 2.0f32.exp());
    }

    #[test]
    fn map2_broadcasts_row_and_scalar() {
        let a = array![[1, 2, 3], [4, 5, 6]];
        let b = array![10, 20, 30];
        let mut out = Array2::<i32>::zeros((0, 0));
        map2(&mut out, a.view(), b.view(), "a + b", math::add).unwrap();
        assert_eq!(out, array![[11, 22, 33], [14, 25, 36]]);
        let two = 2;
        map2(&mut out, a.view(), aview0(&two), "a * 2", math::mul).unwrap();
        assert_eq!(out, array![[2, 4, 6], [8, 10, 12]]);
        // Scalar on the left, column against row.
        let col = array![[1.0], [2.0]];
        let row = array![10.0, 20.0, 30.0];
        let mut o = Array2::<f64>::zeros((0, 0));
        map2(&mut o, col.view(), row.view(), "col - row", math::sub).unwrap();
        assert_eq!(o, array![[-9.0, -19.0, -29.0], [-8.0, -18.0, -28.0]]);
    }

    #[test]
    fn map2_strided_and_reversed_inputs() {
        let a = Array1::from_iter(0..10i64);
        let b = Array1::from_iter(100..105i64);
        let mut out = Array1::<i64>::zeros(0);
        map2(
            &mut out,
            a.slice(s![..;2]),
            b.slice(s![..;-1]),
            "a + b",
            math::add,
        )
        .unwrap();
        assert_eq!(out, array![104, 105, 106, 107, 108]);
    }

    #[test]
    fn map2_mixed_dtypes() {
        let a = array![1i32, 2, 3];
        let b = array![0.5f64, 0.25, 2.0];
        let mut out = Array1::<f64>::zeros(0);
        map2(&mut out, a.view(), b.view(), "a * b", |x: i32, y: f64| {
            f64::from(x) * y
        })
        .unwrap();
        assert_eq!(out, array![0.5, 0.5, 6.0]);
    }

    #[test]
    fn map2_reuses_buffer() {
        let a = array![1.0f64, 2.0];
        let mut out = Array1::<f64>::zeros(2);
        let ptr = out.as_ptr();
        map2(&mut out, a.view(), a.view(), "a + a", math::add).unwrap();
        assert_eq!(out.as_ptr(), ptr);
        assert_eq!(out, array![2.0, 4.0]);
    }

    #[test]
    fn map2_error_names_expression_and_shapes() {
        let a = Array2::<f64>::zeros((2, 3));
        let b = Array1::<f64>::zeros(4);
        let mut out = Array2::<f64>::zeros((0, 0));
        let e = map2(&mut out, a.view(), b.view(), "a + b", math::add).unwrap_err();
        assert_eq!(
            e,
            Error::Broadcast {
                what: "a + b".into(),
                shapes: vec![vec![2, 3], vec![4]],
            }
        );
        // Nothing was resized on error.
        assert_eq!(out.shape(), &[0, 0]);
    }

    #[test]
    fn map3_select() {
        let c = array![true, false, true];
        let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let zero = 0.0f32;
        let mut out = Array2::<f32>::zeros((0, 0));
        map3(
            &mut out,
            c.view(),
            a.view(),
            aview0(&zero),
            "where",
            math::select,
        )
        .unwrap();
        assert_eq!(out, array![[1.0, 0.0, 3.0], [4.0, 0.0, 6.0]]);
        let bad = aview1(&[1.0f32, 2.0]);
        let e = map3(
            &mut out,
            c.view(),
            a.view(),
            bad,
            "where(c, a, b)",
            math::select,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot broadcast shapes [3], [2, 3] and [2] together in `where(c, a, b)`"
        );
    }

    #[test]
    fn map_zero_size_and_dyn() {
        let a = Array2::<f64>::zeros((0, 3));
        let b = array![1.0, 2.0, 3.0];
        let mut out = Array2::<f64>::zeros((5, 5));
        map2(&mut out, a.view(), b.view(), "a + b", math::add).unwrap();
        assert_eq!(out.shape(), &[0, 3]);
        let d = ArrayD::<i64>::from_elem(IxDyn(&[2, 1, 2]), 1);
        let e = Array3::<i64>::from_elem((1, 3, 1), 2);
        let mut od = ArrayD::<i64>::zeros(IxDyn(&[]));
        map2(&mut od, d.view(), e.view(), "d + e", math::add).unwrap();
        assert_eq!(od.shape(), &[2, 3, 2]);
        assert!(od.iter().all(|&x| x == 3));
    }
}
