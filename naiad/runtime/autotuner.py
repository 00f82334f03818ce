"""`@autotune` and `Config`: pick the fastest meta-parameters per tuning key, by measuring.

On a launch whose key (the values of the `key` arguments and the dtype of every argument that has
one) has not been seen, every config (after pruning) is compiled, in parallel where it can be,
and timed with `naiad.testing.do_bench`; the fastest is cached in memory under that key (and on
disk with `cache_results=True`: autotune_cache.py) and the kernel then runs once, for real, with
it. NAIAD_PRINT_AUTOTUNING prints every config's timings and the choice.

Timing runs the kernel many times on the caller's own arguments, so arguments the kernel
accumulates into must be named: `reset_to_zero` arguments are zeroed before every timed call and
before the real run, and `restore_value` arguments are copied before every timed call and restored
after it. Both NumPy arrays and torch tensors are handled. One difference from Triton: a user's
`pre_hook`/`post_hook` run in addition to the reset and restore, not instead of them.

Libraries subclass `Autotuner` through Triton's surface, kept here: `base_fn` (the Python
function under every wrapper), `nargs` (the positional arguments of the launch being tuned, by
name), `prune_configs(kwargs)`, `_bench(*args, config, **meta)` (one config's timings; `meta`
holds the launch's keywords, `grid` among them), `pre_hook(nargs, reset_only=False)` and
`post_hook(nargs, exception)` (the reset and restore around each timed call).
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
import warnings

import numpy as np

# PTXASError too, because triton.runtime.autotuner has it
from .. import knobs
from ..errors import AutotunerError, CompileTimeAssertionFailure, OutOfResources, PTXASError
from . import autotune_cache, autotune_report, bench
from .heuristics import Heuristics, heuristics
from .kernel_interface import KernelInterface
from .pickling import PicklesByReference

__all__ = ["Autotuner", "Config", "Heuristics", "autotune", "heuristics"]

_OPTIONS = ("num_warps", "num_ctas", "num_stages", "maxnreg")
_QUANTILES = (0.5, 0.2, 0.8)
_FAILED = (float("inf"),) * len(_QUANTILES)


class Config:
    """One point of the search space: meta-parameters (`kwargs`) and compilation options.

    `pre_hook(named_args)` runs before every launch with this config (timed or real), with the
    arguments and the config's values by name. Options of other vendors' back ends in `kwargs`
    (AMD's `waves_per_eu`, `matrix_instr_nonkdim`, `kpack`) are dropped by the launch, as by
    Triton's other back ends.
    """

    def __init__(
        self,
        kwargs,
        num_warps=4,
        num_stages=3,
        num_ctas=1,
        maxnreg=None,
        pre_hook=None,
        ir_override=None,
    ):
        self.kwargs = dict(kwargs)
        self.ir_override = ir_override  # a file of IR run in place of the source (ir_override.py)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        """The meta-parameters and the options that are set: what the kernel's `run` receives."""
        options = {name: getattr(self, name) for name in (*_OPTIONS, "ir_override")}
        return {**self.kwargs, **{k: v for k, v in options.items() if v is not None}}

    def _identity(self) -> tuple:
        options = tuple(getattr(self, name) for name in _OPTIONS)
        return (tuple(sorted(self.kwargs.items())), options, self.pre_hook, self.ir_override)

    def __eq__(self, other):
        if not isinstance(other, Config):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity())

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"{name}: {getattr(self, name)}" for name in _OPTIONS]
        if self.ir_override is not None:  # a config's text names its stored choice on disk
            parts.append(f"ir_override: {self.ir_override}")
        return ", ".join(parts)

    def __repr__(self):
        return f"Config({self})"


def _snapshot(x):
    return x.clone() if hasattr(x, "clone") else np.array(x, copy=True)


def _zero(x) -> None:
    if hasattr(x, "zero_"):
        x.zero_()
    else:
        x[...] = 0


def _copy_into(x, saved) -> None:
    if hasattr(x, "copy_"):
        x.copy_(saved)
    else:
        x[...] = saved


def _as_timings(result) -> tuple[float, ...]:
    """A benchmarker may return one number or several quantiles; tuples compare either way."""
    if isinstance(result, (list, tuple)):
        return tuple(float(t) for t in result)
    return (float(result),)


class Autotuner(KernelInterface, PicklesByReference):
    """A kernel that chooses its config per tuning key (see the module docstring)."""

    def __init__(
        self,
        fn,
        arg_names,
        configs,
        key,
        reset_to_zero=None,
        restore_value=None,
        pre_hook=None,
        post_hook=None,
        prune_configs_by=None,
        warmup=None,
        rep=None,
        use_cuda_graph=False,
        do_bench=None,
        cache_results=False,
    ):
        self.fn = fn
        self.arg_names = list(arg_names)
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        unknown = [
            n
            for n in self.keys + self.reset_to_zero + self.restore_value
            if n not in self.arg_names
        ]
        if unknown:
            raise ValueError(f"autotune names unknown arguments: {', '.join(unknown)}")
        self.user_pre_hook = pre_hook
        self.user_post_hook = post_hook
        # Triton's names for what was asked (torch refuses what it cannot trace by them).
        self.num_warmups, self.num_reps, self.use_cuda_graph = warmup, rep, use_cuda_graph
        self.user_defined_pre_hook, self.user_defined_post_hook = bool(pre_hook), bool(post_hook)
        self.restore_copies: dict = {}
        self.nargs: dict | None = None
        self.base_fn = fn
        while not inspect.isfunction(self.base_fn):
            self.base_fn = self.base_fn.fn
        prune = prune_configs_by or {}
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.top_k = self.configs_top_k = prune.get("top_k", 10)
        if not (
            isinstance(self.top_k, int)
            or (isinstance(self.top_k, float) and 0.0 < self.top_k <= 1.0)
        ):
            raise TypeError(f"top_k must be an int or a float in (0, 1], got {self.top_k!r}")
        budgets = {k: v for k, v in (("warmup", warmup), ("rep", rep)) if v is not None}
        self.do_bench = do_bench or functools.partial(bench.do_bench, **budgets)
        self.cache_results = _accept_options(use_cuda_graph, cache_results)
        self.cache: dict[tuple, Config] = {}
        # One tuning at a time per kernel: threads launching a new key at once would each time
        # every config, on their own arguments but at the same time, disturbing each other's
        # timings. Reentrant, for a kernel whose tuning launches it again.
        self._tuning = threading.RLock()
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, tuple[float, ...]] | None = None
        self.bench_time = 0.0

    def run(self, *args, grid=None, warmup=False, **kwargs):
        """Launch with the best config for this call's key, tuning first on a new key (`grid`
        is passed on to the wrapped kernel's `run`, which a JIT function needs).

        With `warmup=True`, only compile: every config that survives pruning is passed to the
        wrapped kernel's `run(..., warmup=True)`, and the list of its results is returned.
        """
        self._check_conflicts(kwargs)
        positional = dict(zip(self.arg_names, args))
        self.nargs = positional
        if warmup:
            configs = self.prune_configs(kwargs)
            return [
                self.fn.run(*args, grid=grid, warmup=True, **kwargs, **c.all_kwargs())
                for c in configs
            ]
        if len(self.configs) == 1:
            config = self.configs[0]
        else:
            key = self._key(positional, kwargs)
            config = self.cache.get(key)
            if config is None:
                with self._tuning:  # a thread tuning this key: wait and take its choice
                    config = self.cache.get(key)
                    if config is None:
                        self.nargs = positional
                        config = self.cache[key] = self._tune(args, grid, kwargs, key)
        self.best_config = config
        if config.pre_hook is not None:
            config.pre_hook({**positional, **kwargs, **config.all_kwargs()})
        return self.fn.run(*args, grid=grid, warmup=False, **kwargs, **config.all_kwargs())

    def _check_conflicts(self, kwargs) -> None:
        tuned = set().union(*(c.all_kwargs().keys() for c in self.configs))
        conflicts = sorted(tuned & kwargs.keys())
        if conflicts:
            raise ValueError(
                f"Conflicting meta-parameters: {', '.join(conflicts)}. Make sure "
                "that you don't re-define auto-tuned symbols."
            )

    def _key(self, positional, kwargs) -> tuple:
        named = {**positional, **{k: v for k, v in kwargs.items() if k in self.arg_names}}
        key = [named[name] for name in self.keys if name in named]
        key += [str(arg.dtype) for arg in named.values() if hasattr(arg, "dtype")]
        return tuple(key)

    def prune_configs(self, kwargs) -> list[Config]:
        """Apply `early_config_prune`, then keep the `top_k` best configs by `perf_model` (a
        float `top_k` is that share of the configs left after the early prune, at least one,
        as in Triton's main); the launch's positional arguments are `self.nargs` (Triton's
        signature)."""
        named_args = self.nargs or {}
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(self.configs, named_args, **kwargs))
            if not configs:
                raise AutotunerError("early_config_prune removed every config; keep at least one")
        if self.perf_model is not None:
            top_k = self.top_k
            if isinstance(top_k, float):
                top_k = max(1, int(len(configs) * top_k))
            if len(configs) > top_k:
                estimate = {
                    c: self.perf_model(**named_args, **kwargs, **c.all_kwargs()) for c in configs
                }
                configs = sorted(configs, key=estimate.__getitem__)[:top_k]
        return configs

    def _tune(self, args, grid, kwargs, key=()) -> Config:
        """The best config: stored on disk by an earlier process, or timed."""
        keeps = self.cache_results or knobs.cache_autotuning.get()  # Triton's autotuning.cache
        stored = autotune_cache.digest(self, key, self.nargs) if keeps else None
        best = autotune_cache.load(self, stored) if stored else None
        start = time.perf_counter()
        self.configs_timings = None
        configs = self.prune_configs(kwargs) if best is None else [best]
        if best is None and len(configs) == 1:  # one left: nothing to time, as in Triton
            best, self.configs_timings = configs[0], {}
        elif best is None:
            autotune_cache.compile_in_parallel(self, args, grid, kwargs, configs)
            timings = {
                c: _as_timings(self._bench(*args, config=c, grid=grid, **kwargs)) for c in configs
            }
            self.configs_timings = timings
            best = min(timings, key=timings.__getitem__)
            if stored:
                autotune_cache.store(stored, best, timings)
        self.bench_time = time.perf_counter() - start
        self.pre_hook({**self.nargs, **kwargs, **best.all_kwargs()}, reset_only=True)
        timed = bool(self.configs_timings)
        autotune_report.tuned(self, key, best, self.configs_timings, self.bench_time, timed)
        return best

    def pre_hook(self, nargs, reset_only=False) -> None:
        """Before a timed call: zero the `reset_to_zero` arguments and, unless `reset_only`,
        copy the `restore_value` ones; then the user's pre_hook."""
        for name in self.reset_to_zero:
            if nargs.get(name) is not None:
                _zero(nargs[name])
        if reset_only:
            return
        self.restore_copies = {
            name: _snapshot(nargs[name])
            for name in self.restore_value
            if nargs.get(name) is not None
        }
        if self.user_pre_hook is not None:
            self.user_pre_hook(nargs)

    def post_hook(self, nargs, exception) -> None:
        """After a timed call: restore the `restore_value` arguments; then the user's
        post_hook, told the exception the call raised (None)."""
        for name, copy in self.restore_copies.items():
            _copy_into(nargs[name], copy)
        self.restore_copies = {}
        if self.user_post_hook is not None:
            self.user_post_hook(nargs, exception=exception)

    def _bench(self, *args, config, **meta) -> tuple[float, ...]:
        """Time one config (`meta`: the launch's keywords, `grid` among them); a config the
        target cannot compile scores infinity."""
        current = {**meta, **config.all_kwargs()}
        nargs = {**(self.nargs or dict(zip(self.arg_names, args))), **current}

        def kernel_call():
            if config.pre_hook is not None:
                config.pre_hook(nargs)
            self.pre_hook(nargs)
            try:
                self.fn.run(*args, warmup=False, **current)
            except Exception as error:
                self.post_hook(nargs, exception=error)
                raise
            self.post_hook(nargs, exception=None)

        try:
            return _as_timings(self.do_bench(kernel_call, quantiles=_QUANTILES))
        except (OutOfResources, CompileTimeAssertionFailure, PTXASError):
            return _FAILED


def _accept_options(use_cuda_graph: bool, cache_results: bool) -> bool:
    """Warn that CUDA graphs are not used for timing; whether results are kept on disk."""
    if use_cuda_graph:
        warnings.warn(
            "autotune(use_cuda_graph=True) is accepted for Triton compatibility; "
            "configs are still timed with do_bench",
            stacklevel=3,
        )
    return bool(cache_results)


def autotune(
    configs,
    key,
    prune_configs_by=None,
    reset_to_zero=None,
    restore_value=None,
    pre_hook=None,
    post_hook=None,
    warmup=None,
    rep=None,
    use_cuda_graph=False,
    do_bench=None,
    cache_results=False,
):
    """Decorator over a kernel: tune `configs` per value of the `key` arguments.

    Args:
        configs: the `Config`s to choose from.
        key: names of arguments whose values select the tuning entry (dtypes always do).
        prune_configs_by: {"early_config_prune": f(configs, named_args, **kwargs) -> configs,
            "perf_model": f(**args, **meta) -> estimated time, "top_k": int or fraction}.
        reset_to_zero: arguments zeroed before each timed call and before the real run.
        restore_value: arguments restored from a copy before each timed call and the real run.
        pre_hook: f(named_args) before each timed call.
        post_hook: f(named_args, exception) after each timed call.
        warmup, rep: time budgets in ms for `naiad.testing.do_bench`.
        do_bench: a replacement benchmarker, called as do_bench(fn, quantiles=(0.5, 0.2, 0.8)).
        use_cuda_graph: accepted for compatibility (a warning says configs are timed
            without CUDA graphs).
        cache_results: keep each key's choice on disk, so that later processes do not time
            again (autotune_cache.py).
    """

    def decorator(fn):
        return Autotuner(
            fn,
            fn.arg_names,
            configs,
            key,
            reset_to_zero,
            restore_value,
            pre_hook=pre_hook,
            post_hook=post_hook,
            prune_configs_by=prune_configs_by,
            warmup=warmup,
            rep=rep,
            use_cuda_graph=use_cuda_graph,
            do_bench=do_bench,
            cache_results=cache_results,
        )

    return decorator
