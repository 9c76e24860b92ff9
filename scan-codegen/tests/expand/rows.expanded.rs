/// Array rows written in place: a recurrent output read through two taps (its step's last
/// kernel writes row t of the trace while the taps read the rows before it) and a map
/// output (its first row through a buffer, the rest in place).
#[allow(
    unused_mut,
    unused_variables,
    unused_parens,
    unused_labels,
    non_snake_case,
    clippy::all
)]
pub fn rows(
    x: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    init: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    >,
    w: ::scan_runtime::__private::ndarray::ArrayView<
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
    let mut __scan_3_buf0: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let mut __scan_3_buf1: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix2,
    > = ::core::default::Default::default();
    let mut __scan_3_packed4: ::scan_runtime::__private::kernels::PackedMatrix<f64> = ::core::default::Default::default();
    let mut __scan_3_4: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let mut __scan_3_6: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let __scan_0 = x;
    let __scan_1 = init;
    let __scan_2 = w;
    let __scan_3_seq0 = __scan_0.view();
    let __scan_3_len0 = __scan_3_seq0
        .len_of(::scan_runtime::__private::ndarray::Axis(0));
    let __scan_3_avail0 = ::scan_runtime::__private::kernels::sequence_steps(
        "x",
        __scan_3_len0,
        &[0i64],
    )?;
    let __scan_3_n_steps: usize = [__scan_3_avail0].into_iter().min().unwrap_or(0);
    let mut __scan_3_trace0 = ::scan_runtime::__private::kernels::ArrayTrace::new(
        &mut __scan_3_buf0,
    );
    let __scan_3_init0 = __scan_1.view();
    ::scan_runtime::__private::kernels::check_initial_rows(
        "init",
        __scan_3_init0.len_of(::scan_runtime::__private::ndarray::Axis(0)),
        &[-2i64, -1i64],
    )?;
    __scan_3_trace0
        .start(
            "n_steps",
            &__scan_3_init0.shape()[1..],
            2usize + __scan_3_n_steps,
            2usize + __scan_3_n_steps,
        )?;
    __scan_3_trace0
        .push_rows(
            "init",
            __scan_3_init0
                .slice_axis(
                    ::scan_runtime::__private::ndarray::Axis(0),
                    ::scan_runtime::__private::ndarray::Slice::from(0..2usize),
                ),
        )?;
    let mut __scan_3_trace1 = ::scan_runtime::__private::kernels::ArrayTrace::new(
        &mut __scan_3_buf1,
    );
    __scan_3_packed4.pack_vectors(__scan_2.view());
    let mut __scan_3_done: usize = __scan_3_n_steps;
    '__scan_3_loop: for __scan_3_t in 0..__scan_3_n_steps {
        let (__scan_3_past0, mut __scan_3_rest0) = __scan_3_trace0.next_slot("n_steps")?;
        let __scan_3_0 = __scan_3_seq0
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                (__scan_3_t + 0usize),
            );
        let __scan_3_1 = __scan_3_past0
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                __scan_3_t + 0usize,
            );
        let __scan_3_2 = __scan_3_past0
            .index_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                __scan_3_t + 1usize,
            );
        let __scan_3_3 = __scan_2.view();
        __scan_3_packed4
            .dot_vm(
                &mut __scan_3_4,
                __scan_3_2.view(),
                __scan_3_3.view(),
                "h_tm1.dot(w)",
            )?;
        let __scan_3_5: f64 = (2.0 as f64);
        let __scan_3_6_row = if __scan_3_t == 0 {
            ::scan_runtime::__private::kernels::map1(
                &mut __scan_3_6,
                __scan_3_2.view(),
                "h_tm1 * 2.0",
                #[inline(always)]
                move |__x0| ::scan_runtime::__private::math::mul(__x0, __scan_3_5),
            )?;
            __scan_3_6.view()
        } else {
            ::scan_runtime::__private::kernels::map1(
                __scan_3_trace1.next_slot("n_steps")?.1.row("1", "h_tm1 * 2.0"),
                __scan_3_2.view(),
                "h_tm1 * 2.0",
                #[inline(always)]
                move |__x0| ::scan_runtime::__private::math::mul(__x0, __scan_3_5),
            )?;
            {
                __scan_3_trace1.commit_row("n_steps")?;
                __scan_3_trace1.row(__scan_3_t + 0usize)?
            }
        };
        ::scan_runtime::__private::kernels::map3(
            __scan_3_rest0.row("`init`", "tanh(h_tm1.dot(w) + h_tm2 + x_t)"),
            __scan_3_4.view(),
            __scan_3_1.view(),
            __scan_3_0.view(),
            "tanh(h_tm1.dot(w) + h_tm2 + x_t)",
            #[inline(always)]
            move |__x0, __x1, __x2| {
                let __e3: f64 = ::scan_runtime::__private::math::add(__x0, __x1);
                let __e4: f64 = ::scan_runtime::__private::math::add(__e3, __x2);
                let __e5: f64 = ::scan_runtime::__private::math::tanh(__e4);
                __e5
            },
        )?;
        let __scan_3_7_row = __scan_3_rest0.written()?;
        if __scan_3_t == 0 {
            __scan_3_trace1
                .start(
                    "n_steps",
                    __scan_3_6.view().shape(),
                    0usize + __scan_3_n_steps,
                    __scan_3_n_steps,
                )?;
            __scan_3_trace1.push_row("1", "h_tm1 * 2.0", __scan_3_6.view())?;
        }
        __scan_3_trace0.commit_row("n_steps")?;
    }
    __scan_3_buf0 = __scan_3_trace0.finish()?;
    __scan_3_buf1 = __scan_3_trace1.finish()?;
    if __scan_3_n_steps == 0 {
        ::scan_runtime::__private::kernels::ensure_shape(
            &mut __scan_3_buf1,
            ::scan_runtime::__private::ndarray::Dim([0, [0usize; 8][0usize]]),
        );
    }
    let __scan_result = (
        {
            let mut __rows = __scan_3_buf0;
            __rows
                .slice_axis_inplace(
                    ::scan_runtime::__private::ndarray::Axis(0),
                    ::scan_runtime::__private::ndarray::Slice::from(
                        2usize..2usize + __scan_3_done,
                    ),
                );
            __rows
        },
        {
            let mut __rows = __scan_3_buf1;
            __rows
                .slice_axis_inplace(
                    ::scan_runtime::__private::ndarray::Axis(0),
                    ::scan_runtime::__private::ndarray::Slice::from(
                        0usize..0usize + __scan_3_done,
                    ),
                );
            __rows
        },
    );
    ::core::result::Result::Ok(__scan_result)
}
