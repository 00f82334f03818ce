"""Dot operands through shared-memory buffers, without a GPU: every thread's stores of a
`ttg.local_alloc` and its `ldmatrix` loads of each K slice (`ttg.memdesc_subslice` +
`ttg.local_load`), simulated with the same plans the lowering emits, receive exactly the
elements of the slice's dot-operand layout; and the pass that makes them
(passes/dot_operands_shared.py) on real kernels. Values on the GPU: tests/gpu/test_dot_gpu.py.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from test_ldmatrix import ELEMENTS, _ldmatrix, _thread_offsets, _types

from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering.ldmatrix import (
    load_plan,
    operand_encoding,
    shared_offsets,
    store_plan,
)
from naiad.backends.nvidia.lowering.shared_memory import permuted
from naiad.backends.nvidia.passes.dot_operands_shared import _permuted, instruction_depth


def _stored(src_t, to_offset, nbytes, threads):
    """The buffer (element ids; -1 where nothing was stored) after every thread's stores."""
    src = to_linear_layout(src_t.encoding, src_t.shape)
    ids = np.arange(int(np.prod(src_t.shape))).reshape(src_t.shape)
    offsets, vector, registers = store_plan(src, to_offset, nbytes)
    buffer = np.full(int(np.prod(src_t.shape)), -1, dtype=np.int64)
    thread = _thread_offsets(offsets, threads)
    for first in registers:
        constant = offsets.apply(register=first)[0]
        for tid in range(threads):
            for i in range(vector):
                held = ids[src.apply(register=first + i, lane=tid % 32, warp=tid // 32)]
                buffer[(thread[tid] ^ constant) + i] = held
    return buffer, ids


def _received(buffer, loads, nbytes, origin_offset, warps):
    """(warp, lane, register) -> the element id each thread's `ldmatrix` loads receive."""
    load_offsets, _, trans, words = loads
    plan = SimpleNamespace(element_bytes=nbytes, trans=trans, per_word=4 // nbytes)
    thread = _thread_offsets(load_offsets, 32 * warps)
    received = {}
    for warp in range(warps):
        for lane in range(32):
            for w, (instruction, matrix) in enumerate(words):
                constant = load_offsets.apply(register=instruction)[0] ^ origin_offset
                rows = [thread[32 * warp + 8 * matrix + i] ^ constant for i in range(8)]
                for i, value in enumerate(_ldmatrix(buffer, rows, plan, lane)):
                    received[(warp, lane, w * plan.per_word + i)] = value
    return received


@pytest.mark.parametrize(
    ("element", "op_idx", "shape", "warps", "order"),
    [
        ("f16", 0, (128, 64), [2, 4], [1, 0]),  # the tutorial's A: K contiguous
        ("f16", 1, (64, 256), [2, 4], [1, 0]),  # its B: N contiguous, `.trans`
        ("bf16", 1, (32, 64), [2, 2], [0, 1]),  # B stored K-major
        ("i8", 0, (64, 128), [4, 1], [1, 0]),
        ("f32", 1, (32, 64), [2, 2], [0, 1]),  # tf32
        pytest.param("e4m3", 0, (64, 64), [2, 2], [1, 0], marks=pytest.mark.full),
    ],
)
def test_every_k_slice_loads_its_fragment(element, op_idx, shape, warps, order):
    src_t, dst_t = _types(element, op_idx, shape, warps, order, 8)
    nbytes = ELEMENTS[element][0].width // 8
    encoding = operand_encoding(src_t, dst_t)
    to_offset = shared_offsets(encoding, shape).invert()
    threads = 32 * int(np.prod(warps))
    buffer, ids = _stored(src_t, to_offset, nbytes, threads)
    assert (buffer >= 0).all()
    k_dim = 1 if op_idx == 0 else 0
    depth = instruction_depth(8 * nbytes)
    for start in range(0, shape[k_dim], depth):
        slice_shape = list(shape)
        slice_shape[k_dim] = depth
        slice_t = dst_t.clone(shape=slice_shape)
        loads = load_plan(to_offset, slice_t, encoding.order[0])
        assert loads is not None
        origin = [0, 0]
        origin[k_dim] = start
        origin_offset = to_offset.apply(dim0=origin[0], dim1=origin[1])[0]
        dst = to_linear_layout(slice_t.encoding, slice_t.shape)
        received = _received(buffer, loads, nbytes, origin_offset, int(np.prod(warps)))
        assert len(received) == threads * dst.in_dim_size("register")
        for (warp, lane, r), value in received.items():
            row, col = dst.apply(register=r, lane=lane, warp=warp)
            want = (row + origin[0], col + origin[1])
            assert value == ids[want], (start, warp, lane, r)


@pytest.mark.parametrize(
    ("shape", "warps"),
    [((64, 64), [4, 1]), pytest.param((128, 128), [8, 1], marks=pytest.mark.full)],
)
def test_transposed_view_loads_k_transposed(shape, warps):
    """Attention's K, stored as loaded (rows of keys, the head dimension contiguous), read
    through `ttg.memdesc_trans` as the B operand K^T, slice by slice along the head
    dimension: each thread gets the element of K^T its fragment holds."""
    bn, d = shape
    kt_src_t, kt_t = _types("f16", 1, (d, bn), warps, [0, 1], 8)  # K^T: d contiguous
    natural_t, _ = _types("f16", 0, (bn, d), warps, [1, 0], 8)  # K as loaded
    encoding_t = operand_encoding(kt_src_t, kt_t)
    natural = _permuted(encoding_t, [1, 0])
    to_offset = shared_offsets(natural, (bn, d)).invert()
    threads = 32 * int(np.prod(warps))
    buffer, ids = _stored(natural_t, to_offset, 2, threads)
    view = permuted(to_offset, [1, 0])
    for start in range(0, d, 16):
        slice_t = kt_t.clone(shape=[16, bn])
        loads = load_plan(view, slice_t, encoding_t.order[0])
        assert loads is not None
        origin_offset = view.apply(dim0=start, dim1=0)[0]
        dst = to_linear_layout(slice_t.encoding, slice_t.shape)
        received = _received(buffer, loads, 2, origin_offset, int(np.prod(warps)))
        for (warp, lane, r), value in received.items():
            dd, n = dst.apply(register=r, lane=lane, warp=warp)
            assert value == ids[n, dd + start], (start, warp, lane, r)


@pytest.mark.parametrize(
    ("shape", "warps"),
    [((32, 64), [2, 2]), pytest.param((64, 128), [2, 4], marks=pytest.mark.full)],
)
def test_tf32_b_rows_along_n_load_one_element_per_register(shape, warps):
    """tf32's B stored row-major (N contiguous), which `ldmatrix` cannot transpose: each K
    slice is read one element per register, at the offsets the lowering computes (the
    thread's part XOR the register's constant XOR the slice's origin)."""
    src_t, dst_t = _types("f32", 1, shape, warps, [1, 0], 4)
    encoding = operand_encoding(src_t, dst_t, element_loads=True)
    to_offset = shared_offsets(encoding, shape).invert()
    threads = 32 * int(np.prod(warps))
    buffer, ids = _stored(src_t, to_offset, 4, threads)
    for start in range(0, shape[0], 8):
        slice_t = dst_t.clone(shape=[8, shape[1]])
        assert load_plan(to_offset, slice_t, encoding.order[0]) is None  # no ldmatrix here
        dst = to_linear_layout(slice_t.encoding, slice_t.shape)
        offsets = dst.compose(to_offset)
        origin = to_offset.apply(dim0=start, dim1=0)[0]
        thread = _thread_offsets(offsets, threads)
        for tid in range(threads):
            for r in range(dst.in_dim_size("register")):
                got = buffer[thread[tid] ^ offsets.apply(register=r)[0] ^ origin]
                k, n = dst.apply(register=r, lane=tid % 32, warp=tid // 32)
                assert got == ids[k + start, n], (start, tid, r)
