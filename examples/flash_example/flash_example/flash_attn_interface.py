"""Python front end, mirroring flash_attn.flash_attn_interface.flash_attn_func."""

import importlib.util

import torch


def _load_extension():
    """The compiled extension (a top-level module, like flash_attn_2_cuda) in either build.

    The default build is a pybind module and imports. The stable-ABI build
    (FLASH_EXAMPLE_STABLE_ABI=TRUE: flash_example_cuda.abi3.so) has no PyInit_ function, so its
    import fails: as FlashAttention 2's stable port does, load it as a library, which runs its
    op registration, and call the ops through torch.ops.flash_example (same names, arguments
    and results)."""
    try:
        import flash_example_cuda
        return flash_example_cuda
    except ImportError as import_error:
        spec = importlib.util.find_spec("flash_example_cuda")
        if spec is None or spec.origin is None:
            raise
        try:
            torch.ops.load_library(spec.origin)
        except OSError as load_error:
            # Neither a module nor a library of ops: say why both ways failed.
            raise ImportError(f"{spec.origin}: not importable ({import_error}) and not loadable "
                              f"as a torch op library ({load_error})") from load_error
    return torch.ops.flash_example


flash_example_gpu = _load_extension()


def _maybe_contiguous(x):
    return x.contiguous() if x is not None and x.stride(-1) != 1 else x


def flash_example_func(q, k, v, causal=False, softmax_scale=None, return_softmax_lse=False):
    """softmax(q @ k^T * softmax_scale) @ v, optionally causal.

    Arguments:
        q: (batch_size, seqlen_q, nheads, headdim), fp16 or bf16, on a CUDA device.
        k: (batch_size, seqlen_k, nheads_k, headdim); nheads % nheads_k == 0 (MQA/GQA).
        v: (batch_size, seqlen_k, nheads_k, headdim).
        causal: apply a causal mask. As in FlashAttention 2.1+, the mask is aligned to the
            bottom-right corner when seqlen_q != seqlen_k.
        softmax_scale: defaults to 1 / sqrt(headdim).
        return_softmax_lse: also return the (batch, nheads, seqlen_q) fp32 log-sum-exp.
    Returns:
        out: (batch_size, seqlen_q, nheads, headdim), same dtype as q.
    """
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** (-0.5)
    q, k, v = [_maybe_contiguous(x) for x in (q, k, v)]
    out, softmax_lse = flash_example_gpu.fwd(q, k, v, bool(causal), float(softmax_scale))
    if return_softmax_lse:
        return out, softmax_lse
    return out
