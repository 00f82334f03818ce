"""`tl.extra.cpu`: the extras of the CPU target, which are its `libdevice` (the one module
`naiad.language.extra.libdevice`, whose functions every back end compiles). Libraries that
import `triton.language.extra.<backend>.libdevice` by the active driver's backend name find it
here on the CPU."""

from .. import libdevice  # noqa: F401
