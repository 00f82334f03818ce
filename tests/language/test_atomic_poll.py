"""`tl.atomic_poll`: waiting until memory holds a value, with and without a timeout, in the
interpreter and compiled for the CPU (and with `-m gpu` on a GPU): the answer, the time a
timed-out poll waits, a value written by another thread while a program polls, and Triton's
compile-time refusals in its words."""

import threading
import time

import numpy as np
import pytest
from helpers import running_on
from memory_helpers import kernel_error

import naiad
import naiad.language as tl

WIDTHS = [np.int16, np.int32, np.int64]


@naiad.jit
def _poll(flag, out, expected, timeout_ns, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.store(out, tl.atomic_poll(flag, expected, sem=SEM, scope=SCOPE, timeout_ns=timeout_ns))


@naiad.jit
def _poll_forever(flag, out, expected):
    tl.store(out, flag.atomic_poll(expected))


def _flag(gen, dtype):
    """A random nonzero value of `dtype`, in a one-element array."""
    info = np.iinfo(dtype)
    value = 0
    while value == 0:
        value = gen.integers(info.min, info.max, endpoint=True, dtype=dtype)
    return np.array([value], dtype)


@pytest.mark.parametrize("dtype", WIDTHS)
@pytest.mark.parametrize("sem", ["acquire", "relaxed"])
def test_a_poll_returns_true_once_the_value_is_there(gen, dtype, sem):
    flag = _flag(gen, dtype)
    before = flag.copy()
    out = np.zeros(1, np.bool_)
    _poll_forever[(1,)](flag, out, int(flag[0]))
    assert out[0]
    out[0] = False
    _poll[(1,)](flag, out, int(flag[0]), 0, SEM=sem, SCOPE="gpu")
    assert out[0]
    assert flag[0] == before[0]  # a poll never writes


@pytest.mark.parametrize("dtype", WIDTHS)
@pytest.mark.parametrize("timeout_ns", [0, 1_000, 3_000_000])
def test_a_poll_that_times_out_returns_false(gen, dtype, timeout_ns):
    flag = _flag(gen, dtype)
    out = np.ones(1, np.bool_)
    wrong = int(flag[0]) ^ 1  # another value of the same width
    _poll[(1,)](flag, out, wrong, timeout_ns, SEM="acquire", SCOPE="cta")
    assert not out[0]
    assert flag[0] != wrong


def test_a_timed_out_poll_waits_its_timeout(gen):
    flag, out = _flag(gen, np.int32), np.ones(1, np.bool_)
    wrong = int(flag[0]) ^ 4
    _poll[(1,)](flag, out, wrong, 1, SEM="relaxed", SCOPE="sys")  # compiled before the clock
    began = time.monotonic()
    _poll[(1,)](flag, out, wrong, 200_000_000, SEM="relaxed", SCOPE="sys")
    waited = time.monotonic() - began
    assert not out[0]
    assert 0.2 <= waited < 5.0


def test_a_poll_sees_a_value_another_thread_writes(gen):
    if running_on() == "cuda":
        pytest.skip("the array travels to the GPU before the launch: the thread writes the host's")
    flag, out = np.zeros(1, np.int64), np.zeros(1, np.bool_)
    value = int(_flag(gen, np.int64)[0])

    def write():
        time.sleep(0.05)
        flag[0] = value

    writer = threading.Thread(target=write)
    writer.start()
    _poll[(1,)](flag, out, value, 10_000_000_000, SEM="acquire", SCOPE="gpu")
    writer.join()
    assert out[0]


@naiad.jit
def _hand_over(flag, payload, out, value):
    if tl.program_id(0) == 0:
        tl.atomic_poll(flag, 1, sem="acquire", scope="gpu")
        tl.store(out, tl.load(payload))
    else:
        tl.store(payload, value)
        tl.atomic_xchg(flag, 1, sem="release", scope="gpu")


def test_a_program_waits_for_a_later_one_on_the_gpu(gen):
    if running_on() != "cuda":
        pytest.skip("programs run in order here: the first would wait for ever for the second")
    flag, payload, out = (np.zeros(1, np.int32) for _ in range(3))
    value = int(_flag(gen, np.int32)[0])
    _hand_over[(2,)](flag, payload, out, value)
    assert flag[0] == 1 and out[0] == value


def test_a_poll_refuses_what_triton_refuses():
    flag, out = np.ones(1, np.int32), np.zeros(1, np.bool_)
    with kernel_error("acquire and relaxed semantics"):
        _poll[(1,)](flag, out, 1, 0, SEM="release", SCOPE="gpu")
    with kernel_error("integer elements with width"):
        _poll[(1,)](np.ones(1, np.float32), out, 1, 0, SEM="acquire", SCOPE="gpu")
    with kernel_error("timeout_ns must be non-negative"):
        _poll_negative_timeout[(1,)](flag, out)
    with kernel_error("pointer to a scalar"):
        _poll_block[(1,)](np.ones(4, np.int32), out)


@naiad.jit
def _poll_negative_timeout(flag, out):
    tl.store(out, tl.atomic_poll(flag, 1, timeout_ns=-1))


@naiad.jit
def _poll_block(flags, out):
    tl.store(out, tl.atomic_poll(flags + tl.arange(0, 4), 1))
