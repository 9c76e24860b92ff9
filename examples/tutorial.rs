//! The scan tutorial's loops, compiled ahead of time by `scan!`, printing the numbers the
//! tutorial prints. Run with `cargo run --release --example tutorial`.

use scan_runtime::prelude::*;
use scan_tests::tutorial::{cumulative, polynomial, power, rnn, set_value, triangular, until};

fn main() -> Result<()> {
    println!("A**k with scan (power(range(10), 2) and power(range(10), 4)):");
    let a = Array1::from_iter((0..10).map(f64::from));
    println!("{}", power::power(a.view(), 2)?);
    println!("{}", power::power(a.view(), 4)?);

    println!("\nPolynomial [1, 0, 2] at x = 3:");
    let coefficients = array![1.0f32, 0.0, 2.0];
    println!("{}", polynomial::polynomial(coefficients.view(), 3.0)?);
    println!(
        "{}",
        1.0 * 3f64.powi(0) + 0.0 * 3f64.powi(1) + 2.0 * 3f64.powi(2)
    );

    println!("\nTriangular numbers up to 15:");
    println!("{}", triangular::triangular_sequence(15)?);
    let expected: Vec<i64> = (0..15).map(|n| n * (n + 1) / 2).collect();
    println!("{expected:?}");

    println!("\nset_value_at_position:");
    let locations = array![[1i32, 1], [2, 3]];
    let values = array![42.0f32, 50.0];
    let model = Array2::<f32>::zeros((5, 5));
    println!(
        "{}",
        set_value::assign_values_at_positions(locations.view(), values.view(), model.view())?
    );

    println!("\nRNN with taps u[t-4], u[t], x[t-3], x[t-1], y[t-1] over u = 9 rows (5 steps):");
    let u = Array2::from_shape_fn((9, 2), |(i, j)| (i * 2 + j) as f64 * 0.1);
    let x0 = Array2::from_shape_fn((3, 3), |(i, j)| 0.1 * (i as f64) - 0.05 * (j as f64));
    let y0 = array![0.3, -0.2];
    let w = Array2::from_shape_fn((3, 3), |(i, j)| if i == j { 0.5 } else { 0.1 });
    let w_in_1 = Array2::from_elem((2, 3), 0.2);
    let w_in_2 = Array2::from_elem((2, 3), -0.1);
    let w_feedback = Array2::from_elem((2, 3), 0.05);
    let w_out = Array2::from_shape_fn((3, 2), |(i, j)| (i + j) as f64 * 0.1);
    let (x, y) = rnn::rnn(
        u.view(),
        x0.view(),
        y0.view(),
        w.view(),
        w_in_1.view(),
        w_in_2.view(),
        w_feedback.view(),
        w_out.view(),
    )?;
    println!("x =\n{x:.4}\ny =\n{y:.4}");

    println!("\nPowers of two below 45, stopping with until (n_steps = 1024 as the bound):");
    println!("{}", until::power_of_2(45.0)?);

    println!("\nCumulative sums, and prior * 5 + element:");
    let v = array![1.0, 2.0, 3.0, 4.0, 5.0];
    println!("{}", cumulative::cumsum_vector(v.view())?);
    let m = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    println!("{}", cumulative::cumsum_rows(m.view())?);
    println!("{}", cumulative::scaled(v.view(), 5.0)?);
    Ok(())
}
