/// x_t = tanh(x_{t-1} W + u_t W_in_1 + u_{t-4} W_in_2 + y_{t-1} W_feedback);
/// y_t = x_{t-3} W_out
#[allow(clippy::too_many_arguments)]
#[allow(
    unused_mut,
    unused_variables,
    unused_parens,
    unused_labels,
    non_snake_case,
    clippy::all
)]
pub fn rnn(
    u: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    x0: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    y0: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
    w: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    w_in_1: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    w_in_2: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    w_feedback: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    w_out: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
) -> ::scan_runtime::Result<
    (
        ::scan_runtime::__private::ndarray::Array<
            f64,
            ::scan_runtime::__private::ndarray::Ix2,
        >,
        ::scan_runtime::__private::ndarray::Array<
            f64,
            ::scan_runtime::__private::ndarray::Ix2,
        >,
    ),
> {
    let mut __scan_10: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let mut __scan_13: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let mut __scan_14: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let mut __scan_15_buf0: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let mut __scan_15_buf1: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let mut __scan_15_packed10: ::scan_runtime::__private::kernels::StackedDot<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let mut __scan_15_packed11: ::scan_runtime::__private::kernels::PackedMatrix<f64> = ::core::default::Default::default();
    let mut __scan_15_10: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let __scan_0 = u;
    let __scan_1 = x0;
    let __scan_2 = y0;
    let __scan_3 = w;
    let __scan_4 = w_in_1;
    let __scan_5 = w_in_2;
    let __scan_6 = w_feedback;
    let __scan_7 = w_out;
    let __scan_8: i64 = 4i64;
    let __scan_9 = ::scan_runtime::__private::kernels::slice(
        __scan_0.view(),
        ::core::option::Option::Some(__scan_8),
        ::core::option::Option::None,
    );
    ::scan_runtime::__private::kernels::dot_mm(
        &mut __scan_10,
        __scan_9.view(),
        __scan_4.view(),
        "u_t.dot(w_in_1)",
    )?;
    let __scan_11: i64 = -4i64;
    let __scan_12 = ::scan_runtime::__private::kernels::slice(
        __scan_0.view(),
        ::core::option::Option::None,
        ::core::option::Option::Some(__scan_11),
    );
    ::scan_runtime::__private::kernels::stack_rows(
        &mut __scan_13,
        &[__scan_3.view(), __scan_6.view()],
        "[w; w_feedback]",
    )?;
    ::scan_runtime::__private::kernels::dot_add_mm_onto(
        &mut __scan_14,
        &mut __scan_10,
        __scan_12.view(),
        __scan_5.view(),
        false,
        "u_t.dot(w_in_1) + u_tm4.dot(w_in_2)",
    )?;
    let __scan_15_seq0 = __scan_0.view();
    let __scan_15_len0 = __scan_15_seq0
        .len_of(::scan_runtime::__private::ndarray::Axis(0));
    let __scan_15_avail0 = ::scan_runtime::__private::kernels::sequence_steps(
        "u",
        __scan_15_len0,
        &[-4i64, 0i64],
    )?;
    let __scan_15_seq1 = __scan_14.view();
    let __scan_15_len1 = __scan_15_seq1
        .len_of(::scan_runtime::__private::ndarray::Axis(0));
    let __scan_15_avail1 = ::scan_runtime::__private::kernels::sequence_steps(
        "u_t.dot(w_in_1) + u_tm4.dot(w_in_2)",
        __scan_15_len1,
        &[0i64],
    )?;
    let __scan_15_n_steps: usize = [__scan_15_avail0, __scan_15_avail1]
        .into_iter()
        .min()
        .unwrap_or(0);
    let mut __scan_15_trace0 = ::scan_runtime::__private::kernels::ArrayTrace::new(
        &mut __scan_15_buf0,
    );
    let __scan_15_init0 = __scan_1.view();
    ::scan_runtime::__private::kernels::check_initial_rows(
        "x0",
        __scan_15_init0.len_of(::scan_runtime::__private::ndarray::Axis(0)),
        &[-3i64, -1i64],
    )?;
    __scan_15_trace0
        .start(
            "n_steps",
            &__scan_15_init0.shape()[1..],
            3usize + __scan_15_n_steps,
            3usize + __scan_15_n_steps,
        )?;
    __scan_15_trace0
        .push_rows(
            "x0",
            __scan_15_init0
                .slice_axis(
                    ::scan_runtime::__private::ndarray::Axis(0),
                    ::scan_runtime::__private::ndarray::Slice::from(0..3usize),
                ),
        )?;
    let mut __scan_15_trace1 = ::scan_runtime::__private::kernels::ArrayTrace::new(
        &mut __scan_15_buf1,
    );
    let __scan_15_init1 = __scan_2.view();
    __scan_15_trace1
        .start(
            "n_steps",
            __scan_15_init1.shape(),
            1usize + __scan_15_n_steps,
            1usize + __scan_15_n_steps,
        )?;
    __scan_15_trace1
        .push_rows(
            "y0",
            __scan_15_init1.insert_axis(::scan_runtime::__private::ndarray::Axis(0)),
        )?;
    __scan_15_packed10.pack(__scan_13.view());
    __scan_15_packed11.pack_vectors(__scan_7.view());
    let mut __scan_15_done: usize = __scan_15_n_steps;
    '__scan_15_loop: for __scan_15_t in 0..__scan_15_n_steps {
        let (__scan_15_past0, mut __scan_15_rest0) = __scan_15_trace0
            .next_slot("n_steps")?;
        let (__scan_15_past1, mut __scan_15_rest1) = __scan_15_trace1
            .next_slot("n_steps")?;
        let __scan_15_2 = __scan_15_past0
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                __scan_15_t + 0usize,
            );
        let __scan_15_3 = __scan_15_past0
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                __scan_15_t + 2usize,
            );
        let __scan_15_4 = __scan_15_past1
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                __scan_15_t + 0usize,
            );
        let __scan_15_5 = __scan_3.view();
        let __scan_15_6 = __scan_6.view();
        let __scan_15_7 = __scan_7.view();
        let __scan_15_8 = __scan_15_seq1
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                (__scan_15_t + 0usize),
            );
        let __scan_15_9 = __scan_13.view();
        __scan_15_packed10
            .dot_v(
                &mut __scan_15_10,
                __scan_15_9.view(),
                &[__scan_15_3.view(), __scan_15_4.view()],
                &[__scan_15_5.view(), __scan_15_6.view()],
                &["x_tm1.dot(w)", "y_tm1.dot(w_feedback)"],
                "x_tm1.dot(w) + y_tm1.dot(w_feedback)",
            )?;
        __scan_15_packed11
            .dot_vm(
                __scan_15_rest1.row("`y0`", "x_tm3.dot(w_out)"),
                __scan_15_2.view(),
                __scan_15_7.view(),
                "x_tm3.dot(w_out)",
            )?;
        let __scan_15_11_row = __scan_15_rest1.written()?;
        ::scan_runtime::__private::kernels::map2(
            __scan_15_rest0
                .row(
                    "`x0`",
                    "tanh(x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback),)",
                ),
            __scan_15_10.view(),
            __scan_15_8.view(),
            "tanh(x_tm1.dot(w) + u_t.dot(w_in_1) + u_tm4.dot(w_in_2) + y_tm1.dot(w_feedback),)",
            #[inline(always)]
            move |__x0, __x1| {
                let __e2: f64 = ::scan_runtime::__private::math::add(__x0, __x1);
                let __e3: f64 = ::scan_runtime::__private::math::tanh(__e2);
                __e3
            },
        )?;
        let __scan_15_12_row = __scan_15_rest0.written()?;
        __scan_15_trace0.commit_row("n_steps")?;
        __scan_15_trace1.commit_row("n_steps")?;
    }
    __scan_15_buf0 = __scan_15_trace0.finish()?;
    __scan_15_buf1 = __scan_15_trace1.finish()?;
    let __scan_result = (
        {
            let mut __rows = __scan_15_buf0;
            __rows
                .slice_axis_inplace(
                    ::scan_runtime::__private::ndarray::Axis(0),
                    ::scan_runtime::__private::ndarray::Slice::from(
                        3usize..3usize + __scan_15_done,
                    ),
                );
            __rows
        },
        {
            let mut __rows = __scan_15_buf1;
            __rows
                .slice_axis_inplace(
                    ::scan_runtime::__private::ndarray::Axis(0),
                    ::scan_runtime::__private::ndarray::Slice::from(
                        1usize..1usize + __scan_15_done,
                    ),
                );
            __rows
        },
    );
    ::scan_runtime::__private::kernels::pool::recycle(__scan_10);
    ::scan_runtime::__private::kernels::pool::recycle(__scan_13);
    ::scan_runtime::__private::kernels::pool::recycle(__scan_14);
    ::core::result::Result::Ok(__scan_result)
}
