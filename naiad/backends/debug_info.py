"""LLVM debug metadata from the locations Naiad's ops carry, for every back end.

Each op of the IR a back end lowers keeps the user's `file:line:col` (a name location on top
for the values a Python local is assigned, a call site for code inlined from a `@jit`
function). Profilers and debuggers map machine code back to the kernel's lines only through
LLVM's debug metadata: a compile unit, a `DISubprogram` per function, a `DILocation` on each
instruction (NVPTX turns them into PTX `.file`/`.loc`; an object file gets a line table).

    info = DebugInfo(nodes, locals_too)       # nodes: how the back end writes metadata
    sp = info.subprogram("kernel", "kernel", func.location)
    info.location(op.location, sp)            # the !dbg of the op's instructions
    info.variable("offsets", op.location, sp, basic)  # with locals_too: a DILocalVariable

Code inlined from another function is located in a subprogram of its own, inlined at its
call's location, so a profile shows the callee's lines and the chain of calls. An inlined
function's name is not kept by its locations: each `@jit` function is found by its lines
(`function_ranges`, read from the frontend's module before the `inline` pass, and before the
back ends inline `noinline` ones), its subprogram named as Python names it (`scale`), its
symbol (`__main__.scale__fp32S64S`) the linkage name. Code inlined from a function of
unknown lines (an IR file's) is one subprogram per file, named after the file (`helpers.py`).

Without local variables the line tables alone are emitted (`LineTablesOnly`, or on NVPTX
`DebugDirectivesOnly`: the `.loc` lines that `-lineinfo` reads, no DWARF sections and no
`.target ..., debug` that would keep ptxas from optimizing). `nodes` is the back end's writer
(`Nodes`): the NVIDIA lowering writes LLVM text, the CPU's llvmlite's metadata objects.
"""

from __future__ import annotations

import os

from ..dialects.tt.types import PointerType
from ..ir import FloatType, IntegerType
from ..ir.locations import CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc, file_line_col

PRODUCER = "naiad"


class Token(str):
    """A bare LLVM enumerator (`DW_TAG_array_type`, `LineTablesOnly`), not a quoted string."""


class Nodes:
    """How a back end writes metadata: `node(kind, fields, distinct)` a specialized node
    (`!DILocation(...)`), `tuple(items)` a plain one (`!{...}`), `named(name, items)` a named
    one (`!llvm.dbg.cu`), `flag(behaviour, key, value)` a module flag. Field values are
    ints, bools, strings, Tokens, None and earlier nodes."""

    def node(self, kind: str, fields: dict, distinct: bool = False):
        raise NotImplementedError

    def tuple(self, items: list):
        raise NotImplementedError

    def named(self, name: str, items: list) -> None:
        raise NotImplementedError

    def flag(self, behaviour: int, key: str, value: int) -> None:
        raise NotImplementedError

    def late_tuple(self):
        """A plain node whose items `fill` gives later."""
        raise NotImplementedError

    def fill(self, node, items: list) -> None:
        raise NotImplementedError


def function_ranges(module) -> list[tuple[str, int, int, str, str]]:
    """(file, first line, last line, name, symbol) of each function of `module` but the
    public kernel: where the code of a function inlined later is to be found, and what it is
    called."""
    ranges = []
    for func in module.regions[0].entry_block:
        start = _position(getattr(func, "location", None) or FileLineColLoc("", 0, 0))
        if start is None or not func.regions or not hasattr(func, "sym_name"):
            continue
        visibility = getattr(func, "sym_visibility", None)
        if visibility is not None and visibility.value == "public":
            continue  # the kernel: never inlined, its subprogram made apart
        last = start.line
        for op in func.walk():
            position = _position(_outermost(op.location))
            if position is not None and position.filename == start.filename:
                last = max(last, position.line)
        symbol = func.sym_name.value
        ranges.append((start.filename, start.line, last, python_name(symbol), symbol))
    return ranges


def python_name(symbol: str) -> str:
    """The Python name of a `@jit` function from its specialized symbol (frontend/calls.py's
    `module.qualname__<parts>`): `__main__.scale__fp32S64S_c2.0` is `scale`."""
    qualified = symbol.rsplit("__", 1)[0] if "__" in symbol.lstrip("_") else symbol
    return qualified.rsplit(".", 1)[-1] or symbol


def _outermost(loc: Location) -> Location:
    """The caller-most frame of `loc` (the position in the function it is in)."""
    site = _call_site(loc)
    while site is not None:
        loc = site.caller
        site = _call_site(loc)
    return loc


def name_of(loc: Location) -> str | None:
    """The Python local a location names (through fused locations), or None."""
    if isinstance(loc, NameLoc):
        return loc.name
    if isinstance(loc, FusedLoc):
        for inner in loc.locations:
            found = name_of(inner)
            if found is not None:
                return found
    return None


def last_named_ops(func) -> dict:
    """Each Python local of `func` (its name locations) and the last op with results it names,
    in the order the locals first appear: the op of the value the local holds at the end."""
    found = {}
    for op in func.walk():
        name = name_of(op.location)
        if name is not None and op.results:
            found[name] = op
    return found


def _position(loc: Location) -> FileLineColLoc | None:
    """The innermost source position of `loc` (a call site's callee is resolved apart)."""
    return file_line_col(loc, call_sites=False)


def _call_site(loc: Location) -> CallSiteLoc | None:
    """The call site `loc` is, under names and fused locations, or None."""
    if isinstance(loc, CallSiteLoc):
        return loc
    if isinstance(loc, NameLoc):
        return _call_site(loc.child)
    if isinstance(loc, FusedLoc):
        for inner in loc.locations:
            if _position(inner) is not None or _call_site(inner) is not None:
                return _call_site(inner)
    return None


class DebugInfo:
    """The debug metadata of one LLVM module, its nodes made once each."""

    def __init__(
        self,
        nodes: Nodes,
        variables: bool = False,
        directives_only: bool = False,
        functions: list[tuple[str, int, int, str, str]] = (),
    ):
        self.nodes = nodes
        self.functions = functions  # function_ranges(), of the functions inlined here
        self.variables = variables
        kind = "FullDebug" if variables else "LineTablesOnly"
        if directives_only and not variables:
            kind = "DebugDirectivesOnly"
        self._kind = Token(kind)
        self._files: dict = {}
        self._subprograms: dict = {}  # (name, linkage, file, line) -> node
        self._files_of: dict = {}  # id(subprogram) -> its file
        self._inlined: dict = {}  # (file, first line) -> the subprogram of inlined code
        self._locations: dict = {}
        self._resolved: dict = {}  # (location, subprogram's id) -> its DILocation
        self._types: dict = {}
        self._variables: dict = {}  # id(subprogram) -> its variables, by name
        self._retained: list = []  # (subprogram's id, its late retainedNodes tuple)
        self._unit = None

    def _file(self, filename: str):
        found = self._files.get(filename)
        if found is None:
            directory, base = os.path.split(filename)
            fields = {"filename": base or filename, "directory": directory}
            found = self._files[filename] = self.nodes.node("DIFile", fields)
        return found

    def unit(self, filename: str):
        """The compile unit (made once, on the first file asked for), with the module flags
        LLVM needs to keep debug metadata at all."""
        if self._unit is None:
            fields = {
                "language": Token("DW_LANG_Python"),
                "file": self._file(filename),
                "producer": PRODUCER,
                "isOptimized": True,
                "runtimeVersion": 0,
                "emissionKind": self._kind,
            }
            self._unit = self.nodes.node("DICompileUnit", fields, distinct=True)
            self.nodes.named("llvm.dbg.cu", [self._unit])
            self.nodes.flag(2, "Debug Info Version", 3)
            self.nodes.flag(7, "Dwarf Version", 4)
        return self._unit

    def subprogram(self, name: str, linkage: str, loc: Location):
        """The `DISubprogram` of a function defined at `loc` (its `def`)."""
        position = _position(loc) or FileLineColLoc("<unknown>", 0, 0)
        key = (name, linkage, position.filename, position.line)
        found = self._subprograms.get(key)
        if found is None:
            unit = self.unit(position.filename)
            file = self._file(position.filename)
            kind = self.nodes.node("DISubroutineType", {"types": self.nodes.tuple([None])})
            fields = {
                "name": name,
                "linkageName": linkage,
                "scope": file,
                "file": file,
                "line": position.line,
                "type": kind,
                "scopeLine": position.line,
                "spFlags": Token("DISPFlagDefinition | DISPFlagOptimized"),
                "unit": unit,
            }
            retained = None
            if self.variables:
                retained = fields["retainedNodes"] = self.nodes.late_tuple()
            found = self._subprograms[key] = self.nodes.node("DISubprogram", fields, True)
            self._files_of[id(found)] = position.filename
            if retained is not None:
                self._retained.append((id(found), retained))
        return found

    def finish(self) -> None:
        """Write what was left open: each subprogram's variables (`retainedNodes`, so that
        a variable whose every value was optimized away is still known)."""
        for key, retained in self._retained:
            self.nodes.fill(retained, list(self._variables.get(key, {}).values()))

    def location(self, loc: Location, subprogram):
        """The `DILocation` of `loc` in the function `subprogram` (inlined code in a
        subprogram of its own, inlined at its call); None where `loc` has no position.
        Locations are interned, and most ops share theirs: each is resolved once."""
        key = (loc, id(subprogram))
        try:
            return self._resolved[key]
        except KeyError:
            found = self._resolved[key] = self._at(loc, subprogram, None)
            return found

    def start(self, loc: Location, subprogram):
        """Where a function defined at `loc` starts: its `def`'s line, or line 0 (no line)
        for a function without a position (an IR file's without locations): a call to a
        function with debug info must have a location."""
        found = self.location(loc, subprogram)
        if found is None:
            found = self.nodes.node("DILocation", {"line": 0, "column": 0, "scope": subprogram})
        return found

    def scope_of(self, loc: Location, subprogram):
        """The subprogram a value located at `loc` belongs to (an inlined function's)."""
        site = _call_site(loc)
        if site is None:
            return subprogram
        return self.scope_of(site.callee, self._inlined_subprogram(site.callee))

    def _at(self, loc: Location, subprogram, inlined_at):
        """`loc`, whose outermost frame is `subprogram`'s, itself inlined at `inlined_at`.
        A call site's caller is in that frame; its callee in a frame inlined at the caller
        (and a callee that is a call site again: code inlined twice)."""
        site = _call_site(loc)
        if site is None:
            return self._location(loc, subprogram, inlined_at)
        at = self._at(site.caller, subprogram, inlined_at)
        if at is None:
            return None
        return self._at(site.callee, self._inlined_subprogram(site.callee), at)

    def _inlined_subprogram(self, callee: Location):
        """The subprogram of the code inlined from the function of `callee`'s outermost
        frame: the function whose lines hold it (`functions`), else its file."""
        position = _position(_outermost(callee)) or FileLineColLoc("<unknown>", 0, 0)
        filename, line = position.filename, position.line
        for file, first, last, name, symbol in self.functions:
            if file == filename and first <= line <= last:
                key = (file, first)  # one subprogram for every specialization of the def
                if key not in self._inlined:
                    start = FileLineColLoc(file, first, 0)
                    self._inlined[key] = self.subprogram(name, symbol, start)
                return self._inlined[key]
        found = self._inlined.get((filename, None))
        if found is None:
            label = os.path.basename(filename)
            found = self._inlined[(filename, None)] = self.subprogram(label, label, position)
        return found

    def _location(self, loc: Location, subprogram, inlined_at):
        position = _position(loc)
        if position is None:
            return None
        key = (position.line, position.col, position.filename, id(subprogram), id(inlined_at))
        found = self._locations.get(key)
        if found is None:
            fields = {
                "line": position.line,
                "column": position.col,
                "scope": self._scope(subprogram, position.filename),
            }
            if inlined_at is not None:
                fields["inlinedAt"] = inlined_at
            found = self._locations[key] = self.nodes.node("DILocation", fields)
        return found

    def _scope(self, subprogram, filename: str):
        """`subprogram`, or a block of it in another file (a DILocation has no file field:
        its scope's file is its file)."""
        if self._files_of.get(id(subprogram)) == filename:
            return subprogram
        key = ("block", id(subprogram), filename)
        if key not in self._types:
            fields = {"scope": subprogram, "file": self._file(filename), "discriminator": 0}
            self._types[key] = self.nodes.node("DILexicalBlockFile", fields)
        return self._types[key]

    def basic_type(self, name: str, bits: int, encoding: str):
        """A scalar type (`DW_ATE_float`, `DW_ATE_signed`, `DW_ATE_boolean`, ...)."""
        key = ("basic", name, bits, encoding)
        if key not in self._types:
            fields = {"name": name, "size": bits, "encoding": Token(encoding)}
            self._types[key] = self.nodes.node("DIBasicType", fields)
        return self._types[key]

    def scalar_type(self, t):
        """(debug type, bits) of a scalar IR type, or None for one not described: an integer
        (i1 a byte-sized boolean), a float (one narrower than 16 bits as unsigned bits), a
        pointer (32 bits into shared memory, else 64)."""
        if isinstance(t, IntegerType):
            if t.width == 1:
                return self.basic_type("i1", 8, "DW_ATE_boolean"), 8
            return self.basic_type(f"i{t.width}", t.width, "DW_ATE_signed"), t.width
        if isinstance(t, FloatType):
            encoding = "DW_ATE_float" if t.width >= 16 else "DW_ATE_unsigned"
            return self.basic_type(t.kind, t.width, encoding), t.width
        if isinstance(t, PointerType):
            bits = 32 if t.address_space == 3 else 64
            return self.pointer_type(bits), bits
        return None

    def pointer_type(self, bits: int):
        key = ("pointer", bits)
        if key not in self._types:
            fields = {"tag": Token("DW_TAG_pointer_type"), "baseType": None, "size": bits}
            self._types[key] = self.nodes.node("DIDerivedType", fields)
        return self._types[key]

    def array_type(self, element, element_bits: int, count: int):
        """`count` elements of `element`: a thread's registers of a tensor."""
        key = ("array", id(element), count)
        if key not in self._types:
            ranges = self.nodes.tuple([self.nodes.node("DISubrange", {"count": count})])
            fields = {
                "tag": Token("DW_TAG_array_type"),
                "baseType": element,
                "size": element_bits * count,
                "elements": ranges,
            }
            self._types[key] = self.nodes.node("DICompositeType", fields)
        return self._types[key]

    def parameter(self, name: str, number: int, loc: Location, subprogram, kind):
        """The `DILocalVariable` of the function's parameter `number` (from 1)."""
        position = _position(loc) or FileLineColLoc("<unknown>", 0, 0)
        fields = {
            "name": name,
            "arg": number,
            "scope": subprogram,
            "file": self._file(position.filename),
            "line": position.line,
            "type": kind,
        }
        return self.nodes.node("DILocalVariable", fields)

    def variable(self, name: str, loc: Location, subprogram, kind):
        """The `DILocalVariable` `name` of type `kind` in `loc`'s scope within `subprogram`
        (one per name and scope; kept by the subprogram even where no value of it is left)."""
        scope = self.scope_of(loc, subprogram)
        variables = self._variables.setdefault(id(scope), {})
        found = variables.get(name)
        if found is None:
            position = _position(loc)
            fields = {
                "name": name,
                "scope": scope,
                "file": self._file(position.filename if position else "<unknown>"),
                "line": position.line if position else 0,
                "type": kind,
            }
            found = variables[name] = self.nodes.node("DILocalVariable", fields)
        return found
