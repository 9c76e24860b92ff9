/// The scan tutorial's polynomial: only the total of the components is read.
#[allow(
    unused_mut,
    unused_variables,
    unused_parens,
    unused_labels,
    non_snake_case,
    clippy::all
)]
pub fn polynomial(
    coefficients: ::scan_runtime::__private::ndarray::ArrayView<
        '_,
        f32,
        ::scan_runtime::__private::ndarray::Ix1,
    >,
    x: f32,
    len: usize,
) -> ::scan_runtime::Result<f64> {
    let mut __scan_5_buf0: ::scan_runtime::__private::ndarray::Array<
        f64,
        ::scan_runtime::__private::ndarray::Ix1,
    > = ::core::default::Default::default();
    let mut __scan_5_4_powers = ::scan_runtime::__private::kernels::Powers::default();
    let __scan_0 = coefficients;
    let __scan_1 = x;
    let __scan_2 = <i64 as ::core::convert::TryFrom<usize>>::try_from(len)
        .unwrap_or(i64::MAX);
    let __scan_3: f64 = ::scan_runtime::__private::element::Cast::<f64>::cast(__scan_1);
    let __scan_4: f64 = (0.0 as f64);
    let __scan_5_seq0 = __scan_0.view();
    let __scan_5_len0 = __scan_5_seq0
        .len_of(::scan_runtime::__private::ndarray::Axis(0));
    let __scan_5_avail0 = ::scan_runtime::__private::kernels::sequence_steps(
        "coefficients",
        __scan_5_len0,
        &[0i64],
    )?;
    let __scan_5_len1: usize = ::scan_runtime::__private::kernels::arange_len(__scan_2)?;
    let __scan_5_avail1 = ::scan_runtime::__private::kernels::sequence_steps(
        "arange(len)",
        __scan_5_len1,
        &[0i64],
    )?;
    let __scan_5_n_steps: usize = [__scan_5_avail0, __scan_5_avail1]
        .into_iter()
        .min()
        .unwrap_or(0);
    let mut __scan_5_state0 = __scan_4;
    let __scan_5_from: usize = ::scan_runtime::__private::kernels::isa::with_best_isa(
        #[inline(always)]
        || {
            let Some(__scan_5_slice0) = __scan_5_seq0.as_slice() else {
                return 0;
            };
            let mut __scan_5_lane4_powers = ::scan_runtime::__private::kernels::lanes::LanePowers::default();
            let __scan_5_lane3: f64 = __scan_3;
            let mut __scan_5_acc0: [f64; ::scan_runtime::__private::kernels::lanes::LANES] = [<f64 as ::scan_runtime::__private::element::Number>::ZERO; ::scan_runtime::__private::kernels::lanes::LANES];
            let mut __scan_5_lt: usize = 0;
            while __scan_5_lt + ::scan_runtime::__private::kernels::lanes::LANES
                <= __scan_5_n_steps
            {
                let mut __scan_5_run: usize = (__scan_5_n_steps - __scan_5_lt)
                    / ::scan_runtime::__private::kernels::lanes::LANES;
                let mut __scan_5_lane4_chain = __scan_5_lane4_powers
                    .anchor_index(__scan_5_lane3, ((__scan_5_lt + 0usize) as i64));
                __scan_5_run = __scan_5_run.min(__scan_5_lane4_chain.groups());
                let __scan_5_rows0_0 = &__scan_5_slice0[(__scan_5_lt
                    + 0usize)..(__scan_5_lt + 0usize)
                    + __scan_5_run * ::scan_runtime::__private::kernels::lanes::LANES];
                for (_, __scan_5_group0_0) in (0..__scan_5_run)
                    .zip(
                        __scan_5_rows0_0
                            .chunks_exact(
                                ::scan_runtime::__private::kernels::lanes::LANES,
                            ),
                    )
                {
                    for __scan_5_l in 0..::scan_runtime::__private::kernels::lanes::LANES {
                        let __scan_5_lane0: f32 = __scan_5_group0_0[__scan_5_l];
                        let __scan_5_lane1: i64 = (((__scan_5_lt + 0usize) + __scan_5_l)
                            as i64);
                        let __scan_5_lane2: f64 = ::scan_runtime::__private::element::Cast::<
                            f64,
                        >::cast(__scan_5_lane1);
                        let __scan_5_lane4: f64 = __scan_5_lane4_chain.take(__scan_5_l);
                        let __scan_5_lane5: f64 = ::scan_runtime::__private::element::Cast::<
                            f64,
                        >::cast(__scan_5_lane0);
                        let __scan_5_lane6: f64 = ::scan_runtime::__private::math::mul(
                            __scan_5_lane5,
                            __scan_5_lane4,
                        );
                        let __scan_5_lane7: f64 = __scan_5_acc0[__scan_5_l];
                        let __scan_5_lane8: f64 = ::scan_runtime::__private::math::add(
                            __scan_5_lane7,
                            __scan_5_lane6,
                        );
                        __scan_5_acc0[__scan_5_l] = __scan_5_lane8;
                    }
                    __scan_5_lt += ::scan_runtime::__private::kernels::lanes::LANES;
                }
            }
            __scan_5_state0 = ::scan_runtime::__private::math::add(
                __scan_5_state0,
                ::scan_runtime::__private::kernels::lanes::total(__scan_5_acc0),
            );
            __scan_5_lt
        },
    );
    let mut __scan_5_done: usize = __scan_5_n_steps;
    '__scan_5_loop: for __scan_5_t in __scan_5_from..__scan_5_n_steps {
        let __scan_5_0 = __scan_5_seq0[(__scan_5_t + 0usize)];
        let __scan_5_1 = (((__scan_5_t + 0usize)) as i64);
        let __scan_5_2: f64 = ::scan_runtime::__private::element::Cast::<
            f64,
        >::cast(__scan_5_1);
        let __scan_5_3 = __scan_3;
        let __scan_5_4: f64 = __scan_5_4_powers.pow(__scan_5_3, __scan_5_2);
        let __scan_5_5: f64 = ::scan_runtime::__private::element::Cast::<
            f64,
        >::cast(__scan_5_0);
        let __scan_5_6: f64 = ::scan_runtime::__private::math::mul(
            __scan_5_5,
            __scan_5_4,
        );
        let __scan_5_7 = __scan_5_state0;
        let __scan_5_8: f64 = ::scan_runtime::__private::math::add(
            __scan_5_7,
            __scan_5_6,
        );
        __scan_5_state0 = __scan_5_8;
    }
    let __scan_5_kept0 = 1usize.min(__scan_5_done);
    ::scan_runtime::__private::kernels::ensure_shape(
        &mut __scan_5_buf0,
        ::scan_runtime::__private::ndarray::Dim([__scan_5_kept0]),
    );
    if __scan_5_kept0 == 1 {
        __scan_5_buf0[0] = __scan_5_state0;
    }
    let __scan_7: f64 = ::scan_runtime::__private::kernels::sum_all(
        __scan_5_buf0
            .slice_axis(
                ::scan_runtime::__private::ndarray::Axis(0),
                ::scan_runtime::__private::ndarray::Slice::from(
                    0usize..0usize + __scan_5_kept0,
                ),
            ),
    );
    let __scan_result = __scan_7;
    ::scan_runtime::__private::kernels::pool::recycle(__scan_5_buf0);
    ::core::result::Result::Ok(__scan_result)
}
