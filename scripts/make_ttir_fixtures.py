"""Regenerate the Triton TTIR reference fixtures in tests/ir/fixtures/.

    python scripts/make_ttir_fixtures.py            # (re)write every fixture
    python scripts/make_ttir_fixtures.py -k matmul  # only fixtures whose name contains "matmul"
    python scripts/make_ttir_fixtures.py --check    # write nothing; exit 1 if a file would change
    python scripts/make_ttir_fixtures.py --list     # print the fixture table

Needs the real `triton` (3.8) when run, and no GPU: every kernel is compiled for cuda:90
(`triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", 90, 32))`).
Naiad's tests never import this script or triton; they read the files it writes:

* `<name>.ttir`         the TTIR after Triton's make_ttir pipeline (`CompiledKernel.asm["ttir"]`),
                        as Triton prints it, with locations and `#loc` aliases;
* `<name>.source.ttir`  the TTIR as Triton's code generator built it, before any pass
                        (`asm["source"]`: the module Triton caches before running its stages);
* `<name>.json`         the specialization (signature, constexprs, divisibility attributes,
                        options) and the op names per region of both modules, in order.

What is compiled, and with which arguments, is scripts/ttir_fixture_table.py; the kernels are in
scripts/ttir_fixture_tutorials.py (tutorials 01-06), scripts/ttir_fixture_tutorial_06b.py
(attention with block pointers) and scripts/ttir_fixture_kernels.py (small language kernels).
They are loaded under repository-relative file names, so the fixtures' locations read
`"scripts/ttir_fixture_kernels.py":L:C` whatever the checkout's path (locations inside Triton's own
library, `tl.sum` or `tl.rand`, keep the absolute path of the triton install that made them).

Specializations are derived as a launch derives them: Triton's own `native_specialize_impl` turns
each example argument into its signature type and `tt.divisibility` attribute (16-byte-aligned
pointers and ints divisible by 16 get `tt.divisibility = 16`; an int equal to 1 becomes a
constexpr; ints beyond 32 bits are i64).

The op structure in the JSON ("ttir" and "source") comes from a line-based scan of the printed text
(scripts/ttir_op_structure.py, whose docstring gives the format); `check_structure` compares it
with the walk of Triton's MLIR bindings over the same file, so a fixture is written only if both
agree.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import sys
import tempfile
import traceback
import types
from pathlib import Path

from ttir_fixture_table import KERNEL_MODULES, TABLE, Desc, Fixture, Ptr
from ttir_op_structure import flatten_post_order, op_structure

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path("tests/ir/fixtures")
TARGET = ("cuda", 90, 32)


# ---------------------------------------------------------------------------------------------
# Compilation
# ---------------------------------------------------------------------------------------------


def load_modules() -> dict:
    """Import the kernel modules under repository-relative file names (the names locations print).

    `importlib` would make the file name absolute, so each module's code is compiled here with the
    relative name; the working directory is the repository root, where `inspect` finds the source.
    """
    modules = {}
    for key, rel in KERNEL_MODULES.items():
        # The module name is the file's stem, as `import ttir_fixture_kernels` would give: Triton
        # mangles it into the symbols of noinline functions (@ttir_fixture_kernels._helper__fp32).
        module = types.ModuleType(Path(rel).stem)
        module.__file__ = rel
        sys.modules[module.__name__] = module
        exec(compile(Path(rel).read_text(), rel, "exec"), module.__dict__)
        modules[key] = module
    return modules


def specialize(fn, args: dict, backend_cls) -> tuple[dict, dict, dict]:
    """(signature, constexprs, attrs) as a launch with these arguments would compute them."""
    from triton._C.libtriton import native_specialize_impl

    names = [p.name for p in fn.params]
    if list(args) != names:
        raise ValueError(f"arguments {list(args)} do not match the parameters {names}")
    signature, constexprs, attrs = {}, {}, {}
    for p in fn.params:
        value = args[p.name]
        if isinstance(value, Desc):
            value = value.make()
        if p.is_constexpr:
            ty, attr = "constexpr", None
        else:
            ty, attr = native_specialize_impl(
                backend_cls,
                value,
                p.is_const,
                not p.do_not_specialize,
                not p.do_not_specialize_on_alignment,
            )
        signature[p.name] = ty
        if ty == "constexpr":
            constexprs[p.name] = value
        elif attr:
            attrs[p.name] = backend_cls.parse_attr(attr)
    return signature, constexprs, attrs


def _json_value(value):
    if isinstance(value, Ptr):
        return {"ptr": value.dtype_name, "offset": value.offset}
    if isinstance(value, Desc):
        return {
            "tensor_descriptor": _json_value(value.base),
            "shape": list(value.shape),
            "strides": list(value.strides),
            "block_shape": list(value.block_shape),
        }
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def compile_fixture(fx: Fixture, modules: dict) -> tuple[dict, dict]:
    """The fixture's files: {file name: text}, and the JSON record."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    fn = getattr(modules[fx.module], fx.kernel)
    target = GPUTarget(*TARGET)
    backend_cls = type(make_backend(target))
    signature, constexprs, attrs = specialize(fn, fx.args, backend_cls)
    names = [p.name for p in fn.params]
    src = ASTSource(fn, signature, constexprs, {(names.index(k),): v for k, v in attrs.items()})
    compiled = triton.compile(src, target=target, options=dict(fx.options))
    ttir, source = compiled.asm["ttir"], compiled.asm["source"]
    meta = compiled.metadata
    record = {
        "name": fx.name,
        "kernel": fx.kernel,
        "kernel_file": KERNEL_MODULES[fx.module],
        "triton_version": triton.__version__,
        "target": {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size},
        "args": {k: _json_value(v) for k, v in fx.args.items()},
        "signature": signature,
        "constexprs": {k: _json_value(v) for k, v in constexprs.items()},
        "attrs": dict(attrs),
        "options": dict(fx.options),
        "num_warps": meta.num_warps,
        "num_stages": meta.num_stages,
        "num_ctas": meta.num_ctas,
        "debug": meta.debug,
        "note": fx.note,
        "ttir_file": f"{fx.name}.ttir",
        "ttir_sha256": hashlib.sha256(ttir.encode()).hexdigest(),
        "source_file": f"{fx.name}.source.ttir",
        "ttir": op_structure(ttir),
        "source": op_structure(source),
    }
    files = {f"{fx.name}.ttir": ttir, f"{fx.name}.source.ttir": source}
    return files, record


def bindings_bodies(path: Path, context) -> list:
    """The body of every tt.func of a file as Triton's MLIR bindings parse it, in module order,
    in op_structure's REGION format.

    The bindings have no block or op iterators, but `module.walk` visits every op (post-order: the
    ops of each block in order), an op knows its block and its regions, and a block its region:
    enough to rebuild the tree.
    """
    from triton._C.libtriton import ir

    module = ir.parse_mlir_module(str(path), context)
    block_ops, region_blocks, nodes = {}, {}, []

    def visit(op):
        node = {"op": op.get_name(), "regions": []}
        for i in range(op.get_num_regions()):
            node["regions"].append(op.get_region(i).id())
            region_blocks.setdefault(node["regions"][-1], [])
        block = op.get_block()
        if block is not None:
            if block.id() not in block_ops:
                block_ops[block.id()] = []
                region_blocks.setdefault(block.get_parent().id(), []).append(block.id())
            block_ops[block.id()].append(node)
        nodes.append(node)

    module.walk(visit)

    def build(node):
        if not node["regions"]:
            return node["op"]
        regions = [
            [[build(op) for op in block_ops[b]] for b in region_blocks[r]] for r in node["regions"]
        ]
        return {"op": node["op"], "regions": regions}

    module_op = build(nodes[-1])  # post-order: the module comes last
    assert module_op["op"] == "builtin.module"
    return [func["regions"][0] for block in module_op["regions"][0] for func in block]


def check_structure(path: Path, structure: dict, context) -> None:
    """Compare the text scan's structure with the one rebuilt from Triton's MLIR bindings."""
    expected = [func["body"] for func in structure["funcs"]]
    actual = bindings_bodies(path, context)
    if actual != expected:
        diff = "\n".join(
            difflib.unified_diff(
                json.dumps(actual, indent=1).splitlines(),
                json.dumps(expected, indent=1).splitlines(),
                "mlir-bindings",
                "text-scan",
                lineterm="",
                n=2,
            )
        )
        raise AssertionError(f"{path}: op structure differs from the MLIR bindings'\n{diff}")


def render_json(value, indent: int = 0, width: int = 100) -> str:
    """Indented JSON whose small values stay on one line and whose long lists are filled to `width`
    columns (op names several to a line, an op with regions on lines of its own)."""
    flat = json.dumps(value)
    pad, inner = " " * indent, " " * (indent + 1)
    if len(flat) + indent <= width or not isinstance(value, (dict, list)) or not value:
        text = flat
    elif isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(k)}: {render_json(v, indent + 1, width)}" for k, v in value.items()
        ]
        text = "{\n" + ",\n".join(items) + "\n" + pad + "}"
    else:
        lines, words = [], []
        for item in value:
            if isinstance(item, (dict, list)):
                if words:
                    lines.append(", ".join(words))
                    words = []
                lines.append(render_json(item, indent + 1, width))
                continue
            word = json.dumps(item)
            if words and len(inner) + len(", ".join(words + [word])) + 1 > width:
                lines.append(", ".join(words))
                words = []
            words.append(word)
        if words:
            lines.append(", ".join(words))
        text = "[\n" + ",\n".join(inner + line for line in lines) + "\n" + pad + "]"
    return text + "\n" if indent == 0 else text


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-k", dest="select", default="", help="only fixtures whose name contains this"
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file would change"
    )
    parser.add_argument("--list", action="store_true", help="print the fixture table and exit")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    selected = [fx for fx in TABLE if args.select in fx.name]
    if args.list:
        for fx in selected:
            print(f"{fx.name:36} {KERNEL_MODULES[fx.module]}::{fx.kernel}  {fx.options or ''}")
        return 0

    # A private, empty cache: every kernel really compiles, and nothing is left in ~/.triton.
    cache = tempfile.TemporaryDirectory(prefix="naiad-ttir-fixtures-")
    os.environ["TRITON_CACHE_DIR"] = cache.name
    import triton
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    if not triton.__version__.startswith("3.8"):
        print(
            f"warning: fixtures are Triton 3.8's; this is Triton {triton.__version__}",
            file=sys.stderr,
        )
    context = ir.context()
    ir.load_dialects(context)
    make_backend(GPUTarget(*TARGET)).load_dialects(context)

    modules = load_modules()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    failures, changed = [], []
    for fx in selected:
        try:
            files, record = compile_fixture(fx, modules)
            files[f"{fx.name}.json"] = render_json(record)
            assert json.loads(files[f"{fx.name}.json"]) == record, "the JSON does not read back"
            with tempfile.TemporaryDirectory() as tmp:
                for key in ("ttir", "source"):
                    path = Path(tmp) / record[f"{key}_file"]
                    path.write_text(files[record[f"{key}_file"]])
                    check_structure(path, record[key], context)
        except Exception as exc:  # report and go on with the others
            failures.append((fx.name, f"{type(exc).__name__}: {exc}"))
            traceback.print_exc()
            continue
        for file_name, text in files.items():
            path = FIXTURES / file_name
            if path.exists() and path.read_text() == text:
                continue
            changed.append(str(path))
            if not args.check:
                path.write_text(text)
        n_ops = len(flatten_post_order(record["ttir"])) - 1
        print(f"{fx.name:36} ok  ({n_ops} TTIR ops, {len(record['ttir']['funcs'])} func)")

    cache.cleanup()
    verb = "would change" if args.check else "written"
    n_ok = len(selected) - len(failures)
    print(f"{n_ok}/{len(selected)} fixtures compiled; {len(changed)} files {verb}")
    for path in changed:
        print(f"  {path}")
    for name, why in failures:
        print(f"FAILED {name}: {why.splitlines()[0]}")
    return 1 if failures or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
