"""The trip of a kernel, assembled in one place: frontend → TTIR pipeline → a back end's stages,
behind one disk cache. Launches, `warmup()`, the tools and the tests all compile here.

    kernel = compile_kernel(jit_function, bound_arguments, "cpu", options)

    1. specialize the arguments (specialization.py);
    2. find the back end of the target name (backends/registry.py) and the language's rules
       for that target;
    3. frontend: Python AST → TTIR; the TTIR pipeline (`TTIR_PIPELINE`, with the passes users
       add: passes/extensions.py);
    4. the cache key: the optimized TTIR (which holds the specialization), what the back end
       says decides its code (`cache_facts`), the user passes; Naiad's source and LLVM's
       version are added by cache.cache_key;
    5. on a miss, the back end's stages in order, each writing its `asm`; the entry stores
       every stage and the metadata a launch reads;
    6. with NAIAD_DUMP_DIR, every stage's text is written out (NAIAD_DUMP_PASSES: after every
       pass too).

Any target compiles without its device: arguments may be arrays, torch dtypes or Triton
signature strings (`'*fp16'`, `'i32'`); pointers given as types are assumed 16-byte aligned.

Compiles are serialized process-wide (compile_lock.py), which is what makes launching from
many threads safe; while one runs, the old generation's garbage collections wait for its
end (young_gc.py). What a compile gives is a CompiledKernel (compiled_kernel.py); what
NAIAD_DUMP_DIR writes of it, compile_dumps.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .. import compile_profile, knobs
from ..backends import registry
from ..backends.registry import Compilation, CompileOptions
from . import compile_listener, jit_hooks, ttir_cache
from .cache import Cache, cache_key
from .compile_dumps import dump_stages, pass_dumps, pass_printer, printing_passes
from .compile_listener import CompileTimes, microseconds_since
from .compile_lock import compile_lock
from .compiled_kernel import CompiledKernel
from .launch_options import extern_lib_pairs
from .specialization import Specialization, kernel_name
from .young_gc import young_collections_only

# Triton's make_ttir, in its order (rewrite-tensor-pointer is not needed: block pointers are
# already pointer blocks when the frontend emits them).
TTIR_PIPELINE = ("inline", "canonicalize", "combine", "cse", "symbol-dce", "loop-unroll")

# What `build_ttir` and `compile_ttir` compile for when no target is named.
DEFAULT_TTIR_TARGET = "cuda:sm_90a"


@dataclass
class TTIRBuild:
    """A kernel's optimized TTIR: the module itself and its CompiledKernel (text, metadata and
    the globals its code was built with)."""

    kernel: CompiledKernel
    module: object
    spec: Specialization
    # The jit functions the `inline` pass inlined, read before it (debug_info.function_ranges):
    # the back ends' line info names their code's subprograms.
    functions: list = ()


def compile_kernel(
    jit_function, bound: dict, target=None, debug: bool = False, options=None, site=None
) -> CompiledKernel:
    """Compile `jit_function` for the arguments `bound` and the target named `target` (None:
    'cuda:sm_90a'), as far as its back end goes: TTIR, then every stage of the back end.
    `options` are the launch options (num_warps, num_ctas, maxnreg; None: the defaults);
    `site` (a jit_hooks.CompileSite) calls the JIT hooks, for a launch or a warmup."""
    spec = Specialization.of(jit_function, bound)
    options = compile_options(options, debug)
    return compile_specialization(jit_function, spec, target, options, site)


def compile_options(options=None, debug: bool = False) -> CompileOptions:
    """The options the stages read, from a launch's options (any object with Triton's names)."""
    return CompileOptions(
        num_warps=getattr(options, "num_warps", 4),
        num_ctas=getattr(options, "num_ctas", 1),
        num_stages=getattr(options, "num_stages", 3),
        maxnreg=getattr(options, "maxnreg", None),
        debug=bool(debug),
        enable_fp_fusion=_fp_fusion(getattr(options, "enable_fp_fusion", None)),
        asserts=bool(getattr(options, "asserts", False)),
        sanitize_overflow=bool(getattr(options, "sanitize_overflow", True)),
        extern_libs=extern_lib_pairs(getattr(options, "extern_libs", ())),
        **debug_info_options(),
    )


def debug_info_options() -> dict:
    """The options of the source lines and variables a compile emits (the settings
    NAIAD_DISABLE_LINE_INFO, NAIAD_EXTRACT_DI_LOCAL_VARIABLES), read at a compile's start."""
    return {
        "line_info": not knobs.disable_line_info.get(),
        "local_variables": knobs.extract_di_local_variables.get(),
    }


def _fp_fusion(asked: bool | None) -> bool:
    """A launch's `enable_fp_fusion`, else the default setting (Triton's
    `knobs.language.default_fp_fusion`)."""
    return knobs.default_fp_fusion.get() if asked is None else bool(asked)


def compile_specialization(
    jit_function, spec: Specialization, target, options: CompileOptions, site=None
) -> CompiledKernel:
    """The trip of the module doc for one specialization (steps 2-6); see `begin_compile`."""
    begun = begin_compile(jit_function, spec, target, options, site)
    return begun if isinstance(begun, CompiledKernel) else begun.finish()


def begin_compile(
    jit_function, spec: Specialization, target, options: CompileOptions, site=None
) -> CompiledKernel | UnfinishedCompile:
    """Steps 2-4 and the cache lookup: the CompiledKernel on a hit, else the compile with its
    optimized TTIR, whose `finish()` runs the back end's stages (step 5). A caller that has
    the TTIR can decide where the stages run before paying for them (cpu_tiering.py). Given
    the `site` of a launch or warmup (jit_hooks.CompileSite), the JIT cache hook is called
    first (it may raise CompileSkipped) and the post-compile hook once the kernel is made."""
    hooked = None
    if site is not None:
        hooked = jit_hooks.before_compile(jit_function, spec, target or "", options, site)
    backend, parsed = registry.lookup(target or DEFAULT_TTIR_TARGET)
    insertions = _insertions_for(jit_function)
    with (
        compile_lock,
        young_collections_only(),
        compile_profile.compiling(_name(jit_function), backend.name),
    ):  # (module doc)
        language = backend.language_target(parsed, options)
        started = time.perf_counter_ns()
        build = _build_or_read(jit_function, spec, language, insertions)
        times = CompileTimes(ir_initialization=microseconds_since(started))
        key = cache_key(
            {
                "backend": backend.name,
                "ttir": build.kernel.asm["ttir"],
                "facts": backend.cache_facts(parsed, options),
                "debug_info": [options.line_info, options.local_variables],
                "passes": [insertion.fingerprint() for insertion in insertions],
            }
        )
        unfinished = UnfinishedCompile(
            jit_function, spec, backend, parsed, options, insertions, language, build, key, times
        )
        unfinished.hooked = hooked
        with compile_profile.stage("cache lookup"):
            entry = None if _skips_caches() else disk_cache().get(key, _well_formed)
        if entry is None:
            return unfinished
        return unfinished.from_entry(entry, cache_hit=True)


@dataclass
class UnfinishedCompile:
    """A compile that missed the disk cache, stopped after its optimized TTIR (`ttir`)."""

    jit_function: object
    spec: Specialization
    backend: object
    target: object
    options: CompileOptions
    insertions: list
    language: object
    build: TTIRBuild
    key: str
    times: CompileTimes  # what the compilation listener is told (compile_listener.py)
    hooked: dict | None = None  # the post-compile hook's arguments (jit_hooks.py)

    @property
    def ttir(self) -> str:
        return self.build.kernel.asm["ttir"]

    def with_module(self) -> TTIRBuild:
        """The build, its TTIR module made again from the source where the TTIR was read from
        the cache (the stages need the module)."""
        if self.build.module is None:
            started = time.perf_counter_ns()
            self.build = _build(self.jit_function, self.spec, self.language, self.insertions)
            self.times.ir_initialization += microseconds_since(started)
        return self.build

    def finish(self, background: bool = False, between_stages=None) -> CompiledKernel:
        """Step 5: the back end's stages, stored in the disk cache. In the `background`, a
        compile gives way between its stages to compiles other threads wait for, then calls
        `between_stages()` (when given) without the compile lock, which may wait or stop it
        by raising: nothing is stored."""
        give_way = None
        if background:

            def give_way():
                compile_lock.give_way()
                if between_stages is not None:
                    with compile_lock.released():
                        between_stages()

        where = f"{self.backend.name}, in the background" if background else self.backend.name
        stages = self.backend.stages(self.target, self.options)  # (loads them: outside the lock)
        with (
            compile_lock,
            young_collections_only(),
            compile_profile.compiling(_name(self.jit_function), where),
        ):
            build, times = self.with_module(), self.times
            files, metadata = _run_stages(
                build,
                self.backend,
                self.target,
                self.options,
                self.insertions,
                stages,
                give_way,
                times.lowering_stages,
            )
            started = time.perf_counter_ns()
            if knobs.always_compile.get():  # this compile's code, over what an earlier one kept
                disk_cache().discard(self.key)
            entry = disk_cache().put(self.key, files, metadata)
            times.store_results = microseconds_since(started)
            return self.from_entry(entry, cache_hit=False)

    def from_entry(self, entry, cache_hit: bool) -> CompiledKernel:
        """The CompiledKernel of this specialization, its stages read from a cache `entry`
        (`cache_hit`: found there, rather than just stored)."""
        kernel, backend = self.build.kernel, self.backend
        stages = {
            name: data.decode() if name in entry.metadata["text_stages"] else data
            for name, data in entry.files.items()
        }
        kernel.asm = backend.kernel_asm({**kernel.asm, **stages}, self.target)
        kernel.metadata.update(entry.metadata["kernel"])
        kernel.binary = stages.get(backend.binary_stage) if backend.binary_stage else None
        kernel.fn, kernel.constants = self.jit_function, dict(self.spec.constexprs)
        kernel.options, kernel.specialization = self.options, self.spec
        dump_stages(kernel, self.spec)
        jit_hooks.after_compile(self.hooked)
        compile_listener.tell(self.jit_function, self.spec, kernel, self.times, cache_hit)
        return kernel


def _build_or_read(jit_function, spec, language, insertions) -> TTIRBuild:
    """Step 3: the TTIR an earlier process kept (ttir_cache.py: its module None), else built
    and kept for later ones."""
    with compile_profile.stage("TTIR cache lookup"):
        found = None
        if not _skips_caches():
            found = ttir_cache.load(jit_function, spec, language, insertions, disk_cache())
    if found is not None:
        return found
    build = _build(jit_function, spec, language, insertions)
    ttir_cache.store(jit_function, spec, language, insertions, build, disk_cache())
    return build


def _insertions_for(jit_function) -> list:
    """The passes users added for `jit_function`; the compiler's modules load here, before the
    compile lock (a launch the interpreter runs may want it meanwhile: they take ~0.1 s)."""
    from .. import passes  # noqa: F401  (registers the passes)
    from ..frontend import translate  # noqa: F401
    from ..passes import extensions

    return extensions.insertions_for(jit_function)


def _name(jit_function) -> str:
    return getattr(jit_function, "__name__", "kernel")


def _skips_caches() -> bool:
    """Whether compiles skip the caches: NAIAD_ALWAYS_COMPILE, NAIAD_PRINT_PASSES (passes run)."""
    return knobs.always_compile.get() or printing_passes()


def _well_formed(entry) -> bool:
    """Whether a cache entry holds what `compile_specialization` reads (else it is a miss)."""
    metadata = entry.metadata
    return isinstance(metadata.get("kernel"), dict) and set(metadata["text_stages"]) <= set(
        entry.files
    )


def _run_stages(
    build: TTIRBuild, backend, target, options, insertions, stages, give_way=None, timed=None
) -> tuple[dict, dict]:
    """The files and metadata of a cache entry: every stage run on the TTIR module (calling
    `give_way()`, when given, before each; appending (name, microseconds) of each to
    `timed`, when given)."""
    dump = pass_dumps(build.kernel.name, build.kernel.metadata["target"], build.spec, backend.name)
    c = Compilation(build.module, target, options, {}, insertions=insertions, dump=dump)
    c.unlocked = compile_lock.released  # (held more deeply, the lock stays held)
    c.print_before = pass_printer()
    c.notes["functions"] = list(build.functions)
    for stage in stages:
        if give_way is not None:
            give_way()
        started = time.perf_counter_ns()
        with compile_profile.stage(stage.name):
            stage.run(c)
        if timed is not None:
            timed.append((stage.name, microseconds_since(started)))
    files = {}
    for name, value in c.asm.items():
        files[name] = value.encode() if isinstance(value, str) else bytes(value)
    text = sorted(name for name, value in c.asm.items() if isinstance(value, str))
    return files, {"kernel": c.metadata, "text_stages": text}


def build_ttir(
    jit_function, bound: dict, target=None, debug: bool = False, num_warps: int = 4
) -> TTIRBuild:
    """Steps 1-3 only: the optimized TTIR module of one specialization for `target` (None:
    'cuda:sm_90a'), with `num_warps` as the launch's (`tl.extra.cuda.num_warps()` reads it).
    For tests and tools that take the module further themselves."""
    backend, parsed = registry.lookup(target or DEFAULT_TTIR_TARGET)
    options = CompileOptions(num_warps=num_warps, debug=bool(debug))
    spec = Specialization.of(jit_function, bound)
    insertions = _insertions_for(jit_function)
    with (
        compile_lock,
        young_collections_only(),
        compile_profile.compiling(_name(jit_function), backend.name),
    ):
        return _build(jit_function, spec, backend.language_target(parsed, options), insertions)


def frontend_ttir(jit_function, bound: dict, target=None, debug: bool = False):
    """Step 3's code generator alone: the TTIR module (`builtin.module`) it makes for one
    specialization on `target` (None: 'cuda:sm_90a'), before any pass, calls kept. What
    FileCheck tests of the frontend read (triton._filecheck)."""
    spec, options = Specialization.of(jit_function, bound), CompileOptions(debug=bool(debug))
    return frontend_module(jit_function, spec, target or DEFAULT_TTIR_TARGET, options)


def frontend_module(jit_function, spec: Specialization, target: str, options: CompileOptions):
    """`frontend_ttir` for a specialization and options made: the module or the frontend's
    error (a launch the interpreter runs first checks with it: cpu_compile_from_source.py)."""
    from ..frontend.translate import generate

    backend, parsed = registry.lookup(target)
    language = backend.language_target(parsed, options)
    with compile_lock, young_collections_only():
        name = kernel_name(jit_function, spec)
        return generate(
            jit_function, spec.signature, spec.constexprs, spec.attrs, language, name=name
        ).module


def compile_ttir(jit_function, bound: dict, target=None, debug: bool = False) -> CompiledKernel:
    """The TTIR of `jit_function` specialized for `bound`, after the TTIR pipeline."""
    build = build_ttir(jit_function, bound, target, debug)
    dump_stages(build.kernel, build.spec)
    return build.kernel


def _build(jit_function, spec: Specialization, language, insertions) -> TTIRBuild:
    """Frontend and TTIR pipeline (the caller holds the compile lock)."""
    from ..backends.debug_info import function_ranges
    from ..frontend.translate import generate
    from ..ir.printer import print_module
    from ..passes import extensions
    from ..passes.pipeline import run_pipeline

    with compile_profile.stage("AST → TTIR"):
        name = kernel_name(jit_function, spec)
        result = generate(
            jit_function, spec.signature, spec.constexprs, spec.attrs, language, name=name
        )
        source_ttir = print_module(result.module)
        functions = function_ranges(result.module)  # before `inline` (TTIRBuild.functions)
    pipeline = extensions.extend("ttir", TTIR_PIPELINE, insertions)
    dump = pass_dumps(result.name, language.name, spec, "ttir")
    with compile_profile.stage("TTIR passes"):
        run_pipeline(pipeline, result.module, after_each=dump, before_each=pass_printer())
        asm = {"source": source_ttir, "ttir": print_module(result.module)}
    metadata = {
        "name": result.name,
        "target": language.name,
        "signature": spec.signature,
        "constexprs": {k: repr(v) for k, v in spec.constexprs.items()},
        "debug": language.debug,
    }
    kernel = CompiledKernel(result.name, asm, metadata, globals_used=result.globals_used)
    return TTIRBuild(kernel, result.module, spec, functions)


_cache: Cache | None = None


def disk_cache() -> Cache:
    """This process's compile cache (it follows `NAIAD_CACHE_DIR` as it changes)."""
    global _cache
    if _cache is None:
        _cache = Cache()
    return _cache
