"""The pass registry and the PassManager."""

from dataclasses import dataclass

import pytest
from ir_toy import ConstantOp, FuncOp, ReturnOp

from naiad.ir import (
    IntegerAttr,
    ModuleOp,
    Pass,
    PassManager,
    StringAttr,
    i32,
    pass_class,
    register_pass,
    registered_passes,
)

LOG: list[str] = []


@register_pass("toy-record")
@dataclass(frozen=True)
class ToyRecord(Pass):
    """Records its tag: shows the order passes run in and that options are fields."""

    tag: str = "default"

    def run(self, module):
        LOG.append(self.tag)


@register_pass("toy-break")
@dataclass(frozen=True)
class ToyBreak(Pass):
    """Appends an op after the terminator of the first function: invalid IR."""

    def run(self, module):
        body = module.body.first_op.body.block
        body.append(ConstantOp(value=IntegerAttr(1, i32), result=i32))


def module_with_function():
    f = FuncOp(sym_name=StringAttr("f"))
    f.body.add_block().append(ReturnOp([]))
    return ModuleOp([f])


def test_passes_run_in_order_by_name_or_instance():
    LOG.clear()
    PassManager(["toy-record", ToyRecord(tag="second")]).run(module_with_function())
    assert LOG == ["default", "second"]
    assert pass_class("toy-record") is ToyRecord and ToyRecord.name == "toy-record"
    assert "toy-break" in registered_passes()


def test_registry_errors():
    with pytest.raises(KeyError, match="unknown pass 'nope'"):
        PassManager(["nope"])
    with pytest.raises(TypeError, match="frozen dataclass"):

        @register_pass("toy-mutable")
        @dataclass
        class Mutable(Pass):
            pass

    with pytest.raises(ValueError, match="already registered"):

        @register_pass("toy-record")
        @dataclass(frozen=True)
        class Other(Pass):
            pass
