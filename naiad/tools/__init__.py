"""Host-side tools that kernels' callers use (`TensorDescriptor`)."""
