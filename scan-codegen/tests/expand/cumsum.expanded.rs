/// A scalar recurrence keeping every step, over the loop index: its taps are locals and its
/// trace is only written, row after row, into memory not zero-filled first.
#[allow(
    unused_mut,
    unused_variables,
    unused_parens,
    unused_labels,
    non_snake_case,
    clippy::all
)]
pub fn cumsum(
    up_to: i64,
) -> ::scan_runtime::Result<
    ::scan_runtime::__private::ndarray::Array<
        i64,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
> {
    let mut __scan_2_buf0: ::scan_runtime::__private::ndarray::Array<
        i64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let __scan_0 = up_to;
    let __scan_1: i64 = 0i64;
    let __scan_2_len0: usize = ::scan_runtime::__private::kernels::arange_len(__scan_0)?;
    let __scan_2_avail0 = ::scan_runtime::__private::kernels::sequence_steps(
        "arange(up_to)",
        __scan_2_len0,
        &[0i64],
    )?;
    let __scan_2_n_steps: usize = [__scan_2_avail0].into_iter().min().unwrap_or(0);
    let mut __scan_2_trace0 = ::scan_runtime::__private::kernels::ScalarTrace::new(
        "n_steps",
        ::scan_runtime::__private::kernels::take_rows(&mut __scan_2_buf0),
        1usize + __scan_2_n_steps,
        1usize + __scan_2_n_steps,
    )?;
    __scan_2_trace0.push(__scan_1)?;
    let mut __scan_2_reg0_0 = __scan_1;
    let mut __scan_2_done: usize = __scan_2_n_steps;
    __scan_2_trace0
        .fill(
            __scan_2_n_steps,
            |__scan_2_t| -> ::scan_runtime::__private::Result<i64> {
                let __scan_2_0 = (((__scan_2_t + 0usize)) as i64);
                let __scan_2_1 = __scan_2_reg0_0;
                let __scan_2_2: i64 = ::scan_runtime::__private::math::add(
                    __scan_2_1,
                    __scan_2_0,
                );
                let __scan_2_filled: i64 = __scan_2_2;
                __scan_2_reg0_0 = __scan_2_2;
                ::core::result::Result::Ok(__scan_2_filled)
            },
        )?;
    __scan_2_buf0 = __scan_2_trace0.finish();
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
