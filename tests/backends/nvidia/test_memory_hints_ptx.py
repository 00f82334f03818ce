"""tl.load's and tl.store's hints in the TTIR and the PTX, compiled for NVIDIA GPUs without one:
the cache operator (`ld.global.cg`, `st.global.cs`, ...), the eviction policy
(`.L1::evict_last`, PTX ISA 7.4 on sm_80) and a volatile load (`ld.volatile.global`), one
qualifier an access as PTX allows (volatile first, then the cache operator); ptxas assembles
every case. The hints change no value: the CPU copies random data with each of them."""

import re

import numpy as np
import pytest
from test_toolchain import assemble, needs_ptxas

import naiad
import naiad.language as tl


@naiad.jit
def _copy(
    dst,
    src,
    CACHE: tl.constexpr,
    EVICT: tl.constexpr,
    VOLATILE: tl.constexpr,
    STORE_CACHE: tl.constexpr,
    STORE_EVICT: tl.constexpr,
):
    offsets = tl.arange(0, 256)
    x = tl.load(src + offsets, cache_modifier=CACHE, eviction_policy=EVICT, volatile=VOLATILE)
    tl.store(dst + offsets, x, cache_modifier=STORE_CACHE, eviction_policy=STORE_EVICT)


# (load hints, store hints, the load's qualifiers, the store's, the load's TTIR attributes)
CASES = [
    (("", "", False), ("", ""), ".global", ".global", ""),
    ((".ca", "", False), (".wb", ""), ".global.ca", ".global.wb", "cacheModifier = ca"),
    ((".cg", "", False), (".cg", ""), ".global.cg", ".global.cg", "cacheModifier = cg"),
    ((".cs", "", False), (".cs", ""), ".global.cs", ".global.cs", "cacheModifier = cs"),
    ((".cv", "", False), (".wt", ""), ".global.cv", ".global.wt", "cacheModifier = cv"),
    (
        ("", "evict_last", False),
        ("", "evict_first"),
        ".global.L1::evict_last",
        ".global.L1::evict_first",
        "evictionPolicy = evict_last",
    ),
    (("", "evict_first", True), ("", ""), ".volatile.global", ".global", "isVolatile = true"),
    (
        (".cg", "evict_last", False),
        (".cs", "evict_first"),
        ".global.cg",
        ".global.cs",
        "cacheModifier = cg evictionPolicy = evict_last",
    ),
]


def _args(case):
    (cache, evict, volatile), (store_cache, store_evict) = case[:2]
    return dict(
        CACHE=cache,
        EVICT=evict,
        VOLATILE=volatile,
        STORE_CACHE=store_cache,
        STORE_EVICT=store_evict,
    )


def _qualifiers(ptx: str, instruction: str) -> set[str]:
    """The predicated `ld`s or `st`s of the PTX without their vector width and type."""
    found = set()
    for line in ptx.splitlines():
        words = line.split()
        if len(words) > 1 and words[0].startswith("@") and words[1].startswith(instruction + "."):
            found.add(re.sub(r"(\.v\d+)?\.b\d+$", "", words[1]))
    return found


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[2] + "-" + c[3])
def test_hints_are_ptx_qualifiers(case, arch, tmp_path):
    src, dst = np.zeros(256, np.float32), np.zeros(256, np.float32)
    compiled = _copy.warmup(dst, src, grid=(1,), target=f"cuda:{arch}", **_args(case))
    ptx, load, store = compiled.asm["ptx"], case[2], case[3]
    assert _qualifiers(ptx, "ld") == {"ld" + load}
    assert _qualifiers(ptx, "st") == {"st" + store}
    assert case[4] in compiled.asm["ttir"]
    assemble(ptx, arch, tmp_path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[2] + "-" + c[3])
def test_hints_change_no_value(case):
    src = np.random.default_rng(7).standard_normal(256).astype(np.float32)
    dst = np.full(256, np.nan, np.float32)
    _copy[(1,)](dst, src, **_args(case))
    np.testing.assert_array_equal(dst, src)
