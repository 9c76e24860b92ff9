//! Array kernels called by generated code, one file per family.
//!
//! Every kernel that produces an array writes into a caller-provided buffer and only
//! reallocates it when its shape must change (see [`buffer::ensure_shape`]), so a loop
//! whose shapes are stable allocates nothing after its first step. Size problems come
//! back as [`crate::Error`] values, never as panics.

pub mod array_trace;
pub mod assemble;
pub mod buffer;
pub mod copy;
pub mod dot;
pub mod elementwise;
pub mod index;
pub mod interchange;
pub mod isa;
pub mod join;
pub mod lanes;
pub mod linalg;
pub mod one_step;
pub mod packed;
pub mod pool;
pub mod powers;
pub mod reduce;
pub mod scalar_trace;
pub mod stacked;
pub mod steps;
pub mod tiny;

// Flat paths for generated code: `kernels::map2`, `kernels::dot_mm`, ...
pub use array_trace::{ArrayTrace, Slot, SlotRow};
pub use assemble::{
    broadcast_arrays, broadcast_to, concatenate, diag, diagonal, identity_like, last_or, mask_add,
    mask_set, mask_take, scatter, scatter_add, slice_step_at, slice_step_at_mut, squeeze, stack,
    take, take_nd, triangle,
};
#[cfg(test)]
pub(crate) use buffer::Row;
pub use buffer::{broadcast_shape, ensure_shape, try_ensure_shape, Destination, UNTIL_FIRST_ROWS};
pub use dot::{
    check_dot_stack, chunk_steps, dot_add_mm, dot_add_mm_onto, dot_add_mv, dot_add_vm, dot_mm,
    dot_mv, dot_stack_m, dot_stack_v, dot_sum, dot_vm, dot_vv, matmul_matrix_stack, matmul_stacks,
    matmul_vector_stack, project_chunk, DotSumScratch, DotSumText, CHUNK_BYTES,
};
pub use elementwise::{
    broadcasts_alike, map1, map10, map11, map12, map13, map14, map15, map16, map2, map3, map4,
    map5, map6, map7, map8, map9, pair1, pair10, pair11, pair12, pair13, pair14, pair15, pair16,
    pair2, pair3, pair4, pair5, pair6, pair7, pair8, pair9,
};
pub use index::{
    arange, arange_len, assign, assign_add, copy_into, eye, fill_like, full, index, index_at,
    index_at_mut, index_mut, reshape, scalar, slice, slice_at, slice_at_mut, slice_mut,
};
pub use join::{join_slices, JoinSlices};
pub use packed::PackedMatrix;
pub use powers::Powers;
pub use reduce::{
    all_all, all_axis, any_all, any_axis, argmax_all, argmax_axis, argmin_all, argmin_axis,
    cumulative_all, cumulative_axis, logsumexp_all, logsumexp_axis, map1_max, map1_min, map2_max,
    map2_min, max_all, max_axis, max_of_map1, max_of_map2, max_of_map3, mean_all, mean_axis,
    min_all, min_axis, min_of_map1, min_of_map2, min_of_map3, prod_all, prod_axis, std_all,
    std_axis, sum_all, sum_axis, sum_to_shape, sum_to_shape_view, var_all, var_axis,
};
pub use scalar_trace::{take_rows, ScalarTrace};
pub use stacked::{stack_rows, StackedDot};
pub use steps::{
    check_initial_rows, check_n_steps, check_step_shape, check_steps_available, ring_tail,
    sequence_steps, zero_step_shape,
};
