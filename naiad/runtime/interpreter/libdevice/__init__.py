"""What each CUDA libdevice symbol (`__nv_*`) means on NumPy arrays, for the interpreter.

`call(symbol, arrays, ty)` is the one entry; `tt.extern_elementwise` reaches it with the symbol
the language chose (`naiad/language/extra/libdevice_signatures.py`). One module per family:

- integer: bit counts, byte permutes, high products, reinterpretations (bit-exact);
- rounding: + - * / sqrt fma in the four IEEE rounding modes (exact);
- conversions: float <-> integer in every mode, saturating like PTX `cvt` (exact);
- elementary: the C math library (fp32 computed in fp64, rounded once);
- special: erfcx, erfinv, erfcinv, normcdf, normcdfinv; bessel: J, Y, I;
- ftz: the fp32 symbols that flush subnormals to zero on the GPU, as Triton builds libdevice.

Nothing here raises on NaN, infinity or overflow: the GPU's answer comes back instead.
"""

from __future__ import annotations

import numpy as np

from ..floats import numpy_dtype
from . import bessel, conversions, elementary, ftz, integer, rounding, special

SYMBOLS = {
    **elementary.SYMBOLS,
    **integer.SYMBOLS,
    **rounding.SYMBOLS,
    **conversions.SYMBOLS,
    **special.SYMBOLS,
    **bessel.SYMBOLS,
}


def call(symbol: str, arrays, ty) -> np.ndarray:
    """The values of `symbol` applied elementwise to `arrays`, as the host dtype of `ty`."""
    if symbol not in SYMBOLS:
        raise NotImplementedError(f"the interpreter has no meaning for libdevice `{symbol}`")
    fn = SYMBOLS[symbol]
    flushing = symbol in ftz.FLUSHING
    with np.errstate(all="ignore"):
        arrays = [ftz.flush(a) if flushing else np.asarray(a) for a in arrays]
        result = np.asarray(fn(*arrays)).astype(numpy_dtype(ty.scalar.name), copy=False)
        return ftz.flush(result) if flushing else result
