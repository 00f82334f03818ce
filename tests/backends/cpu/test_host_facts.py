"""LLVM's facts of the host (host_facts.py): the stamp they are remembered under changes with
what LLVM reads (the CPUs' descriptions) and not with what changes while the machine runs (the
clock rate); what is remembered is what LLVM says; without llvmlite the CPU back end says so."""

import pytest

from naiad.backends.cpu import host_facts, target

CPUINFO = """processor\t: {n}
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9B14
cpu MHz\t\t: {mhz}
flags\t\t: fpu sse sse2 avx avx2 {extra}
bogomips\t: 5199.99
"""


def _stamp(tmp_path, monkeypatch, mhz: tuple, extra: str) -> str:
    path = tmp_path / f"cpuinfo-{len(list(tmp_path.iterdir()))}"
    path.write_text("\n".join(CPUINFO.format(n=n, mhz=m, extra=extra) for n, m in enumerate(mhz)))
    monkeypatch.setattr(host_facts, "_CPUINFO", str(path))
    return host_facts.host_stamp()


def test_the_stamp_follows_the_cpus_not_their_clock(tmp_path, monkeypatch):
    first = _stamp(tmp_path, monkeypatch, (2596.4, 3701.9), "avx512f")
    assert _stamp(tmp_path, monkeypatch, (1500.0, 2450.3), "avx512f") == first
    assert _stamp(tmp_path, monkeypatch, (2596.4, 3701.9), "") != first  # a feature less
    assert _stamp(tmp_path, monkeypatch, (2596.4,), "avx512f") != first  # a CPU less


def test_no_stamp_without_cpuinfo(tmp_path, monkeypatch):
    monkeypatch.setattr(host_facts, "_CPUINFO", str(tmp_path / "absent"))
    assert host_facts.host_stamp() is None


def test_the_facts_are_llvms():
    facts = host_facts.facts()
    assert facts == host_facts.ask_llvm() and host_facts.well_formed(facts)
    assert target.host_target().triple == facts["triple"]
    assert not host_facts.well_formed({"llvm": facts["llvm"], "triple": facts["triple"]})


def test_without_llvmlite_the_cpu_back_end_says_so(monkeypatch):
    monkeypatch.setattr(host_facts, "facts", lambda: {"llvm": "none"})
    target.host_target.cache_clear()
    try:
        with pytest.raises(ImportError, match="needs llvmlite"):
            target.host_target()
    finally:
        target.host_target.cache_clear()
