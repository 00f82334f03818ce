"""`naiad-opt`: read MLIR text, run passes, print the module — Naiad's `triton-opt`.

    naiad-opt kernel.ttir                      # parse, verify, print back
    naiad-opt kernel.ttir -p canonicalize,cse  # run passes in order
    naiad-opt k.ttir -p "convert-to-ttgir{num-warps=8 target=cuda:80},coalesce"   # with options
    cat kernel.ttir | naiad-opt - --generic    # every op in MLIR's generic form
    naiad-opt kernel.ttir --no-locations -o out.mlir

A syntax error, an unknown op or pass, or IR the verifier rejects is reported on one line,
`FILE:line:col: error: message`, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from naiad import dialects, passes  # noqa: F401  (registers the ops, their syntax, the passes)
from naiad.backends.nvidia import passes as nvidia_passes  # noqa: F401  (the TTGIR passes)
from naiad.dialects import syntax  # noqa: F401
from naiad.errors import NaiadError
from naiad.ir import IRError, PassManager, pass_class, registered_passes, verify
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module
from naiad.middle import linalg  # noqa: F401  (registers tt-to-linalg)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="naiad-opt", description="Parse MLIR text, run Naiad passes, print the result."
    )
    parser.add_argument("input", help="an MLIR file, or - for standard input")
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
    parser.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_passes:
        print("\n".join(registered_passes()))
        return 0
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else _read(args.input)
        module = parse_module(text, filename)
        specs = [spec.strip() for spec in args.passes.split(",") if spec.strip()]
        unknown = [s for s in specs if s.partition("{")[0] not in registered_passes()]
        if unknown:
            known = ", ".join(registered_passes())
            raise _Failure(f"{filename}: error: unknown pass '{unknown[0]}' (known: {known})")
        pipeline = [_pass_with_options(spec, filename) for spec in specs]
        if not args.no_verify:
            verify(module)
        PassManager(pipeline, verify_each=not args.no_verify, expected=(NaiadError,)).run(module)
        output = print_module(module, generic=args.generic, locations=not args.no_locations)
    except (IRError, NaiadError, _Failure) as error:
        print(_one_line(error), file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(output)
    else:
        with open(args.output, "w") as f:
            f.write(output)
    return 0


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
