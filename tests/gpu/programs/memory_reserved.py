"""Allocations through PyTorch's caching allocator (tensors of several sizes, some freed, the
cache kept), then torch.cuda.memory_reserved() and memory_allocated() at the end, after a
synchronisation, as one JSON line. The agent (PROFAGENT_PROFILE_MEMORY=1) must end its trace
with the same reserved total on device 0: the caching allocator's cudaMalloc segments."""
import json
import sys

import torch


def main():
    kept = []
    for i, mib in enumerate((1, 3, 8, 20, 64, 2, 150)):
        tensor = torch.empty(mib * (1 << 20) // 4, dtype=torch.float32, device="cuda")
        tensor.fill_(float(i))
        if i % 2 == 0:
            kept.append(tensor)
        del tensor
    small = [torch.ones(1000 + i, device="cuda") for i in range(50)]
    torch.cuda.synchronize()
    print(json.dumps({"reserved": torch.cuda.memory_reserved(0), "allocated": torch.cuda.memory_allocated(0),
                      "live_tensors": len(kept) + len(small)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
