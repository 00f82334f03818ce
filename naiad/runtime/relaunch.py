"""Triton's `CompiledKernel` surface on Naiad's compiled kernels: what libraries that keep and
relaunch compiled kernels read and call.

    compiled = kernel.warmup(x, y, out, n, BLOCK=1024, grid=(1,))
    compiled._init_handles()
    compiled.n_regs, compiled.n_spills, compiled.metadata.shared, compiled.asm["ttir"]
    compiled[grid](x, y, out, n, 1024)          # every argument, constexprs included
    compiled.run(gx, gy, gz, stream, compiled.function, compiled.packed_metadata,
                 launch_metadata, enter_hook, exit_hook, *args)   # a launcher's call

A relaunch goes through the kernel's JIT function with the compiled options: its declared
`tl.constexpr` parameters take the compiled values (Triton's launcher ignores the ones passed,
which may be placeholders), and every other argument is specialized again. Arguments that hold
every fact the kernel was compiled for run it, as Triton's launcher does, even where they hold
more (a pointer aligned where the compile did not know it); arguments that break one (an
unaligned pointer where the compile assumed alignment, an integer other than 1 where it took 1
as a constant) run code compiled for them instead, where Triton would run the kernel anyway
(specialization.launch_specialization). A CompiledKernel read back without its JIT function
compiles only.
"""

from __future__ import annotations

import hashlib
import json

from ..knobs import launch_settings
from .binder import Unbound, binding, clashes, define, runtime_names, tupled
from .specialization import relaunching


class TritonCompiledKernel:
    """Mixin for `CompiledKernel` (compiled_kernel.py), which provides `name`, `asm`, `metadata`,
    `binary`, and `fn`, `constants`, `options` (the JIT function, the constexpr values and the
    CompileOptions it was compiled with)."""

    # Triton's handles of a loaded module and function: Naiad loads at launch, per launcher.
    module = None
    function = None
    src = None  # what `triton.compile` compiled (an ASTSource), where it made this kernel

    @property
    def kernel(self):
        """The loadable binary (a cubin, CPU object code), as Triton names it."""
        return self.binary

    @property
    def hash(self) -> str:
        """A digest of the compiled code, its binary included, and its metadata (Triton: its
        cache key): kernels that differ in options their metadata does not hold (the
        pipeliner's `num_stages`) never share a file that tools key by it
        (triton/compiler/binary_files.py)."""
        text = json.dumps(self.metadata, sort_keys=True, default=repr)
        code = (text + self.asm.get("ttir", "")).encode()
        return hashlib.sha256(code + (self.binary or b"")).hexdigest()

    @property
    def packed_metadata(self) -> tuple:
        """What Triton's launcher reads: warps, CTAs, shared memory bytes."""
        options = self.options
        return (
            getattr(options, "num_warps", 4),
            getattr(options, "num_ctas", 1),
            self.metadata.get("shared", 0),
        )

    @property
    def shared(self) -> int:
        """Bytes of shared memory a program uses (0 on the CPU)."""
        return self.metadata.get("shared", 0)

    @property
    def num_warps(self) -> int:
        return getattr(self.options, "num_warps", 4)

    @property
    def num_ctas(self) -> int:
        return getattr(self.options, "num_ctas", 1)

    cluster_dims = (1, 1, 1)  # Naiad launches no thread-block clusters

    @property
    def n_max_threads(self) -> int:
        """Threads per program: warps x warp size on a GPU; one on the CPU."""
        if str(self.metadata.get("target", "")).startswith("cuda"):
            return getattr(self.options, "num_warps", 4) * 32
        return 1

    def _init_handles(self) -> None:
        """Check that this kernel can be launched (Triton loads the binary here; Naiad's
        launchers load it at the first launch, once per process). A kernel compiled from an
        IR file launches with its parameters' kinds (ir_file_launch.py)."""
        if self.fn is None and "parameters" not in self.metadata:
            raise RuntimeError(
                f"CompiledKernel `{self.name}` has no JIT function to launch it with "
                "(it was read back without one): it can be inspected, not launched"
            )

    def launch_metadata(self, grid, stream, *args):
        """Triton's launch hooks' metadata; Naiad has no launch hooks, so there is none."""
        return None

    @property
    def run(self):
        """The launcher: `run(gx, gy, gz, stream, function, packed_metadata, launch_metadata,
        enter_hook, exit_hook, *args)`, as Triton's generated launchers are called."""
        self._init_handles()
        return self._run

    def _run(self, gx, gy, gz, stream, function, packed, metadata, enter, exit_, *args):
        if enter is not None and metadata is not None:
            enter(metadata)
        self.relaunch((gx, gy, gz), args, stream)
        if exit_ is not None and metadata is not None:
            exit_(metadata)

    def __getitem__(self, grid):
        """`compiled[grid](*args, stream=None)`: launch this kernel again (module doc)."""
        self._init_handles()

        def runner(*args, stream=None):
            return self.relaunch(grid, args, stream)

        return runner

    def relaunch(self, grid, args, stream=None) -> None:
        """Launch over `grid` with every argument of the kernel in order (a constexpr's value
        is taken from the compile), or with the non-constexpr ones only. A call with every
        argument first tries the launch prepared for it (`_relauncher`: keyed as
        `kernel[grid]` keys a launch with the compiled options and constexprs, in one
        generated function); anything else goes through the kernel's launch entry with the
        options as keywords, which prepares the launch for the next call: libraries relaunch
        on every call (Inductor's launchers call `run`). `stream` is read by a kernel of an IR
        file only; a JIT function's launch takes the device's current stream."""
        if self.fn is None:
            from .ir_file_launch import launch_ir_kernel

            return launch_ir_kernel(self, grid, args, stream)
        plan = self.__dict__.get("_relaunch_plan") or self._plan_relaunch()
        every, runtime, constants, options, relaunch_key = plan
        fn = self.fn
        if len(args) == every:
            if relaunch_key is not None and _relauncher(fn, plan)(grid, *args):
                return
            values = list(args)
            for index, value, compiled in constants:
                if compiled:
                    values[index] = value
        elif len(args) == runtime:
            values = list(args)
            for index, value, _ in constants:
                values.insert(index, value)
        else:
            raise TypeError(
                f"{self.name}[grid]() takes the kernel's {every} arguments (or its "
                f"non-constexpr ones), got {len(args)}"
            )
        compiled = self.specialization
        relaunched = relaunching.set(None if compiled is None else (fn, compiled))
        try:
            (fn._entry or fn._make_entry())(grid, *values, **options)
        finally:
            relaunching.reset(relaunched)

    def _plan_relaunch(self) -> tuple:
        """What each relaunch reads, made once (plain data, so the kernel still pickles): the
        number of parameters, of non-constexpr ones, each constexpr's position, compiled value
        and whether the compile had one (else a call's own value is kept, None where it leaves
        the constexpr out), and the compiled options as launch keywords (except where a
        parameter has that name), and the key of the relaunch entry for those options and
        constants (None where a value is unhashable: such relaunches take the entry)."""
        params, compiled = self.fn.params, self.constants
        constants = tuple(
            (index, compiled.get(p.name), p.name in compiled)
            for index, p in enumerate(params)
            if p.is_constexpr
        )
        options = {
            name: getattr(self.options, name)
            for name in _RELAUNCH_OPTIONS
            if name not in self.fn.params_by_name  # a parameter of that name is the kernel's own
        }
        plan = (len(params), len(params) - len(constants), constants, options, None)
        try:  # the key of the relaunch entry: options and compiled constants (when hashable)
            relaunch_key = (tuple(options.items()), tuple(sorted(compiled.items())))
            hash(relaunch_key)
            plan = (*plan[:4], relaunch_key)
        except TypeError:
            pass
        self.__dict__["_relaunch_plan"] = plan
        return plan


def _relauncher(fn, plan: tuple):
    """The relaunch entry (make_relaunch) of `fn` for the options and compiled
    constants of `plan`, kept on `fn` by their key with the launch entry it was made for (a
    new one is made when torch is imported later); one that never launches where the entry
    has no keying of its own."""
    _, _, constants, options, key = plan
    made = fn.__dict__.get("_relaunch_entries")
    if made is None:
        made = fn.__dict__["_relaunch_entries"] = {}
    found = made.get(key)
    if found is not None and found[0] is fn._entry:
        return found[1]
    entry = fn._entry or fn._make_entry()
    values = {fn.params[index].name: value for index, value, compiled in constants if compiled}
    run = make_relaunch(fn, fn.do_not_specialize_on_alignment, fn._launches, options, values)
    run = run or _never
    made[key] = (entry, run)
    return run


def _never(grid, *args) -> None:
    """A relaunch entry that runs nothing: every relaunch takes the launch entry."""
    return None


# The compile options a relaunch passes again, so that it finds the kernel compiled with them.
_RELAUNCH_OPTIONS = (
    "num_warps",
    "num_ctas",
    "num_stages",
    "maxnreg",
    "debug",
    "asserts",
    "sanitize_overflow",
)


def make_relaunch(owner, align_free, launches: dict, options: dict, constants: dict):
    """`relaunch(grid, *args) -> the CompiledKernel run, or None`: the launch entry of
    `owner` for a compiled kernel relaunched (relaunch.py) with every parameter positionally,
    its launch `options` and its compiled `constants` (constexpr values by name, which replace
    the ones passed, as Triton's launcher ignores those). It keys a call as the entry keys one
    with those values and the options as keywords, so both find the launches prepared under
    one key, but keys the options once, here, instead of reading a keyword dict at every call.
    It returns None where no prepared launch ran the call: the caller takes the slow path.
    None where the entry has no keying of its own (parameter names that clash with the
    generated code's) or `options` is empty (the entry keys no options then)."""
    params = owner.params
    if clashes(params) or not options:
        return None
    signature, lines, env, keys, values = binding(params, align_free)
    names = tupled(runtime_names(params))
    env.update(
        __launches=launches,
        __launch_settings=launch_settings,
        __options_key=tuple(options.items()),  # what the entry's lines make of `**options`
        __Unbound=Unbound,
    )
    compiled = []
    for index, param in enumerate(params):
        if param.name in constants:
            env[f"__c{index}"] = constants[param.name]
            compiled.append(f"    {param.name} = __c{index}")
    source = [
        f"def __relaunch(__grid, {signature}):",
        *compiled,
        "    try:",
        "        __settings = __launch_settings()",
        "        __options = None  # keyed below, as the entry keys them",
        *("    " + line for line in lines),
        "        __settings = (__settings, __options_key)",
        f"        __key = {tupled(keys)}",
        "        __launch = __launches.get(__key)",
        "    except (__Unbound, TypeError):  # TypeError: an unhashable constexpr",
        "        return None",
        "    if __launch is not None:",
        f"        return __launch(__dims, {tupled(values)}, {names})",
        "    return None",
    ]
    return define("__relaunch", "\n".join(source) + "\n", env, "<naiad relaunch>", owner.__name__)
