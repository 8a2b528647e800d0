// CUDA's tool injection, as the real driver does it: at the first initialisation of CUDA in
// a process (cuInit, which the real runtime calls at its own first initialisation), the
// library named by CUDA_INJECTION64_PATH is loaded with dlopen and its exported
// `int InitializeInjection(void)` is called once. This is how Nsight Systems and NVIDIA's
// cupti_trace_injection sample attach to a program without LD_PRELOAD
// (https://docs.nvidia.com/cupti/main/main.html#cupti-injection).
#pragma once

namespace devsim {

// Idempotent and re-entrant: the injected library may call CUDA from InitializeInjection (the
// nested call returns at once on the injecting thread); other threads wait until it returned.
// A missing library or symbol prints one line on stderr and is not retried.
void run_tool_injection_once();

}  // namespace devsim
