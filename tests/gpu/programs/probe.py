"""What this Python offers the GPU checks, as one JSON line: versions of torch, triton, cupy,
numpy, pandas; whether torch sees a CUDA device (its name, capability, memory); and which
CUDA libraries the process loaded, and from where, once torch has run a kernel. Never fails:
what cannot be imported is reported as null."""
import importlib
import json
import sys


def version(module_name):
    try:
        return getattr(importlib.import_module(module_name), "__version__", "unknown")
    except Exception as error:  # noqa: BLE001 - any import failure is the answer
        return None if isinstance(error, ImportError) else f"import failed: {error}"


def loaded_libraries():
    wanted = ("libcudart", "libcupti", "libnccl", "libcuda.so", "libnvrtc", "libcublas", "libcudnn",
              "libnvToolsExt", "libnvtx", "libprofagent")
    found = {}
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if "/" in line else ""
                name = path.rsplit("/", 1)[-1]
                for prefix in wanted:
                    if name.startswith(prefix):
                        found.setdefault(name, path)
    except OSError:
        pass
    return found


def main():
    facts = {"python": sys.version.split()[0], "executable": sys.executable}
    for name in ("torch", "triton", "cupy", "numpy", "pandas"):
        facts[name] = version(name)
    try:
        import torch
        facts["torch_cuda"] = torch.version.cuda
        facts["cuda_available"] = bool(torch.cuda.is_available())
        if facts["cuda_available"]:
            properties = torch.cuda.get_device_properties(0)
            facts["device"] = properties.name
            facts["capability"] = f"{properties.major}.{properties.minor}"
            facts["memory_gib"] = round(properties.total_memory / 2**30, 1)
            facts["cudnn"] = torch.backends.cudnn.version()
            (torch.ones(8, device="cuda") * 2).sum().item()
            try:
                facts["nccl"] = str(torch.cuda.nccl.version())
            except Exception as error:  # noqa: BLE001
                facts["nccl"] = f"unavailable: {error}"
    except Exception as error:  # noqa: BLE001
        facts["torch_error"] = f"{type(error).__name__}: {error}"
        facts.setdefault("cuda_available", False)
    facts["libraries"] = loaded_libraries()
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
