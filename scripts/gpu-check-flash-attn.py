#!/usr/bin/env python3
# Checks a FlashAttention wheel fabuild built against torch's own attention on the GPU:
# forward and dq, fp16 and bf16, head dims 64/128/256, causal or not. A build without backward
# (the minimal profile) is checked forward only.
# Usage: scripts/gpu-check-flash-attn.py [WHEELHOUSE]  (installs the wheel into /tmp/fa_t)
import glob, subprocess, sys
wheelhouse = sys.argv[1] if len(sys.argv) > 1 else "wheelhouse"
# A profile's wheels sit one folder deeper (fa<ver>/torch<series>/cu<xyz>/<profile>/).
wheel = sorted(glob.glob(f"{wheelhouse}/fa*/torch*/cu*/flash_attn-*.whl") +
               glob.glob(f"{wheelhouse}/fa*/torch*/cu*/*/flash_attn-*.whl"))[-1]
print("wheel:", wheel)
subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", "/tmp/fa_t", wheel], check=True)
sys.path.insert(0, "/tmp/fa_t")
import torch
import torch.nn.functional as F
from flash_attn import flash_attn_func
print("torch", torch.__version__, torch.cuda.get_device_name(0))
torch.manual_seed(0)
worst = 0.0
backward = True
for dtype in (torch.float16, torch.bfloat16):
    for hd in (64, 128, 256):
        for causal in (False, True):
            q, k, v = [torch.randn(2, 1024, 8, hd, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3)]
            out = flash_attn_func(q, k, v, causal=causal)
            ref = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v)), is_causal=causal).transpose(1, 2)
            err = (out.float() - ref.float()).abs().max().item()
            g = torch.randn_like(out)
            gerr = "-"
            if backward:
                try:
                    dq, = torch.autograd.grad(out, q, g)
                except RuntimeError as e:  # the build's own refusal, e.g. a minimal profile
                    if "does not support backward" not in str(e):
                        raise
                    backward = False
                    print("no backward in this build: forward only")
                else:
                    dq_ref, = torch.autograd.grad(ref, q, g)
                    gerr = f"{(dq.float() - dq_ref.float()).abs().max().item():.2e}"
            print(f"{str(dtype):15} hdim {hd:3} causal {causal!s:5}  fwd max|err| {err:.2e}  dq max|err| {gerr}")
            worst = max(worst, err)
print("max forward error", worst)
assert worst < 2e-2, worst
print("GPU CHECK PASSED")
