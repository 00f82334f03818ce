"""The TTIR stage in the disk cache: a process launching a kernel that an earlier one compiled
reads its optimized TTIR instead of running the frontend and the TTIR pipeline (issue 18).

    found = ttir_cache.load(jit_function, spec, language, insertions)   # a TTIRBuild or None
    ...
    ttir_cache.store(jit_function, spec, language, insertions, build)

The key is what the TTIR is made from, as far as a new process can tell without the frontend:
the kernel's source and that of the jit functions its globals name (kernel_source.cache_key),
its file and first line (locations are in the TTIR), the specialization, the language's rules
for the target (TargetInfo), the passes users added, and (cache.cache_key) Naiad's source.
What the key cannot see is checked when the entry is read, and the entry is a miss unless all
of it is as it was:

- the globals the kernel read (constexprs, dtypes, jit functions: `globals_used`) hold values
  of the same fingerprint (a jit function's source digest, a constexpr's repr);
- every source file the TTIR's locations name, and the files of the modules and functions the
  kernel's globals name (a helper called as `helpers.fn`), has the size and modification time
  it had (an edit anywhere in them compiles again).

The closures of the kernel and of the jit functions it reaches are in the key too, by the
same fingerprints (and plain numbers, strings and None by their repr): two kernels made by one
factory from the same source differ only there (`scale` in `def make(scale): @jit def k(...)`),
and the frontend reads each closure's values into the TTIR. A kernel whose fingerprints or files
cannot be known (made by `exec` from a string, a constexpr whose repr is an address, a closure
holding anything else) is not kept. The back end's stages are still looked up
under the full key (runtime/compiler.py), which holds the TTIR text itself.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import types

from ..language import core
from ..language import dtypes as t
from . import kernel_source
from .cache import cache_key
from .specialization import kernel_name

_LOCATION_FILE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":\d+:\d+\)')


def load(jit_function, spec, language, insertions, store):
    """The TTIRBuild of an earlier process (its `module` None: the text is what is kept), or
    None. `store` is the disk cache."""
    key = _key(jit_function, spec, language, insertions)
    if key is None:
        return None
    entry = store.get(key, _well_formed)
    if entry is None:
        return None
    used = _globals_now(entry.metadata["globals"])
    if used is None or not _files_unchanged(entry.metadata["files"]):
        store.discard(key)  # stale: the TTIR built now takes its place
        return None
    from .compiled_kernel import CompiledKernel
    from .compiler import TTIRBuild  # (the compiler imports this module)

    asm = {name: entry.files[name].decode() for name in ("source", "ttir")}
    metadata = entry.metadata["kernel"]
    kernel = CompiledKernel(metadata["name"], asm, metadata, globals_used=used)
    return TTIRBuild(kernel, None, spec)


def store(jit_function, spec, language, insertions, build, cache) -> None:
    """Keep `build`'s TTIR for later processes, when what decides it can be checked."""
    key = _key(jit_function, spec, language, insertions)
    if key is None:
        return
    fingerprints = []
    for (module, name), value in build.kernel.globals_used.items():
        fingerprint = _fingerprint(value)
        if fingerprint is None:
            return
        fingerprints.append([module, name, fingerprint])
    files = _stamps(_source_files(jit_function, build.kernel.asm["ttir"]))
    if files is None:
        return
    metadata = {"kernel": build.kernel.metadata, "globals": fingerprints, "files": files}
    asm = build.kernel.asm
    cache.put(key, {"source": asm["source"].encode(), "ttir": asm["ttir"].encode()}, metadata)


def _key(jit_function, spec, language, insertions) -> str | None:
    fn = getattr(jit_function, "fn", None)
    code = getattr(fn, "__code__", None)
    if code is None or not os.path.isfile(code.co_filename):
        return None  # made by exec: no file to watch
    closures = _closures(jit_function)
    if closures is None:
        return None  # a closure value without a fingerprint: its TTIR is not kept
    rules = {f.name: getattr(language, f.name) for f in dataclasses.fields(language) if f.compare}
    return "ttir-" + cache_key(
        {
            "ttir-of": kernel_source.cache_key(jit_function),
            "closures": closures,
            "at": [code.co_filename, code.co_firstlineno, fn.__qualname__],
            "spec": repr(spec.key),
            "name": kernel_name(jit_function, spec),  # `jit(repr=f)`'s f may change alone
            "language": rules,
            "passes": [insertion.fingerprint() for insertion in insertions],
        }
    )


def _closures(jit_function) -> list | None:
    """[function, name, fingerprint] of every closure cell of the kernel and of the jit
    functions its globals and closures name, transitively; None where a value has none."""
    found, pending, seen = [], [jit_function], set()
    while pending:
        fn = pending.pop().fn
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        cells = zip(fn.__code__.co_freevars, fn.__closure__ or ())
        named = [fn.__globals__.get(name) for name in fn.__code__.co_names]
        for name, cell in cells:
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not yet assigned: read when the kernel compiles
                return None
            fingerprint = _fingerprint(value) or _plain(value)
            if fingerprint is None:
                return None
            found.append([fn.__qualname__, name, fingerprint])
            named.append(value)
        pending += [v for v in named if getattr(v, "__naiad_jit__", False) and hasattr(v, "fn")]
    return found


def _plain(value) -> str | None:
    """A number's, string's or None's fingerprint: its type and repr."""
    if value is None or type(value) in (bool, int, float, complex, str):
        return f"{type(value).__name__} {value!r}"
    return None


def _well_formed(entry) -> bool:
    metadata = entry.metadata
    return (
        isinstance(metadata.get("kernel"), dict)
        and isinstance(metadata["kernel"].get("name"), str)
        and isinstance(metadata.get("globals"), list)
        and isinstance(metadata.get("files"), list)
        and {"source", "ttir"} <= set(entry.files)
    )


def _fingerprint(value) -> str | None:
    """What identifies a global's value across processes; None when nothing does."""
    if getattr(value, "__naiad_jit__", False) and hasattr(value, "fn"):
        return "jit " + kernel_source.cache_key(value)
    if isinstance(value, t.dtype):
        return "dtype " + str(value)
    if isinstance(value, core.constexpr):
        text = repr(value.value)
        return None if " at 0x" in text else f"constexpr {type(value.value).__name__} {text}"
    return None


def _globals_now(fingerprints: list) -> dict | None:
    """The globals of `fingerprints` as they are now, or None if one is gone or changed."""
    used = {}
    for module_name, name, fingerprint in fingerprints:
        module = sys.modules.get(module_name)
        if module is None or not hasattr(module, name):
            return None
        value = getattr(module, name)
        if _fingerprint(value) != fingerprint:
            return None
        used[(module_name, name)] = value
    return used


def _source_files(jit_function, ttir: str) -> set[str]:
    """The files the TTIR's locations name, the kernel's own, and those of the modules and
    functions its globals name."""
    fn = jit_function.fn
    files = {match.group(1) for match in _LOCATION_FILE.finditer(ttir)}
    files.add(fn.__code__.co_filename)
    for name in fn.__code__.co_names:
        value = fn.__globals__.get(name)
        value = getattr(value, "fn", value)  # a jit function's Python function
        if isinstance(value, types.ModuleType):
            path = getattr(value, "__file__", None)
        else:
            path = getattr(getattr(value, "__code__", None), "co_filename", None)
        if path:
            files.add(path)
    return files


def _stamps(files) -> list | None:
    """[path, size, modification time] of each file; None if one is not a file."""
    stamps = []
    for path in sorted(files):
        try:
            info = os.stat(path)
        except OSError:
            return None
        stamps.append([path, info.st_size, info.st_mtime_ns])
    return stamps


def _files_unchanged(stamps: list) -> bool:
    current = _stamps(path for path, _, _ in stamps)
    return current is not None and current == stamps
