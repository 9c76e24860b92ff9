//! Every loop of the scan tutorial (shared/tutorial/scan_tutorial.txt), compiled ahead of
//! time, checked against the numbers the tutorial prints or an independent hand-written
//! loop, and against the reference evaluator.

mod common;

use common::{assert_allclose, matrix, second_opinion, Value};
use scan_runtime::prelude::*;
use scan_tests::tutorial::{cumulative, polynomial, power, rnn, set_value, triangular, until};

#[test]
fn power_matches_the_tutorial() {
    let a = Array1::from_iter((0..10).map(|v| v as f64));
    let squares = power::power(a.view(), 2).unwrap();
    assert_eq!(
        squares.to_vec(),
        vec![0., 1., 4., 9., 16., 25., 36., 49., 64., 81.]
    );
    let fourth = power::power(a.view(), 4).unwrap();
    assert_eq!(
        fourth.to_vec(),
        vec![0., 1., 16., 81., 256., 625., 1296., 2401., 4096., 6561.]
    );
    for k in [2usize, 4] {
        let got = power::power(a.view(), k).unwrap();
        second_opinion(
            power::SOURCE,
            "power",
            vec![Value::from(a.clone()), Value::from(k as i64)],
            vec![Value::from(got)],
        );
    }
}

#[test]
fn polynomial_matches_the_tutorial() {
    let coefficients = array![1.0f32, 0.0, 2.0];
    let value = polynomial::polynomial(coefficients.view(), 3.0).unwrap();
    assert_eq!(value, 19.0);
    assert_eq!(
        value,
        1.0 * 3f64.powi(0) + 0.0 * 3f64.powi(1) + 2.0 * 3f64.powi(2)
    );
    second_opinion(
        polynomial::SOURCE,
        "polynomial",
        vec![Value::from(coefficients), Value::from(3.0f64)],
        vec![Value::from(value)],
    );
}

#[test]
fn triangular_numbers_match_the_tutorial() {
    let got = triangular::triangular_sequence(15).unwrap();
    assert_eq!(
        got.to_vec(),
        vec![0, 1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 66, 78, 91, 105]
    );
    let expected: Vec<i64> = (0..15).map(|n| n * (n + 1) / 2).collect();
    assert_eq!(got.to_vec(), expected);
    second_opinion(
        triangular::SOURCE,
        "triangular_sequence",
        vec![Value::from(15i64)],
        vec![Value::from(got)],
    );
}

#[test]
fn set_value_at_position_matches_the_tutorial() {
    let locations = array![[1i32, 1], [2, 3]];
    let values = array![42.0f32, 50.0];
    let model = Array2::<f32>::zeros((5, 5));
    let got = set_value::assign_values_at_positions(locations.view(), values.view(), model.view())
        .unwrap();
    let mut expected = Array3::<f32>::zeros((2, 5, 5));
    expected[[0, 1, 1]] = 42.0;
    expected[[1, 2, 3]] = 50.0;
    assert_eq!(got, expected);
    second_opinion(
        set_value::SOURCE,
        "assign_values_at_positions",
        vec![
            Value::from(locations),
            Value::from(values),
            Value::from(model),
        ],
        vec![Value::from(got)],
    );
}

#[test]
fn rnn_matches_a_hand_written_loop() {
    let (n_in, n_x, n_y) = (2, 3, 2);
    // u of 9 rows: with taps [-4, 0] scanning starts at u[4], so 5 steps.
    let u = Array2::from_shape_fn((9, n_in), |(i, j)| (i * n_in + j) as f64 * 0.1);
    let x0 = matrix(3, n_x, 1);
    let y0 = Array1::from_vec(vec![0.3, -0.2]);
    let w = matrix(n_x, n_x, 2);
    let w_in_1 = matrix(n_in, n_x, 3);
    let w_in_2 = matrix(n_in, n_x, 4);
    let w_feedback = matrix(n_y, n_x, 5);
    let w_out = matrix(n_x, n_y, 6);
    let (x, y) = rnn::rnn(
        u.view(),
        x0.view(),
        y0.view(),
        w.view(),
        w_in_1.view(),
        w_in_2.view(),
        w_feedback.view(),
        w_out.view(),
    )
    .unwrap();
    assert_eq!(x.dim(), (5, n_x));
    assert_eq!(y.dim(), (5, n_y));

    // Independent loop: x history starts with x0's 3 rows, y history with y0.
    let mut xs: Vec<Array1<f64>> = x0.outer_iter().map(|r| r.to_owned()).collect();
    let mut ys: Vec<Array1<f64>> = vec![y0.clone()];
    for t in 0..5 {
        let u_tm4 = u.row(t);
        let u_t = u.row(t + 4);
        let x_tm1 = &xs[xs.len() - 1];
        let x_tm3 = &xs[xs.len() - 3];
        let y_tm1 = &ys[ys.len() - 1];
        let pre = x_tm1.dot(&w) + u_t.dot(&w_in_1) + u_tm4.dot(&w_in_2) + y_tm1.dot(&w_feedback);
        let x_t = pre.mapv(f64::tanh);
        let y_t = x_tm3.dot(&w_out);
        xs.push(x_t);
        ys.push(y_t);
    }
    for t in 0..5 {
        assert_allclose(
            x.row(t).as_slice().unwrap(),
            xs[t + 3].as_slice().unwrap(),
            1e-12,
        );
        assert_allclose(
            y.row(t).as_slice().unwrap(),
            ys[t + 1].as_slice().unwrap(),
            1e-12,
        );
    }
    second_opinion(
        rnn::SOURCE,
        "rnn",
        vec![
            Value::from(u),
            Value::from(x0),
            Value::from(y0),
            Value::from(w),
            Value::from(w_in_1),
            Value::from(w_in_2),
            Value::from(w_feedback),
            Value::from(w_out),
        ],
        vec![Value::from(x), Value::from(y)],
    );
}

#[test]
fn power_of_2_stops_with_until() {
    let got = until::power_of_2(45.0).unwrap();
    assert_eq!(got.to_vec(), vec![2., 4., 8., 16., 32., 64.]);
    second_opinion(
        until::SOURCE,
        "power_of_2",
        vec![Value::from(45.0f64)],
        vec![Value::from(got)],
    );
    // The bound holds when the condition never becomes true.
    let bounded = until::power_of_2(f64::INFINITY).unwrap();
    assert_eq!(bounded.len(), 1024);
}

#[test]
fn cumulative_sums_match_hand_written_loops() {
    let v = array![1.0, 2.0, 3.0, 4.0, 5.0];
    let got = cumulative::cumsum_vector(v.view()).unwrap();
    assert_eq!(got.to_vec(), vec![1., 3., 6., 10., 15.]);
    second_opinion(
        cumulative::SOURCE,
        "cumsum_vector",
        vec![Value::from(v.clone())],
        vec![Value::from(got)],
    );

    let m = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let rows = cumulative::cumsum_rows(m.view()).unwrap();
    assert_eq!(rows, array![[1.0, 2.0], [4.0, 6.0], [9.0, 12.0]]);
    second_opinion(
        cumulative::SOURCE,
        "cumsum_rows",
        vec![Value::from(m)],
        vec![Value::from(rows)],
    );

    let scaled = cumulative::scaled(v.view(), 5.0).unwrap();
    let mut prior = 0.0;
    let expected: Vec<f64> = v
        .iter()
        .map(|x| {
            prior = prior * 5.0 + x;
            prior
        })
        .collect();
    assert_eq!(scaled.to_vec(), expected);
    assert_eq!(scaled.to_vec(), vec![1.0, 7.0, 38.0, 194.0, 975.0]);
    second_opinion(
        cumulative::SOURCE,
        "scaled",
        vec![Value::from(v), Value::from(5.0f64)],
        vec![Value::from(scaled)],
    );
}
