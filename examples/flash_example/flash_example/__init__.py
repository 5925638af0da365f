"""flash_example: a tiny FlashAttention-2-shaped CUDA extension used to test fabuild.

It is built exactly like flash-attn 2.x (torch.utils.cpp_extension CUDAExtension +
BuildExtension with ninja) and reads the same environment variables, but compiles
16 small forward-attention kernels instead of 72 large ones.
"""

__version__ = "0.1.0"

from flash_example.flash_attn_interface import flash_example_func

__all__ = ["flash_example_func", "__version__"]
