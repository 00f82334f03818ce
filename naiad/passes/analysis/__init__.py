"""Analyses of TTIR that passes and back ends query: `AxisInfoAnalysis` (divisibility,
contiguity and constancy of integer and pointer values, for vector widths and coalescing).

Importing the package registers the test pass `test-print-axis-info`, which writes the facts
into the IR for FileCheck tests.
"""

from . import axis_info_printer  # noqa: F401  (registers the pass)
from .axis_info import AxisInfoAnalysis, order_from_contiguity
from .axis_info_lattice import K_MAX_DIVISOR, AxisInfo

__all__ = ["K_MAX_DIVISOR", "AxisInfo", "AxisInfoAnalysis", "order_from_contiguity"]
