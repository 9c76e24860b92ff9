/// Newton's square root until the largest change is below 1e-12, at most 200 steps.
#[allow(
    unused_mut,
    unused_variables,
    unused_parens,
    unused_labels,
    non_snake_case,
    clippy::all
)]
pub fn newton(
    a: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
) -> ::scan_runtime::Result<
    ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
> {
    let mut __scan_2_buf0: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let __scan_0 = a;
    let __scan_1: i64 = 200i64;
    let __scan_2_n_steps: usize = {
        let __scan_2_n_steps = ::scan_runtime::__private::kernels::check_n_steps(
            __scan_1,
        )?;
        __scan_2_n_steps
    };
    let mut __scan_2_trace0 = ::scan_runtime::__private::kernels::ArrayTrace::new(
        &mut __scan_2_buf0,
    );
    let __scan_2_init0 = __scan_0.view();
    __scan_2_trace0
        .start(
            "n_steps",
            __scan_2_init0.shape(),
            1usize
                + __scan_2_n_steps
                    .min(::scan_runtime::__private::kernels::UNTIL_FIRST_ROWS),
            1usize + __scan_2_n_steps,
        )?;
    __scan_2_trace0
        .push_rows(
            "a",
            __scan_2_init0.insert_axis(::scan_runtime::__private::ndarray::Axis(0)),
        )?;
    let mut __scan_2_done: usize = __scan_2_n_steps;
    '__scan_2_loop: for __scan_2_t in 0..__scan_2_n_steps {
        let (__scan_2_past0, mut __scan_2_rest0) = __scan_2_trace0.next_slot("n_steps")?;
        let __scan_2_0 = __scan_2_past0
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                __scan_2_t + 0usize,
            );
        let __scan_2_1 = __scan_0.view();
        let __scan_2_2: f64 = (0.5 as f64);
        let __scan_2_5: f64 = ::scan_runtime::__private::kernels::map2_max(
            __scan_2_rest0.row("`a`", "0.5 *(y_tm1 + a / y_tm1)"),
            __scan_2_1.view(),
            __scan_2_0.view(),
            "0.5 *(y_tm1 + a / y_tm1)",
            "max(abs(y_t -y_tm1))",
            #[inline(always)]
            move |__x0, __x1| {
                let __e3: f64 = ::scan_runtime::__private::math::div(__x0, __x1);
                let __e4: f64 = ::scan_runtime::__private::math::add(__x1, __e3);
                let __e5: f64 = ::scan_runtime::__private::math::mul(__scan_2_2, __e4);
                __e5
            },
            #[inline(always)]
            move |__x0, __x1, __y| {
                let __e2: f64 = ::scan_runtime::__private::math::sub(__y, __x1);
                let __e3: f64 = ::scan_runtime::__private::math::abs(__e2);
                __e3
            },
        )?;
        let __scan_2_3_row = __scan_2_rest0.written()?;
        let __scan_2_6: f64 = (0.000000000001 as f64);
        let __scan_2_7: bool = (__scan_2_5 < __scan_2_6);
        __scan_2_trace0.commit_row("n_steps")?;
        if __scan_2_7 {
            __scan_2_done = __scan_2_t + 1;
            break '__scan_2_loop;
        }
    }
    __scan_2_buf0 = __scan_2_trace0.finish()?;
    let __scan_result = {
        let mut __rows = __scan_2_buf0;
        __rows
            .slice_axis_inplace(
                ::scan_runtime::__private::ndarray::Axis(0),
                ::scan_runtime::__private::ndarray::Slice::from(
                    1usize..1usize + __scan_2_done,
                ),
            );
        __rows
    };
    ::core::result::Result::Ok(__scan_result)
}
