//! Reading through a boolean mask (numpy's `x[mask]`, a length known only at run time) and
//! gathering with index arrays of rank 2 or more (`x[idx]`, `take(x, idx, axis)`: the
//! result has idx's axes in place of the indexed one). The expected numbers were printed by
//! numpy 2.4 (`tools/issue7_numpy.py`); every program also runs through the reference
//! evaluator (`common::second_opinion`).

mod common;

use common::{second_opinion, Value};
use scan_runtime::ndarray::Dimension;
use scan_runtime::prelude::*;

mod masks {
    scan_tests::program! {
        /// numpy's `x[rows]` (a mask of rows), `x[x < 0]` (of elements: a vector),
        /// `x[x > 100]` (empty), `v[v > 0]`.
        pub fn masked(x: ArrayView2<f64>, rows: ArrayView1<bool>, v: ArrayView1<f64>)
            -> Result<(Array2<f64>, Array1<f64>, Array1<f64>, Array1<f64>)> {
            Ok((x[rows], x[x < 0.0], x[x > 100.0], v[v > 0.0]))
        }

        /// In a step: each row's sum of its positive elements and their count.
        pub fn positive_sums(x: ArrayView2<f64>) -> Result<(Array1<f64>, Array1<i64>)> {
            let (s, n) = map(|row| (sum(row[row > 0.0]), row[row > 0.0].len()), sequences = x);
            Ok((s, n))
        }
    }
}

mod index_arrays {
    scan_tests::program! {
        /// numpy's `x[idx]` [3, 2, 3], `take(x, jdx, 1)` [4, 2, 2], `x[:, jdx]` (the
        /// same), `take(v, idx)` and `v[idx]` [3, 2].
        pub fn gathered(x: ArrayView2<f64>, v: ArrayView1<f64>, idx: ArrayView2<i64>, jdx: ArrayView2<i32>)
            -> Result<(Array3<f64>, Array3<f64>, Array3<f64>, Array2<f64>, Array2<f64>)> {
            Ok((x[idx], take(x, jdx, 1), x[(.., jdx)], take(v, idx), v[idx]))
        }

        /// An embedding lookup of a matrix of ids per step, summed.
        pub fn embed(ids: ArrayView3<i64>, emb: ArrayView2<f64>) -> Result<Array1<f64>> {
            Ok(map(|ids_t| sum(emb[ids_t]), sequences = ids))
        }
    }
}

fn x() -> Array2<f64> {
    array![
        [1.0, -2.0, 3.0],
        [-4.0, 5.0, -6.0],
        [7.0, 8.0, -9.0],
        [0.5, -0.5, 2.0]
    ]
}

fn v() -> Array1<f64> {
    array![3.0, -1.0, 4.0, -1.5, 5.0]
}

fn flat<D: Dimension>(a: &Array<f64, D>) -> Vec<f64> {
    a.iter().copied().collect()
}

#[test]
fn boolean_masks_read_as_numpy() {
    let rows = array![true, false, true, true];
    let got = masks::masked(x().view(), rows.view(), v().view()).unwrap();
    assert_eq!(got.0.shape(), [3, 3]);
    assert_eq!(
        flat(&got.0),
        [1.0, -2.0, 3.0, 7.0, 8.0, -9.0, 0.5, -0.5, 2.0]
    );
    assert_eq!(got.1.to_vec(), [-2.0, -4.0, -6.0, -9.0, -0.5]);
    assert_eq!(got.2.shape(), [0]);
    assert_eq!(got.3.to_vec(), [3.0, 4.0, 5.0]);
    second_opinion(
        masks::SOURCE,
        "masked",
        vec![Value::from(x()), Value::from(rows), Value::from(v())],
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
        ],
    );

    let (s, n) = masks::positive_sums(x().view()).unwrap();
    assert_eq!(s.to_vec(), [4.0, 5.0, 15.0, 2.5]);
    assert_eq!(n.to_vec(), [2, 1, 2, 2]);
    second_opinion(
        masks::SOURCE,
        "positive_sums",
        vec![Value::from(x())],
        vec![Value::from(s), Value::from(n)],
    );
}

#[test]
fn a_mask_of_another_shape_is_an_err_naming_both_shapes() {
    let rows = array![true, false, true];
    let e = masks::masked(x().view(), rows.view(), v().view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid `x[rows]`: a mask of shape [3] does not fit an array of shape [4, 3] (it covers the leading axes)"
    );
    let msg = common::evaluate_err(
        masks::SOURCE,
        "masked",
        vec![Value::from(x()), Value::from(rows), Value::from(v())],
    );
    assert!(
        msg.contains("x[rows]") && msg.contains("[3]") && msg.contains("[4, 3]"),
        "{msg}"
    );
}

#[test]
fn index_matrices_gather_as_numpy() {
    let idx = array![[0i64, -1], [2, 1], [3, 3]];
    let jdx = array![[0i32, -1], [2, 1]];
    let got = index_arrays::gathered(x().view(), v().view(), idx.view(), jdx.view()).unwrap();
    assert_eq!(got.0.shape(), [3, 2, 3]);
    assert_eq!(
        flat(&got.0),
        [
            1.0, -2.0, 3.0, 0.5, -0.5, 2.0, 7.0, 8.0, -9.0, -4.0, 5.0, -6.0, 0.5, -0.5, 2.0, 0.5,
            -0.5, 2.0
        ]
    );
    assert_eq!(got.1.shape(), [4, 2, 2]);
    assert_eq!(
        flat(&got.1),
        [1.0, 3.0, 3.0, -2.0, -4.0, -6.0, -6.0, 5.0, 7.0, -9.0, -9.0, 8.0, 0.5, 2.0, 2.0, -0.5]
    );
    assert_eq!(got.2, got.1);
    assert_eq!(got.3.shape(), [3, 2]);
    assert_eq!(flat(&got.3), [3.0, 5.0, 4.0, -1.0, -1.5, -1.5]);
    assert_eq!(got.4, got.3);
    let args = |idx: &Array2<i64>| {
        vec![
            Value::from(x()),
            Value::from(v()),
            Value::from(idx.clone()),
            Value::from(jdx.clone()),
        ]
    };
    second_opinion(
        index_arrays::SOURCE,
        "gathered",
        args(&idx),
        vec![
            Value::from(got.0),
            Value::from(got.1),
            Value::from(got.2),
            Value::from(got.3),
            Value::from(got.4),
        ],
    );

    // An index out of range: the expression, the index and the length.
    let bad = array![[0i64, 1], [4, 0], [1, 1]];
    let e = index_arrays::gathered(x().view(), v().view(), bad.view(), jdx.view()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "index 4 is out of bounds for `x[idx]` with length 4"
    );
    let msg = common::evaluate_err(index_arrays::SOURCE, "gathered", args(&bad));
    assert!(
        msg.contains("x[idx]") && msg.contains("index 4") && msg.contains("length 4"),
        "{msg}"
    );

    // A matrix of ids per step, its embeddings summed.
    let ids = Array3::from_shape_vec((2, 2, 2), vec![0i64, 1, 2, 2, -1, 0, 1, 1]).unwrap();
    let emb = array![[0.5, 1.0], [2.0, 4.0], [8.0, 16.0]];
    let out = index_arrays::embed(ids.view(), emb.view()).unwrap();
    assert_eq!(
        out.to_vec(),
        [1.5 + 6.0 + 24.0 + 24.0, 24.0 + 1.5 + 6.0 + 6.0]
    );
    second_opinion(
        index_arrays::SOURCE,
        "embed",
        vec![Value::from(ids), Value::from(emb)],
        vec![Value::from(out)],
    );
}
