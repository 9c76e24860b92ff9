/// A MITSOT output (taps [-2, -1]) of scalars, stopped by until.
#[allow(
    unused_mut,
    unused_variables,
    unused_parens,
    unused_labels,
    non_snake_case,
    clippy::all
)]
pub fn fibonacci(
    init: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        i64,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
    limit: i64,
) -> ::scan_runtime::Result<
    ::scan_runtime::__private::ndarray::Array<
        i64,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
> {
    let mut __scan_3_buf0: ::scan_runtime::__private::ndarray::Array<
        i64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let __scan_0 = init;
    let __scan_1 = limit;
    let __scan_2: i64 = 100i64;
    let __scan_3_n_steps: usize = {
        let __scan_3_n_steps = ::scan_runtime::__private::kernels::check_n_steps(
            __scan_2,
        )?;
        __scan_3_n_steps
    };
    let mut __scan_3_trace0 = ::scan_runtime::__private::kernels::ScalarTrace::new(
        "n_steps",
        ::scan_runtime::__private::kernels::take_rows(&mut __scan_3_buf0),
        2usize
            + __scan_3_n_steps.min(::scan_runtime::__private::kernels::UNTIL_FIRST_ROWS),
        2usize + __scan_3_n_steps,
    )?;
    let __scan_3_init0 = __scan_0.view();
    ::scan_runtime::__private::kernels::check_initial_rows(
        "init",
        __scan_3_init0.len(),
        &[-2i64, -1i64],
    )?;
    for __scan_3_i in 0..2usize {
        __scan_3_trace0.push(__scan_3_init0[__scan_3_i])?;
    }
    let mut __scan_3_reg0_0 = __scan_0.view()[0usize];
    let mut __scan_3_reg0_1 = __scan_0.view()[1usize];
    let mut __scan_3_done: usize = __scan_3_n_steps;
    '__scan_3_loop: for __scan_3_t in 0..__scan_3_n_steps {
        let __scan_3_0 = __scan_3_reg0_0;
        let __scan_3_1 = __scan_3_reg0_1;
        let __scan_3_2 = __scan_1;
        let __scan_3_3: i64 = ::scan_runtime::__private::math::add(
            __scan_3_0,
            __scan_3_1,
        );
        let __scan_3_4: bool = (__scan_3_3 > __scan_3_2);
        __scan_3_trace0.push(__scan_3_3)?;
        __scan_3_reg0_0 = __scan_3_reg0_1;
        __scan_3_reg0_1 = __scan_3_3;
        if __scan_3_4 {
            __scan_3_done = __scan_3_t + 1;
            break '__scan_3_loop;
        }
    }
    __scan_3_buf0 = __scan_3_trace0.finish();
    let __scan_result = {
        let mut __rows = __scan_3_buf0;
        __rows
            .slice_axis_inplace(
                ::scan_runtime::__private::ndarray::Axis(0),
                ::scan_runtime::__private::ndarray::Slice::from(
                    2usize..2usize + __scan_3_done,
                ),
            );
        __rows
    };
    ::core::result::Result::Ok(__scan_result)
}
