"""torch.cuda.nvtx ranges around GPU work: RANGES outer ranges gpu_check_nvtx_outer, each with an
inner gpu_check_nvtx_inner around a matrix product, plus one torch.cuda.nvtx.mark. Prints one
JSON line with the names and counts a profiler should show."""
import json
import sys

import torch

RANGES = 5


def main():
    a = torch.randn(512, 512, device="cuda")
    for _ in range(RANGES):
        torch.cuda.nvtx.range_push("gpu_check_nvtx_outer")
        torch.cuda.nvtx.range_push("gpu_check_nvtx_inner")
        a = torch.tanh(a @ a)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.mark("gpu_check_nvtx_mark")
    torch.cuda.synchronize()
    print(json.dumps({"ranges": {"gpu_check_nvtx_outer": RANGES, "gpu_check_nvtx_inner": RANGES},
                      "marks": {"gpu_check_nvtx_mark": 1}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
