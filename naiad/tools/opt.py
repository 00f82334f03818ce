"""`naiad-opt`: read MLIR text, run passes, print the module — Naiad's `triton-opt`.

    naiad-opt kernel.ttir                      # parse, verify, print back
    naiad-opt kernel.ttir -p canonicalize,cse  # run passes in order
    naiad-opt k.ttir -p "convert-to-ttgir{num-warps=8 target=cuda:80},coalesce"   # with options
    cat kernel.ttir | naiad-opt - --generic    # every op in MLIR's generic form
    naiad-opt kernel.ttir --no-locations -o out.mlir
    naiad-opt --list-passes                    # every pass: its one-line summary and options
    naiad-opt k.ttir --load my_passes -p my-pass   # passes registered by your own module
    naiad-opt invalid.mlir --split-input-file --verify-diagnostics   # errors as expected

A syntax error, an unknown op or pass, or IR the verifier rejects is reported on one line,
`FILE:line:col: error: message`, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import inspect
import os
import sys

from .. import dialects, passes  # noqa: F401  (registers the ops, their syntax, the passes)
from ..backends.cpu import (
    carried_reductions,  # noqa: F401  (cpu-carried-reductions)
    fuse_elementwise,  # noqa: F401  (cpu-fuse-elementwise)
    sequence_partitions,  # noqa: F401  (cpu-sequence-partitions)
    versioned_checks,  # noqa: F401  (cpu-versioned-checks)
    widen_dot_operands,  # noqa: F401  (cpu-widen-dot-operands)
)
from ..backends.nvidia import passes as nvidia_passes  # noqa: F401  (the TTGIR passes)
from ..dialects import syntax  # noqa: F401
from ..errors import NaiadError
from ..ir import IRError, PassManager, pass_class, registered_passes, verify
from ..ir.parser import parse_module
from ..ir.printer import print_module
from ..middle import linalg  # noqa: F401  (registers tt-to-linalg)
from .diagnostics import split_input, unmet_expectations


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="naiad-opt", description="Parse MLIR text, run Naiad passes, print the result."
    )
    parser.add_argument("input", nargs="?", help="an MLIR file, or - for standard input")
    parser.add_argument(
        "-p",
        "--passes",
        default="",
        metavar="PASS[,PASS...]",
        help="passes to run, in order (see --list-passes)",
    )
    parser.add_argument("-o", "--output", default="-", help="where to write (default: stdout)")
    parser.add_argument("--generic", action="store_true", help="print every op in generic form")
    parser.add_argument(
        "--no-locations", action="store_true", help="print without loc(...) and aliases"
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="do not verify after parsing and each pass"
    )
    parser.add_argument(
        "--list-passes", action="store_true", help="list the passes and their options, and exit"
    )
    parser.add_argument(
        "--split-input-file",
        action="store_true",
        help="process each part between `// -----` lines as a file of its own",
    )
    parser.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="check the errors against `// expected-error @+N {{...}}` comments instead of "
        "reporting them",
    )
    parser.add_argument(
        "--load",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (a dotted name or a .py file) first: the passes it registers run "
        "like Naiad's own (repeatable)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        for module in args.load:
            load_plugin(module)
    except _Failure as error:
        print(error, file=sys.stderr)
        return 1
    if args.list_passes:
        print(describe_passes())
        return 0
    if args.input is None:
        parser.error("an input file is needed (or - for standard input)")
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else _read(args.input)
    except _Failure as error:
        print(error, file=sys.stderr)
        return 1
    chunks = split_input(text) if args.split_input_file else [text]
    outputs, errors = [], []
    for chunk in chunks:
        try:
            outputs.append(_process(chunk, filename, args))
        except (IRError, NaiadError, _Failure) as error:
            errors.append(_one_line(error))
    if args.verify_diagnostics:
        errors = unmet_expectations(chunks, errors, filename)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    output = "// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(output)
    else:
        with open(args.output, "w") as f:
            f.write(output)
    return 0


def _process(text: str, filename: str, args) -> str:
    """Parse, verify, run the passes of `args` on one input and print the result."""
    module = parse_module(text, filename)
    pipeline = pipeline_of(args.passes, filename)
    if not args.no_verify:
        verify(module)
    PassManager(pipeline, verify_each=not args.no_verify, expected=(NaiadError,)).run(module)
    return print_module(module, generic=args.generic, locations=not args.no_locations)


def pipeline_of(named: str, filename: str) -> list:
    """The pipeline `-p` names (`named`: `a,b{key=value}`): each pass's name, or the pass with
    its options; an unknown pass is a diagnostic that names the known ones."""
    specs = [spec.strip() for spec in named.split(",") if spec.strip()]
    unknown = [s for s in specs if s.partition("{")[0] not in registered_passes()]
    if unknown:
        known = ", ".join(registered_passes())
        raise _Failure(f"{filename}: error: unknown pass '{unknown[0]}' (known: {known})")
    return [_pass_with_options(spec, filename) for spec in specs]


def describe_passes() -> str:
    """Every registered pass: its name, the first paragraph of its docstring, and its options
    (`name=default`, as `-p "pass{name=value}"` sets them)."""
    lines = []
    for name in registered_passes():
        cls = pass_class(name)
        summary = " ".join((inspect.getdoc(cls) or "").split("\n\n", 1)[0].split())
        lines.append(f"{name}  {summary}".rstrip())
        for field in dataclasses.fields(cls):
            default = field.default
            if default is dataclasses.MISSING and field.default_factory is not dataclasses.MISSING:
                default = field.default_factory()
            lines.append(f"    {field.name.replace('_', '-')}={default}")
    return "\n".join(lines)


def load_plugin(spec: str) -> None:
    """Import `spec`, a module name (`my_passes`, `pkg.passes`) or a path to a .py file, for
    the passes it registers."""
    try:
        if spec.endswith(".py"):
            name = "naiad_opt_plugin_" + os.path.basename(spec)[:-3]
            loader_spec = importlib.util.spec_from_file_location(name, spec)
            if loader_spec is None:
                raise ImportError(f"cannot load {spec}")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = module
            loader_spec.loader.exec_module(module)
        else:
            importlib.import_module(spec)
    except (ImportError, OSError) as error:
        raise _Failure(f"{spec}: error: cannot load the module: {error}") from None


def _pass_with_options(spec: str, filename: str):
    """`name` or `name{key=value key=value}` (MLIR's spelling: kebab-case keys, separated by
    spaces) as the pass to run; each value takes the type of the option's default."""
    name, brace, rest = spec.partition("{")
    if not brace:
        return name
    cls = pass_class(name)
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    options = {}
    for item in rest.removesuffix("}").split():
        key, _, value = item.partition("=")
        field = key.replace("-", "_")
        if field not in defaults:
            raise _Failure(f"{filename}: error: pass '{name}' has no option '{key}'")
        options[field] = type(defaults[field])(value)
    return cls(**options)


class _Failure(Exception):
    """A command-line failure already worded as a diagnostic."""


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as error:
        raise _Failure(f"{path}: error: {error.strerror}") from None


def _one_line(error: Exception) -> str:
    lines = [str(error)] + [f"note: {n}" for n in getattr(error, "__notes__", ())]
    return " ".join(line.strip() for line in lines if line.strip())


if __name__ == "__main__":
    sys.exit(main())
