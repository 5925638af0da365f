#!/usr/bin/env python3
"""Compare flash_example_func with torch's scaled_dot_product_attention.

Runs every dtype x head dim x causal combination (plus a GQA and a seqlen_q != seqlen_k case)
and exits non-zero on any mismatch. Without a CUDA device it imports the extension, prints
"no GPU: skipped" and exits 0. Usable as a plain script or under pytest.
"""

import importlib.util
import itertools
import math
import sys

import torch

# Loads the compiled extension, which must load on any machine: imported in the default build,
# loaded as a torch op library in the stable-ABI one (flash_attn_interface.py).
import flash_example
from flash_example import flash_example_func

DTYPES = [torch.float16, torch.bfloat16]
HEAD_DIMS = [32, 64, 96, 128, 40, 80]  # 40/80 exercise the round-up to the 64/96 kernels
TOLERANCE = {torch.float16: 2e-2, torch.bfloat16: 2e-2}


def reference(q, k, v, causal, softmax_scale):
    """softmax(QK^T * scale) V in fp32, causal mask aligned bottom-right like FlashAttention 2."""
    qf, kf, vf = (x.float().transpose(1, 2) for x in (q, k, v))  # [b, h, s, d]
    if kf.shape[1] != qf.shape[1]:
        rep = qf.shape[1] // kf.shape[1]
        kf, vf = kf.repeat_interleave(rep, dim=1), vf.repeat_interleave(rep, dim=1)
    seqlen_q, seqlen_k = qf.shape[2], kf.shape[2]
    if causal and seqlen_q == seqlen_k:
        out = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True, scale=softmax_scale)
    elif causal:
        row = torch.arange(seqlen_q, device=q.device)[:, None]
        col = torch.arange(seqlen_k, device=q.device)[None, :]
        mask = col <= row + seqlen_k - seqlen_q
        out = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, attn_mask=mask, scale=softmax_scale)
        out = torch.where(mask.any(-1)[None, None, :, None], out, torch.zeros_like(out))
    else:
        out = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, scale=softmax_scale)
    return out.transpose(1, 2)


def run_case(dtype, head_dim, causal, batch=2, seqlen_q=197, seqlen_k=197, nheads=4, nheads_k=4):
    torch.manual_seed(0)
    q = torch.randn(batch, seqlen_q, nheads, head_dim, device="cuda", dtype=dtype)
    k = torch.randn(batch, seqlen_k, nheads_k, head_dim, device="cuda", dtype=dtype)
    v = torch.randn(batch, seqlen_k, nheads_k, head_dim, device="cuda", dtype=dtype)
    scale = 1.0 / math.sqrt(head_dim)
    out, lse = flash_example_func(q, k, v, causal=causal, return_softmax_lse=True)
    torch.cuda.synchronize()
    ref = reference(q, k, v, causal, scale)
    err = (out.float() - ref).abs().max().item()
    # Also check the log-sum-exp on rows that see at least one key.
    kf = k.float().repeat_interleave(nheads // nheads_k, dim=2)
    scores = torch.einsum("bqhd,bkhd->bhqk", q.float(), kf) * scale
    if causal:
        row = torch.arange(seqlen_q, device="cuda")[:, None]
        col = torch.arange(seqlen_k, device="cuda")[None, :]
        scores = scores.masked_fill(col > row + seqlen_k - seqlen_q, float("-inf"))
    lse_ref = torch.logsumexp(scores, dim=-1)
    finite = torch.isfinite(lse_ref)
    lse_err = (lse[finite] - lse_ref[finite]).abs().max().item() if finite.any() else 0.0
    ok = err <= TOLERANCE[dtype] and lse_err <= 1e-2 and torch.isfinite(out).all().item()
    name = (f"{str(dtype).replace('torch.', ''):9s} hdim={head_dim:3d} causal={str(causal):5s} "
            f"q={seqlen_q} k={seqlen_k} h={nheads}/{nheads_k}")
    print(f"{'ok  ' if ok else 'FAIL'} {name}  max_abs_err={err:.3e}  lse_err={lse_err:.3e}")
    return ok


def main():
    print(f"flash_example {flash_example.__version__} from {flash_example.__file__}")
    print(f"extension {importlib.util.find_spec('flash_example_cuda').origin}")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda})")
    if not torch.cuda.is_available():
        print("no GPU: skipped")
        return 0
    print(f"device: {torch.cuda.get_device_name()} (sm_{''.join(map(str, torch.cuda.get_device_capability()))})")
    results = []
    for dtype, head_dim, causal in itertools.product(DTYPES, HEAD_DIMS, [False, True]):
        results.append(run_case(dtype, head_dim, causal))
    # GQA and unequal sequence lengths (bottom-right causal alignment, fully masked rows).
    for dtype, causal in itertools.product(DTYPES, [False, True]):
        results.append(run_case(dtype, 64, causal, seqlen_q=128, seqlen_k=300, nheads=8, nheads_k=2))
        results.append(run_case(dtype, 128, causal, seqlen_q=300, seqlen_k=128, nheads=6, nheads_k=3))
        results.append(run_case(dtype, 32, causal, batch=1, seqlen_q=1, seqlen_k=1000))
    failed = results.count(False)
    print(f"{len(results) - failed}/{len(results)} cases passed")
    return 1 if failed else 0


def test_attention():  # pytest entry point
    assert main() == 0


if __name__ == "__main__":
    sys.exit(main())
