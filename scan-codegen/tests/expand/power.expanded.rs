/// A**k, keeping the last step.
#[allow(
    unused_mut,
    unused_variables,
    unused_parens,
    unused_labels,
    non_snake_case,
    clippy::all
)]
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
    let __scan_3_n_steps: usize = {
        let __scan_3_n_steps = ::scan_runtime::__private::kernels::check_n_steps(
            __scan_1,
        )?;
        __scan_3_n_steps
    };
    ::core::mem::swap(&mut __scan_3_state0, &mut __scan_2);
    let mut __scan_3_done: usize = __scan_3_n_steps;
    let __scan_3_ic: bool = '__scan_3_ic: {
        const __SCAN_3_IC_CHUNK: usize = ::scan_runtime::__private::kernels::interchange::chunk(
            &[::core::mem::size_of::<f64>()],
        );
        if __scan_3_n_steps == 0 {
            break '__scan_3_ic false;
        }
        let __scan_3_ic_nsv0 = __scan_0.view();
        let ::core::option::Option::Some(__scan_3_ic_row) = ::scan_runtime::__private::kernels::interchange::common_row::<
            1usize,
        >(&[__scan_0.view().shape(), __scan_3_ic_nsv0.shape()]) else {
            break '__scan_3_ic false;
        };
        let __scan_3_ic_total: usize = __scan_3_ic_row.iter().product();
        if !::scan_runtime::__private::kernels::interchange::worth_it(
            __scan_3_ic_total,
            __SCAN_3_IC_CHUNK,
            false,
        ) {
            break '__scan_3_ic false;
        }
        let ::core::option::Option::Some(__scan_3_ic_ns0) = __scan_3_ic_nsv0.to_slice()
        else {
            break '__scan_3_ic false;
        };
        let mut __scan_3_ic_out0: ::std::vec::Vec<f64> = ::std::vec::Vec::new();
        if __scan_3_ic_out0.try_reserve_exact(__scan_3_ic_total).is_err() {
            break '__scan_3_ic false;
        }
        ::scan_runtime::__private::kernels::isa::with_best_isa(
            #[inline(always)]
            || {
                let mut __scan_3_ic_e0: usize = 0;
                while __scan_3_ic_e0 + __SCAN_3_IC_CHUNK <= __scan_3_ic_total {
                    {
                        let mut __scan_3_ic_n0: [f64; __SCAN_3_IC_CHUNK] = [<f64 as ::core::default::Default>::default(); __SCAN_3_IC_CHUNK];
                        let mut __scan_3_ic_h0_0: [f64; __SCAN_3_IC_CHUNK] = [(1.0
                            as f64); __SCAN_3_IC_CHUNK];
                        let __scan_3_ic_nc0: &[_] = &__scan_3_ic_ns0[__scan_3_ic_e0..__scan_3_ic_e0
                            + __SCAN_3_IC_CHUNK];
                        for __scan_3_ic_t in 0..__scan_3_n_steps {
                            for __scan_3_ic_e in 0..__SCAN_3_IC_CHUNK {
                                let __scan_3_ic_x0: f64 = __scan_3_ic_h0_0[__scan_3_ic_e];
                                let __scan_3_ic_x1: f64 = __scan_3_ic_nc0[__scan_3_ic_e];
                                let __scan_3_ic_x2: f64 = ::scan_runtime::__private::math::mul(
                                    __scan_3_ic_x0,
                                    __scan_3_ic_x1,
                                );
                                __scan_3_ic_n0[__scan_3_ic_e] = __scan_3_ic_x2;
                            }
                            __scan_3_ic_h0_0 = __scan_3_ic_n0;
                        }
                        __scan_3_ic_out0
                            .extend_from_slice(&__scan_3_ic_h0_0[..__SCAN_3_IC_CHUNK]);
                    }
                    __scan_3_ic_e0 += __SCAN_3_IC_CHUNK;
                }
                if __scan_3_ic_e0 < __scan_3_ic_total {
                    let __scan_3_ic_len: usize = __scan_3_ic_total - __scan_3_ic_e0;
                    {
                        let mut __scan_3_ic_n0: [f64; __SCAN_3_IC_CHUNK] = [<f64 as ::core::default::Default>::default(); __SCAN_3_IC_CHUNK];
                        let mut __scan_3_ic_h0_0: [f64; __SCAN_3_IC_CHUNK] = [(1.0
                            as f64); __SCAN_3_IC_CHUNK];
                        let __scan_3_ic_nc0: &[_] = &__scan_3_ic_ns0[__scan_3_ic_e0..__scan_3_ic_e0
                            + __scan_3_ic_len];
                        for __scan_3_ic_t in 0..__scan_3_n_steps {
                            for __scan_3_ic_e in 0..__scan_3_ic_len {
                                let __scan_3_ic_x0: f64 = __scan_3_ic_h0_0[__scan_3_ic_e];
                                let __scan_3_ic_x1: f64 = __scan_3_ic_nc0[__scan_3_ic_e];
                                let __scan_3_ic_x2: f64 = ::scan_runtime::__private::math::mul(
                                    __scan_3_ic_x0,
                                    __scan_3_ic_x1,
                                );
                                __scan_3_ic_n0[__scan_3_ic_e] = __scan_3_ic_x2;
                            }
                            __scan_3_ic_h0_0 = __scan_3_ic_n0;
                        }
                        __scan_3_ic_out0
                            .extend_from_slice(&__scan_3_ic_h0_0[..__scan_3_ic_len]);
                    }
                }
            },
        );
        __scan_3_state0 = ::scan_runtime::__private::kernels::interchange::state_from(
            ::scan_runtime::__private::ndarray::Dim(__scan_3_ic_row),
            __scan_3_ic_out0,
        );
        true
    };
    if !__scan_3_ic {
        ::scan_runtime::__private::kernels::fill_like(
            &mut __scan_3_state0,
            __scan_0.view(),
            (1.0 as f64),
        );
        '__scan_3_loop: for __scan_3_t in 0..__scan_3_n_steps {
            let __scan_3_0 = __scan_3_state0.view();
            let __scan_3_1 = __scan_0.view();
            ::scan_runtime::__private::kernels::map2(
                &mut __scan_3_2,
                __scan_3_0.view(),
                __scan_3_1.view(),
                "prior * a",
                #[inline(always)]
                move |__x0, __x1| ::scan_runtime::__private::math::mul(__x0, __x1),
            )?;
            ::scan_runtime::__private::kernels::check_step_shape(
                "`ones_like(a)`",
                "prior * a",
                __scan_3_state0.shape(),
                __scan_3_2.view().shape(),
            )?;
            ::core::mem::swap(&mut __scan_3_state0, &mut __scan_3_2);
        }
    }
    let __scan_3_kept0 = 1usize.min(__scan_3_done);
    let __scan_5: i64 = -1i64;
    let __scan_6 = ::scan_runtime::__private::kernels::index(
        __scan_3_state0
            .view()
            .insert_axis(::scan_runtime::__private::ndarray::Axis(0))
            .slice_axis_move(
                ::scan_runtime::__private::ndarray::Axis(0),
                ::scan_runtime::__private::ndarray::Slice::from(0..__scan_3_kept0),
            ),
        __scan_5,
        "result[-1]",
    )?;
    let __scan_result = __scan_3_state0;
    ::scan_runtime::__private::kernels::pool::recycle(__scan_2);
    ::core::result::Result::Ok(__scan_result)
}
