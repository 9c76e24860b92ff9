//! The loops of the scan tutorial (shared/tutorial/scan_tutorial.txt) as `scan!` programs,
//! shared by `tests/tutorial.rs` (which checks their numbers) and `examples/tutorial.rs`
//! (which prints them).

pub mod power {
    crate::program! {
        /// A**k elementwise, keeping only the last step.
        pub fn power(a: ArrayView1<f64>, k: usize) -> Result<Array1<f64>> {
            let result = scan(
                |prior_result, a| prior_result * a,
                outputs_info = ones_like(a),
                non_sequences = a,
                n_steps = k,
            );
            Ok(result[-1])
        }
    }
}

pub mod polynomial {
    crate::program! {
        /// Components coefficient * x**power over [coefficients, arange(10000)], summed.
        pub fn polynomial(coefficients: ArrayView1<f32>, x: f64) -> Result<f64> {
            let components = scan(
                |coefficient, power, free_variable| coefficient * pow(free_variable, power),
                outputs_info = None,
                sequences = [coefficients, arange(10000)],
                non_sequences = x,
            );
            Ok(components.sum())
        }
    }
}

pub mod triangular {
    crate::program! {
        /// Integer accumulation: the initial state has the sequence's dtype.
        pub fn triangular_sequence(up_to: i64) -> Result<Array1<i64>> {
            let seq = arange(up_to);
            let scan_result = scan(
                |arange_val, sum_to_date| sum_to_date + arange_val,
                outputs_info = 0i64,
                sequences = seq,
            );
            Ok(scan_result)
        }
    }
}

pub mod set_value {
    crate::program! {
        /// A NITSOT output: zeros shaped like the model, with one value set per step.
        pub fn assign_values_at_positions(
            location: ArrayView2<i32>,
            values: ArrayView1<f32>,
            output_model: ArrayView2<f32>,
        ) -> Result<Array3<f32>> {
            let result = scan(
                |a_location, a_value, output_model| {
                    let zeros = zeros_like(output_model);
                    set_subtensor(zeros[a_location[0]][a_location[1]], a_value)
                },
                outputs_info = None,
                sequences = [location, values],
                non_sequences = output_model,
            );
            Ok(result)
        }
    }
}

pub mod rnn {
    crate::program! {
        /// x_t = tanh(x_{t-1} W + u_t W_in_1 + u_{t-4} W_in_2 + y_{t-1} W_feedback);
        /// y_t = x_{t-3} W_out
        #[allow(clippy::too_many_arguments)]
        pub fn rnn(
            u: ArrayView2<f64>,
            x0: ArrayView2<f64>,
            y0: ArrayView1<f64>,
            w: ArrayView2<f64>,
            w_in_1: ArrayView2<f64>,
            w_in_2: ArrayView2<f64>,
            w_feedback: ArrayView2<f64>,
            w_out: ArrayView2<f64>,
        ) -> Result<(Array2<f64>, Array2<f64>)> {
            let (x_vals, y_vals) = scan(
                |u_tm4, u_t, x_tm3, x_tm1, y_tm1, w, w_in_1, w_in_2, w_feedback, w_out| {
                    let x_t = tanh(
                        x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback),
                    );
                    let y_t = x_tm3.dot(w_out);
                    (x_t, y_t)
                },
                sequences = [taps(u, [-4, 0])],
                outputs_info = [taps(x0, [-3, -1]), y0],
                non_sequences = [w, w_in_1, w_in_2, w_feedback, w_out],
                strict = true,
            );
            Ok((x_vals, y_vals))
        }
    }
}

pub mod until {
    crate::program! {
        /// Powers of two up to the first one above max_value, with n_steps as the bound.
        pub fn power_of_2(max_value: f64) -> Result<Array1<f64>> {
            let values = scan(
                |previous_power, max_value| {
                    (previous_power * 2.0, until(previous_power * 2.0 > max_value))
                },
                outputs_info = 1.0,
                non_sequences = max_value,
                n_steps = 1024,
            );
            Ok(values)
        }
    }
}

pub mod cumulative {
    crate::program! {
        pub fn cumsum_vector(v: ArrayView1<f64>) -> Result<Array1<f64>> {
            let sums = scan(|x, acc| acc + x, sequences = v, outputs_info = 0.0);
            Ok(sums)
        }

        /// One row per step.
        pub fn cumsum_rows(m: ArrayView2<f64>) -> Result<Array2<f64>> {
            let sums = scan(|row, acc| acc + row, sequences = m, outputs_info = zeros_like(m[0]));
            Ok(sums)
        }

        /// prior * 5 + element, with the factor as a non-sequence.
        pub fn scaled(v: ArrayView1<f64>, factor: f64) -> Result<Array1<f64>> {
            let out = scan(
                |x, prior, factor| prior * factor + x,
                sequences = v,
                outputs_info = 0.0,
                non_sequences = factor,
            );
            Ok(out)
        }
    }
}
