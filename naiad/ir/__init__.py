"""Naiad's SSA IR core: types, attributes, values, operations, blocks, regions, declarative op
definitions, builder, rewriter, verifier and pass registry. Dialect-agnostic; imports nothing
else of Naiad. docs/ir.md describes the design."""

from .attributes import (  # noqa: F401
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DialectAttribute,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    UnitAttr,
    dialect_attribute_class,
)
from .block import Block, Region  # noqa: F401
from .builder import Builder  # noqa: F401
from .builtin import ModuleOp, lookup_symbol  # noqa: F401
from .constraints import (  # noqa: F401
    AnyAttr,
    AnyType,
    Constraint,
    FloatLike,
    IntegerLike,
    PointerLike,
    ScalarOrTensorOf,
    TensorOf,
)
from .errors import IRError, VerificationError  # noqa: F401
from .locations import (  # noqa: F401
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    Location,
    NameLoc,
    UnknownLoc,
    file_line_col,
)
from .memref_types import (  # noqa: F401
    MemRefType,
    StridedLayoutAttr,
    UnrankedMemRefType,
    contiguous_strides,
    is_memref,
)
from .opdef import (  # noqa: F401
    constant_materializer,
    create_operation,
    irdl_op,
    op_class,
    register_constant_materializer,
    registered_ops,
)
from .operation import Operation, UnregisteredOp  # noqa: F401
from .opfields import (  # noqa: F401
    attribute,
    operand,
    opt_attribute,
    opt_operand,
    region,
    result,
    successor,
    var_operand,
    var_region,
    var_result,
)
from .passes import Pass, PassManager, pass_class, register_pass, registered_passes  # noqa: F401
from .rewriter import (  # noqa: F401
    PatternRewriter,
    RewriteListener,
    RewritePattern,
    apply_patterns_greedily,
    constant_value,
    is_trivially_dead,
)
from .traits import (  # noqa: F401
    Commutative,
    ConstantLike,
    Elementwise,
    HasParent,
    IsolatedFromAbove,
    LoopLike,
    MemoryRead,
    MemoryWrite,
    NoTerminator,
    Pure,
    RecursiveMemoryEffects,
    ReturnLike,
    SameOperandsAndResultElementType,
    SameOperandsAndResultEncoding,
    SameOperandsAndResultShape,
    SameOperandsAndResultType,
    SameOperandsElementType,
    SameOperandsEncoding,
    SameOperandsShape,
    SingleBlock,
    Symbol,
    SymbolTable,
    Terminator,
    Trait,
)
from .types import (  # noqa: F401
    DYNAMIC,
    DialectType,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    NoneType,
    RankedTensorType,
    Type,
    bf16,
    dialect_type_class,
    element_type,
    encoding_of,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
    index,
    is_float_like,
    is_integer_like,
    is_pointer_like,
    shape_of,
    with_element_type,
)
from .values import BlockArgument, OpResult, Value  # noqa: F401
from .verifier import verify, verify_op_only  # noqa: F401
