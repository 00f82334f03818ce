"""The hardware-neutral middle layer: TTIR lowered to upstream MLIR's Linalg, tensor, memref and
bufferization dialects (`linalg/`), from which the CPU back end compiles."""
