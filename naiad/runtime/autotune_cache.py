"""What the autotuner keeps between processes, and the configs of one tuning compiled at once.

`autotune(..., cache_results=True)` stores each key's chosen config in the compile cache's
directory (`NAIAD_CACHE_DIR`, cache.py: written atomically, checked on reading, evicted with the
kernels), under a digest of everything that decides the choice: the kernel's source and the JIT
functions it calls (`JITFunction.cache_key`), the tuning key's values, the configs offered, the
device the arguments live on (the CPU's name and features, or the GPU's name and target) and
Naiad's own source. A second process with the same digest takes the stored config without
timing anything. An entry names its config by its text (`str(config)`): if no config of the
kernel has that text any more, the entry is not used.

Before timing, the configs of one tuning are compiled in parallel (`compile_in_parallel`):
forked worker processes, as many as the cores (at most one per config), each compile their share
with `warmup`, which writes the compiled kernels to the disk cache; the timing then loads them.
Nothing is sent between the processes but the exit status, so any kernel and any arguments work.
It is skipped where it cannot help or cannot be safe: one config, one core, no `fork`, other
Python threads running (one may be importing a module, which a child would find locked), the
interpreter, a disk cache that is ignored (`NAIAD_ALWAYS_COMPILE`), arguments on a GPU
(a forked child cannot use the parent's CUDA context), or inside a worker. A worker that fails
or outlives `_PARALLEL_TIMEOUT` is ignored (killed): the timing then compiles what is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time

from .. import knobs
from .cache import naiad_source_hash
from .compiler import disk_cache
from .launchers import device_of

_FILE = "best.json"
_PARALLEL_TIMEOUT = 600.0  # seconds; a worker still compiling by then is killed
_in_worker = False


def _jit_function(autotuner):
    fn = autotuner.fn
    while not hasattr(fn, "cache_key") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def device_name(named_args: dict) -> str:
    """The device the tuning's arguments live on, as a tuning result depends on it."""
    kind, index = device_of(named_args)
    if kind == "cuda":
        import torch

        major, minor = torch.cuda.get_device_capability(index)
        return f"cuda:{torch.cuda.get_device_name(index)}:sm_{major}{minor}"
    if kind != "cpu":
        return f"{kind}:{index}"
    from ..backends.cpu.target import host_target

    target = host_target()
    return f"cpu:{target.triple}:{target.name}:{target.features}"


def digest(autotuner, key: tuple, named_args: dict) -> str:
    """The name of a tuning result on disk (see the module docstring)."""
    parts = {
        "kernel": _jit_function(autotuner).cache_key,
        "key": [repr(value) for value in key],
        "configs": [str(config) for config in autotuner.configs],
        "device": device_name(named_args),
        "naiad": naiad_source_hash(),
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return "autotune-" + hashlib.sha256(text.encode()).hexdigest()


def load(autotuner, name: str):
    """The config stored under `name`, if one of the kernel's configs still has its text."""
    by_text = {str(config): config for config in autotuner.configs}

    def known(entry) -> bool:
        return json.loads(entry.files[_FILE])["config"] in by_text

    entry = disk_cache().get(name, validate=known)
    if entry is None:
        return None
    return by_text[json.loads(entry.files[_FILE])["config"]]


def store(name: str, config, timings: dict) -> None:
    """Keep the chosen `config` (and every config's timings, for reading) under `name`."""
    record = {
        "config": str(config),
        "timings": {str(c): list(t) for c, t in timings.items()},
    }
    disk_cache().put(name, {_FILE: json.dumps(record, sort_keys=True).encode()})


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _worth_forking(autotuner, named_args: dict, count: int) -> bool:
    if _in_worker or count < 2 or _cores() < 2 or not hasattr(os, "fork"):
        return False
    if threading.active_count() > 1:
        # A module another thread is importing when the fork happens stays locked in the
        # child, whose compile then waits on it for good (eight threads launching at once: a
        # child stuck importing the CPU back end, its parent waiting _PARALLEL_TIMEOUT).
        return False
    if not getattr(_jit_function(autotuner), "__naiad_jit__", False):
        return False  # a kernel interface that compiles nothing
    if knobs.interpret.get() or knobs.always_compile.get():
        return False
    if knobs.backend.get() not in ("", "auto", "cpu"):
        return False
    return device_of(named_args)[0] == "cpu"


def compile_in_parallel(autotuner, args, grid, kwargs, configs) -> int:
    """Compile `configs` in forked workers (see the module docstring); the number of workers
    that finished, 0 where it was skipped."""
    if not _worth_forking(autotuner, autotuner.nargs or {}, len(configs)):
        return 0
    workers = min(len(configs), _cores())
    shares = [configs[i::workers] for i in range(workers)]
    children = [_fork(autotuner, args, grid, kwargs, share) for share in shares]
    return _wait(children)


def _fork(autotuner, args, grid, kwargs, share) -> int:
    pid = os.fork()
    if pid:
        return pid
    global _in_worker
    _in_worker = True
    status = 0
    try:
        for config in share:
            try:
                autotuner.fn.run(*args, grid=grid, warmup=True, **kwargs, **config.all_kwargs())
            except Exception:
                status = 1  # the timing compiles it again and reports the error
    finally:
        os._exit(status)


def _wait(children: list[int]) -> int:
    deadline = time.monotonic() + _PARALLEL_TIMEOUT
    pending, finished = set(children), 0
    while pending:
        for pid in list(pending):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                pending.discard(pid)
                finished += os.waitstatus_to_exitcode(status) == 0
        if pending and time.monotonic() > deadline:
            for pid in pending:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            break
        if pending:
            time.sleep(0.005)
    return finished
