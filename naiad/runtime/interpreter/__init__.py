"""The NumPy interpreter: runs kernels on the host with the GPU's semantics, bit for bit."""
