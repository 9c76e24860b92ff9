/// A**k, keeping the last step.
#[allow(unused_mut, unused_variables, unused_parens, non_snake_case, clippy::all)]
pub fn power(
    a: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
    k: usize,
) -> ::scan_runtime::Result<
    ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
> {
    let mut __scan_2: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let mut __scan_3_state0: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let mut __scan_3_2: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let __scan_0 = a;
    let __scan_1 = <i64 as ::core::convert::TryFrom<usize>>::try_from(k)
        .unwrap_or(i64::MAX);
    ::scan_runtime::__private::kernels::fill_like(
        &mut __scan_2,
        __scan_0.view(),
        (1.0 as f64),
    );
    let __scan_3_n_steps: usize = {
        let __scan_3_n_steps = ::scan_runtime::__private::kernels::check_n_steps(
            __scan_1,
        )?;
        __scan_3_n_steps
    };
    ::core::mem::swap(&mut __scan_3_state0, &mut __scan_2);
    let mut __scan_3_done: usize = __scan_3_n_steps;
    for __scan_3_t in 0..__scan_3_n_steps {
        let __scan_3_0 = __scan_3_state0.view();
        let __scan_3_1 = __scan_0.view();
        ::scan_runtime::__private::kernels::map2(
            &mut __scan_3_2,
            __scan_3_0.view(),
            __scan_3_1.view(),
            "prior * a",
            |__x0, __x1| ::scan_runtime::__private::math::mul(__x0, __x1),
        )?;
        ::scan_runtime::__private::kernels::check_step_shape(
            "`ones_like(a)`",
            "prior * a",
            __scan_3_state0.shape(),
            __scan_3_2.view().shape(),
        )?;
        ::core::mem::swap(&mut __scan_3_state0, &mut __scan_3_2);
    }
    let __scan_3_kept0 = 1usize.min(__scan_3_done);
    let __scan_3_last0 = __scan_3_state0
        .view()
        .insert_axis(::scan_runtime::__private::ndarray::Axis(0))
        .slice_axis_move(
            ::scan_runtime::__private::ndarray::Axis(0),
            ::scan_runtime::__private::ndarray::Slice::from(0..__scan_3_kept0),
        );
    let __scan_5: i64 = -1i64;
    let __scan_6 = ::scan_runtime::__private::kernels::index(
        __scan_3_last0.view(),
        __scan_5,
        "result[-1]",
    )?;
    ::core::result::Result::Ok(__scan_6.view().to_owned())
}
