"""The NVIDIA back end: TTGIR on linear layouts, lowered to LLVM IR for `nvptx64-nvidia-cuda`,
then PTX and cubin, run through the CUDA driver.

`layouts/` holds the linear layouts (layouts/linear_layout.py) and the meaning of each `ttg`
encoding as one (layouts/conversions.py): every lowering step reads layouts from there.
"""
