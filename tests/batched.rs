//! numpy's `matmul` of ranks 1 to 3 (a batch axis, broadcast when one side has 1), `dot`
//! with a stack of matrices, and `tensordot` contracting one axis of each array. The
//! expected numbers were printed by numpy 2.4 (`tools/issue7_numpy.py`); every program also
//! runs through the reference evaluator (`common::second_opinion`).

mod common;

use common::{second_opinion, Value};
use scan_runtime::ndarray::Dimension;
use scan_runtime::prelude::*;

mod products {
    scan_tests::program! {
        /// `s` [2, 2, 3], `t` [2, 3, 2], `m` [3, 2], `p` [4, 3], `v` [3], `u` [1, 3, 2].
        pub fn matmuls(s: ArrayView3<f64>, t: ArrayView3<f64>, m: ArrayView2<f64>, p: ArrayView2<f64>, v: ArrayView1<f64>, u: ArrayView3<f64>)
            -> Result<(Array3<f64>, Array3<f64>, Array3<f64>, Array2<f64>, Array2<f64>, Array3<f64>, Array3<f64>)> {
            Ok((
                matmul(s, t),
                s.matmul(m),
                matmul(p, t),
                matmul(v, t),
                matmul(s, v),
                matmul(s, u),
                matmul(s[0..1], t),
            ))
        }

        /// numpy's `dot` with a stack: `dot(s, m)` over s's last axis, `dot(p, t)` [4, 2, 2]
        /// (p's last axis with t's second to last), `dot(v, t)`; `tensordot` with one axis.
        pub fn contractions(s: ArrayView3<f64>, t: ArrayView3<f64>, m: ArrayView2<f64>, p: ArrayView2<f64>, v: ArrayView1<f64>, q: ArrayView2<f64>)
            -> Result<(Array3<f64>, Array3<f64>, Array2<f64>, Array3<f64>, Array2<f64>, Array2<f64>, Array3<f64>)> {
            Ok((
                dot(s, m),
                dot(p, t),
                dot(v, t),
                tensordot(s, m, 1),
                tensordot(m, p, ([0], [1])),
                tensordot(s, v, (2, 0)),
                tensordot(s, q, ([1], [0])),
            ))
        }

        /// Integers, the right batch of 1 broadcast.
        pub fn ints(a: ArrayView3<i64>, b: ArrayView3<i64>) -> Result<Array3<i64>> {
            Ok(matmul(a, b))
        }

        /// A recurrence of stacks of matrices: `h_t = h_{t-1} @ w`, product by product.
        pub fn powers(h0: ArrayView3<f64>, w: ArrayView3<f64>, n: usize) -> Result<Array4<f64>> {
            let hs = scan(|h| matmul(h, w), outputs_info = h0, n_steps = n);
            Ok(hs)
        }
    }
}

fn s() -> Array3<f64> {
    Array3::from_shape_fn((2, 2, 3), |(i, j, k)| (i * 6 + j * 3 + k) as f64 - 5.0)
}

fn t() -> Array3<f64> {
    Array3::from_shape_fn((2, 3, 2), |(i, j, k)| {
        (i * 6 + j * 2 + k) as f64 * 0.5 - 2.0
    })
}

fn m() -> Array2<f64> {
    array![[1.0, -2.0], [0.5, 3.0], [-1.0, 4.0]]
}

fn p() -> Array2<f64> {
    Array2::from_shape_fn((4, 3), |(i, j)| ((i * 3 + j) % 5) as f64 - 2.0)
}

fn v() -> Array1<f64> {
    array![2.0, -1.0, 0.5]
}

fn u() -> Array3<f64> {
    array![[[1.0, 0.0], [2.0, -1.0], [0.0, 3.0]]]
}

fn q() -> Array2<f64> {
    array![[1.0, -2.0], [0.5, 3.0]]
}

fn flat<D: Dimension>(a: &Array<f64, D>) -> Vec<f64> {
    a.iter().copied().collect()
}

#[test]
fn matmul_of_stacks_follows_numpy() {
    let got = products::matmuls(
        s().view(),
        t().view(),
        m().view(),
        p().view(),
        v().view(),
        u().view(),
    )
    .unwrap();
    assert_eq!(got.0.shape(), [2, 2, 2]);
    assert_eq!(flat(&got.0), [14.0, 8.0, 5.0, 3.5, 14.0, 17.0, 32.0, 39.5]);
    assert_eq!(
        flat(&got.1),
        [-4.0, -14.0, -2.5, 1.0, -1.0, 16.0, 0.5, 31.0]
    );
    assert_eq!(got.2.shape(), [2, 4, 2]);
    assert_eq!(
        flat(&got.2),
        [
            5.0, 3.5, -4.0, -3.5, 2.0, 2.0, -2.0, -2.5, -4.0, -5.5, -1.0, -0.5, 2.0, 2.0, -5.0,
            -5.5
        ]
    );
    assert_eq!(got.3.shape(), [2, 2]);
    assert_eq!(flat(&got.3), [-3.0, -2.25, 1.5, 2.25]);
    assert_eq!(flat(&got.4), [-7.5, -3.0, 1.5, 6.0]);
    assert_eq!(flat(&got.5), [-13.0, -5.0, -4.0, 1.0, 5.0, 7.0, 14.0, 13.0]);
    assert_eq!(got.6.shape(), [2, 2, 2]);
    assert_eq!(
        flat(&got.6),
        [14.0, 8.0, 5.0, 3.5, -22.0, -28.0, -4.0, -5.5]
    );
    let args = vec![
        Value::from(s()),
        Value::from(t()),
        Value::from(m()),
        Value::from(p()),
        Value::from(v()),
        Value::from(u()),
    ];
    second_opinion(
        products::SOURCE,
        "matmuls",
        args,
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
        ],
    );
}

#[test]
fn dot_and_tensordot_with_stacks_follow_numpy() {
    let got = products::contractions(
        s().view(),
        t().view(),
        m().view(),
        p().view(),
        v().view(),
        q().view(),
    )
    .unwrap();
    assert_eq!(
        flat(&got.0),
        [-4.0, -14.0, -2.5, 1.0, -1.0, 16.0, 0.5, 31.0]
    );
    assert_eq!(got.1.shape(), [4, 2, 2]);
    assert_eq!(
        flat(&got.1),
        [
            5.0, 3.5, -4.0, -5.5, -4.0, -3.5, -1.0, -0.5, 2.0, 2.0, 2.0, 2.0, -2.0, -2.5, -5.0,
            -5.5
        ]
    );
    assert_eq!(flat(&got.2), [-3.0, -2.25, 1.5, 2.25]);
    assert_eq!(flat(&got.3), flat(&got.0));
    assert_eq!(got.4.shape(), [2, 4]);
    assert_eq!(flat(&got.4), [-2.5, 4.0, -2.0, 2.0, 1.0, -4.0, 6.0, -14.0]);
    assert_eq!(flat(&got.5), [-7.5, -3.0, 1.5, 6.0]);
    assert_eq!(got.6.shape(), [2, 3, 2]);
    assert_eq!(
        flat(&got.6),
        [-6.0, 4.0, -4.5, 5.0, -3.0, 6.0, 3.0, 10.0, 4.5, 11.0, 6.0, 12.0]
    );
    let args = vec![
        Value::from(s()),
        Value::from(t()),
        Value::from(m()),
        Value::from(p()),
        Value::from(v()),
        Value::from(q()),
    ];
    second_opinion(
        products::SOURCE,
        "contractions",
        args,
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
            Value::from(got.5),
            Value::from(got.6),
        ],
    );
}

#[test]
fn integer_stacks_and_a_recurrence_of_stacks() {
    let a = Array3::from_shape_fn((2, 2, 3), |(i, j, k)| (i * 6 + j * 3 + k) as i64 - 6);
    let b = Array3::from_shape_fn((1, 3, 2), |(_, j, k)| (j * 2 + k) as i64 * 3 - 7);
    let got = products::ints(a.view(), b.view()).unwrap();
    assert_eq!(
        got.iter().copied().collect::<Vec<_>>(),
        [27, -18, 18, 0, 9, 18, 0, 36]
    );
    second_opinion(
        products::SOURCE,
        "ints",
        vec![Value::from(a), Value::from(b)],
        vec![Value::from(got)],
    );

    let h0 = array![[[1.0, 0.5], [0.0, -1.0]], [[2.0, 1.0], [1.0, 0.0]]];
    let w = array![[[0.5, -1.0], [1.0, 0.5]], [[0.0, 1.0], [-1.0, 0.5]]];
    let hs = products::powers(h0.view(), w.view(), 3).unwrap();
    assert_eq!(hs.shape(), [3, 2, 2, 2]);
    assert_eq!(
        flat(&hs),
        [
            1.0, -0.75, -1.0, -0.5, -1.0, 2.5, 0.0, 1.0, -0.25, -1.375, -1.0, 0.75, -2.5, 0.25,
            -1.0, 0.5, -1.5, -0.4375, 0.25, 1.375, -0.25, -2.375, -0.5, -0.75
        ]
    );
    second_opinion(
        products::SOURCE,
        "powers",
        vec![Value::from(h0), Value::from(w), Value::from(3i64)],
        vec![Value::from(hs)],
    );
}

#[test]
fn mismatched_inner_or_batch_sizes_are_errs_naming_both_shapes() {
    let args = |s: Array3<f64>, t: Array3<f64>| {
        vec![
            Value::from(s),
            Value::from(t),
            Value::from(m()),
            Value::from(p()),
            Value::from(v()),
            Value::from(u()),
        ]
    };
    // Inner sizes: s's rows have 3, these matrices 4 rows.
    let t4 = Array3::<f64>::zeros((2, 4, 2));
    let e = products::matmuls(
        s().view(),
        t4.view(),
        m().view(),
        p().view(),
        v().view(),
        u().view(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot compute the dot product `matmul(s, t)` of shapes [2, 2, 3] and [2, 4, 2]: inner sizes 3 and 4 differ"
    );
    let msg = common::evaluate_err(products::SOURCE, "matmuls", args(s(), t4));
    assert!(
        msg.contains("matmul(s, t)") && msg.contains("[2, 2, 3]") && msg.contains("[2, 4, 2]"),
        "{msg}"
    );
    // Batches of 2 and 3.
    let t3 = Array3::<f64>::zeros((3, 3, 2));
    let e = products::matmuls(
        s().view(),
        t3.view(),
        m().view(),
        p().view(),
        v().view(),
        u().view(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot compute the matrix product `matmul(s, t)` of shapes [2, 2, 3] and [3, 3, 2]: batch sizes 2 and 3 differ and neither is 1"
    );
    let msg = common::evaluate_err(products::SOURCE, "matmuls", args(s(), t3));
    assert!(
        msg.contains("matmul(s, t)") && msg.contains("batch sizes 2 and 3"),
        "{msg}"
    );
    // A vector by a stack: the vector's length against the stack's rows.
    let e = products::matmuls(
        s().view(),
        t().view(),
        m().view(),
        p().view(),
        array![1.0, 2.0].view(),
        u().view(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot compute the dot product `matmul(v, t)` of shapes [2] and [2, 3, 2]: inner sizes 2 and 3 differ"
    );
}
