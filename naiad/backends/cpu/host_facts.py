"""What LLVM says of this host and of itself — the process's triple, the CPU's name and
features, LLVM's version — asked once and remembered, so a process that only loads cached
kernels never imports llvmlite's binding.

`host_target()` (target.py) and every cache key (runtime/cache.py) need these facts, and a cached
kernel's first launch needs nothing else of LLVM (elf_linker.py links its code). Asking LLVM
means importing llvmlite's binding, about 30 ms, so the runtime keeps the answer in the disk
cache (`use_store`), under a stamp of everything LLVM reads to give it:

- the CPUs as the OS describes them, `/proc/cpuinfo` without its clock-rate lines: the model,
  stepping and feature flags of each CPU, which come from the same CPUID words LLVM reads on
  x86-64 (with what the OS enables), and on AArch64 Linux from this very file, which LLVM reads;
- the llvmlite installed: its version, and the name, size, inode, modification and change
  times of every file of its binding (the LLVM library among them: a reinstall changes them);
- the machine's architecture and operating system.

Where the stamp cannot be taken (no `/proc/cpuinfo`: not Linux), LLVM is asked in each process.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys

_CPUINFO = "/proc/cpuinfo"
# Lines of /proc/cpuinfo that change while the machine runs (x86's current clock rate).
_CHANGING_LINES = (b"cpu MHz",)
# What a fact record holds, all strings ("llvm" alone where llvmlite is not installed).
FACTS = ("llvm", "triple", "cpu", "features")

# store(stamp, ask) -> facts: the runtime's memory of earlier processes' answers (None: ask).
_store: list = [None]


def use_store(store) -> None:
    """Remember facts with `store(stamp, ask)`, which returns the facts it holds for `stamp`,
    else `ask()`'s, kept for the next process."""
    _store[0] = store
    facts.cache_clear()


@functools.cache
def facts() -> dict[str, str]:
    """LLVM's version and its description of this host, from the store where it has them."""
    store = _store[0]
    stamp = host_stamp() if store is not None else None
    if stamp is None:
        return ask_llvm()
    return store(stamp, ask_llvm)


def llvm_version() -> str:
    """llvmlite's and LLVM's versions (`llvmlite 0.50.0, LLVM 22.1.0`), or `none` without
    llvmlite."""
    return facts()["llvm"]


def ask_llvm() -> dict[str, str]:
    """The facts, from LLVM itself (importing llvmlite's binding)."""
    try:
        from . import llvm_tools
    except ImportError:  # the disk cache works without llvmlite; compiled back ends need it
        return {"llvm": "none"}
    return {
        "llvm": llvm_tools.version(),
        "triple": llvm_tools.host_triple(),
        "cpu": llvm_tools.host_cpu_name(),
        "features": llvm_tools.host_cpu_features(),
    }


def well_formed(found) -> bool:
    """Whether a remembered record holds every fact, as strings."""
    if not isinstance(found, dict):
        return False
    keys = ("llvm",) if found.get("llvm") == "none" else FACTS
    return all(isinstance(found.get(key), str) for key in keys)


def host_stamp() -> str | None:
    """A digest of what LLVM's answers depend on (see the module's docstring), or None."""
    try:
        with open(_CPUINFO, "rb") as f:
            cpuinfo = f.read()
    except OSError:
        return None
    digest = hashlib.sha256(b"naiad host facts\n")
    for line in cpuinfo.splitlines():
        if not line.startswith(_CHANGING_LINES):
            digest.update(line + b"\n")
    uname = os.uname()
    digest.update(f"{sys.platform}\0{uname.sysname}\0{uname.machine}\n".encode())
    digest.update(_llvmlite_stamp().encode())
    return digest.hexdigest()


def _llvmlite_stamp() -> str:
    try:
        import llvmlite  # its package alone: a version string, no binding
    except ImportError:
        return "no llvmlite"
    binding = os.path.join(os.path.dirname(os.path.realpath(llvmlite.__file__)), "binding")
    lines = [f"llvmlite {llvmlite.__version__}"]
    with os.scandir(binding) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_file():
                st = entry.stat()
                fields = (entry.name, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
                lines.append("\0".join(map(str, fields)))
    return "\n".join(lines)
