"""Host-side tools that kernels' callers use (`TensorDescriptor`, microscaling data in `mxfp`)."""
