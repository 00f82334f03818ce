"""The enum attributes of the `tt` dialect (TritonAttrDefs.td).

Every one is an `I32EnumAttr`: the op holds an `IntegerAttr` of i32, which the generic form
prints as a number (`cache = 1 : i32`) and the custom syntax as a keyword (`cacheModifier =
ca`, `acq_rel`, `inputPrecision = tf32`). The values are Triton's own, so a dump read back
holds the numbers Triton wrote.

    CacheModifier.get("ca")          # IntegerAttr(2, i32)
    CacheModifier.keyword(attr)      # "ca"
"""

from __future__ import annotations

from ..base import EnumAttr

CacheModifier = EnumAttr(
    "CacheModifier", {"none": 1, "ca": 2, "cg": 3, "wb": 4, "cs": 5, "wt": 6, "cv": 7}
)
MemSemantic = EnumAttr("MemSemantic", {"relaxed": 1, "acquire": 2, "release": 3, "acq_rel": 4})
EvictionPolicy = EnumAttr("EvictionPolicy", {"evict_normal": 1, "evict_first": 2, "evict_last": 3})
PaddingOption = EnumAttr("PaddingOption", {"zero": 1, "nan": 2})
RMWOp = EnumAttr(
    "RMWOp",
    {
        "and": 1,
        "or": 2,
        "xor": 3,
        "add": 4,
        "fadd": 5,
        "max": 6,
        "min": 7,
        "umax": 8,
        "umin": 9,
        "exch": 10,
    },
)
DescriptorReduceKind = EnumAttr(
    "DescriptorReduceKind",
    {"add": 1, "min": 2, "max": 3, "inc": 4, "dec": 5, "and": 6, "or": 7, "xor": 8},
)
MemSyncScope = EnumAttr("MemSyncScope", {"gpu": 1, "cta": 2, "sys": 3})
ProgramIDDim = EnumAttr("ProgramIDDim", {"x": 0, "y": 1, "z": 2})
RoundingMode = EnumAttr("RoundingMode", {"rtz": 0, "rtne": 1})
PropagateNan = EnumAttr("PropagateNan", {"none": 0, "all": 0xFFFF})
InputPrecision = EnumAttr(
    "InputPrecision", {"tf32": 0, "tf32x3": 1, "ieee": 2, "bf16x3": 3, "bf16x6": 4}
)
ScaleDotElemType = EnumAttr(
    "ScaleDotElemType",
    {"e4m3": 0, "e5m2": 1, "e2m3": 2, "e3m2": 3, "e2m1": 4, "bf16": 5, "fp16": 6},
)

# Defaults of the DefaultValuedAttr fields: an op without the attribute behaves as with these.
DEFAULT_CACHE = CacheModifier.get("none")
DEFAULT_EVICT = EvictionPolicy.get("evict_normal")
DEFAULT_INPUT_PRECISION = InputPrecision.get("ieee")
