"""Memory's element indices of addresses: every item size, aligned addresses to indices, a
misaligned or outside one refused with the argument's name."""

import numpy as np
import pytest

from naiad.runtime.interpreter.memory import Buffer, Memory, OutOfBoundsAccess


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.float64])
def test_indices_and_refusals(dtype):
    storage = np.zeros(64, np.uint8)
    base = storage.ctypes.data
    buffer = Buffer("x", base, storage.nbytes, base, 1)
    size = np.dtype(dtype).itemsize
    index = np.arange(0, 64 // size - 1, 3)
    addr = (base + index * size).astype(np.uint64)
    assert np.array_equal(Memory._indices(buffer, addr, dtype, "load"), index)
    if size > 1:
        with pytest.raises(OutOfBoundsAccess, match="misaligned load through argument `x`"):
            Memory._indices(buffer, addr + np.uint64(1), dtype, "load")
    with pytest.raises(OutOfBoundsAccess, match="out-of-bounds store through argument `x`"):
        Memory._indices(buffer, np.array([base + 64], np.uint64), dtype, "store")
