#!/usr/bin/env python3
# Checks a FlashAttention 3 wheel fabuild built against torch's own attention on the GPU (an
# H100 or H200: FlashAttention 3 is sm_90a): the forward pass, fp16 and bf16, head dims 64 and
# 128 (the minimal profile's kernels), causal or not, batched and varlen.
# Usage: scripts/gpu-check-flash-attn3.py [WHEELHOUSE]  (installs the wheel into /tmp/fa3_t)
import glob, os, subprocess, sys
wheelhouse = sys.argv[1] if len(sys.argv) > 1 else "wheelhouse"
wheels = sorted(glob.glob(f"{wheelhouse}/fa*/torch*/cu*/**/flash_attn_3-*.whl", recursive=True))
if not wheels:
    sys.exit(f"no flash_attn_3 wheel under {wheelhouse}")
wheel = wheels[-1]
print("wheel:", wheel, os.path.getsize(wheel), "bytes")
subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", "/tmp/fa3_t", wheel],
               check=True)
sys.path.insert(0, "/tmp/fa3_t")
import torch
import torch.nn.functional as F
from flash_attn_interface import flash_attn_func, flash_attn_varlen_func

print("torch", torch.__version__, torch.cuda.get_device_name(0))
torch.manual_seed(0)


def first(x):
    return x[0] if isinstance(x, tuple) else x


def sdpa(q, k, v, causal):  # (b, s, h, d) in and out
    return F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v)), is_causal=causal).transpose(1, 2)


worst, checks = 0.0, 0
with torch.no_grad():
    for dtype in (torch.float16, torch.bfloat16):
        for hd in (64, 128):
            for causal in (False, True):
                q, k, v = [torch.randn(2, 1024, 8, hd, device="cuda", dtype=dtype) for _ in range(3)]
                err = (first(flash_attn_func(q, k, v, causal=causal)).float() - sdpa(q, k, v, causal).float()).abs().max().item()
                # varlen: three sequences of different lengths packed into one batch
                lens = [300, 1024, 77]
                cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), device="cuda", dtype=torch.int32)
                qs, ks, vs = [torch.randn(sum(lens), 8, hd, device="cuda", dtype=dtype) for _ in range(3)]
                out = first(flash_attn_varlen_func(qs, ks, vs, cu, cu, max(lens), max(lens), causal=causal))
                verr = 0.0
                for i, n in enumerate(lens):
                    a, b = cu[i].item(), cu[i + 1].item()
                    ref = sdpa(qs[None, a:b], ks[None, a:b], vs[None, a:b], causal)[0]
                    verr = max(verr, (out[a:b].float() - ref.float()).abs().max().item())
                print(f"{str(dtype):15} hdim {hd:3} causal {causal!s:5}  fwd max|err| {err:.2e}  varlen max|err| {verr:.2e}")
                worst = max(worst, err, verr)
                checks += 2
print(f"{checks} checks, max error {worst:.2e}")
assert worst < 2e-2, worst
print("GPU CHECK PASSED")
