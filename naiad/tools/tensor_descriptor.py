"""`TensorDescriptor` where Triton's users import it from (`triton.tools.tensor_descriptor`);
it lives in the runtime, which launches with it (runtime/tensor_descriptor.py)."""

from ..runtime.tensor_descriptor import TensorDescriptor

__all__ = ["TensorDescriptor"]
