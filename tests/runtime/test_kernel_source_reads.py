"""A kernel's source is read once per function object (source_locations.source_lines), as the
frontend parses it once: a compile computed the TTIR cache's key from it three times, each
reading and tokenizing the kernel's file through `inspect`, and the interpreter's rewrite read
it again."""

import inspect

import naiad
import naiad.language as tl
from naiad import source_locations
from naiad.runtime import kernel_source
from naiad.runtime.interpreter import kernel_runtime
from naiad.runtime.interpreter.rewrite import rewrite


@naiad.jit
def _helper(x):
    return x * 2


@naiad.jit
def _kernel(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, _helper(offs))


def test_keys_read_each_functions_source_once(monkeypatch):
    reads = []
    real = inspect.getsourcelines

    def counted(fn):
        reads.append(fn.__name__)
        return real(fn)

    kernel_source.source_text.cache_clear()
    source_locations.source_lines.cache_clear()
    monkeypatch.setattr(inspect, "getsourcelines", counted)
    keys = {kernel_source.cache_key(_kernel) for _ in range(3)}
    assert len(keys) == 1
    assert sorted(reads) == ["_helper", "_kernel"]
    rewrite(_kernel.fn, kernel_runtime)  # the interpreter's rewrite reads the same lines
    assert sorted(reads) == ["_helper", "_kernel"]
    changed = naiad.JITFunction(_kernel.fn)
    changed._unsafe_update_src(changed.src.replace("_helper(offs)", "offs + 1"))
    assert kernel_source.cache_key(changed) not in keys  # a new function: its own text
