"""A Triton kernel launched LAUNCHES times (Triton launches through the driver API, cuLaunchKernel,
so the agent sees it only through CUDA's tool injection and CUPTI). Prints one JSON line:
{"kernel": <name>, "launches": N, "correct": true}."""
import json
import sys

import torch
import triton
import triton.language as tl

LAUNCHES = 20


@triton.jit
def gpu_check_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def main():
    n = 1 << 20
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    for _ in range(LAUNCHES):
        gpu_check_add_kernel[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    correct = bool(torch.allclose(out, x + y))
    print(json.dumps({"kernel": "gpu_check_add_kernel", "launches": LAUNCHES, "correct": correct}))
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
