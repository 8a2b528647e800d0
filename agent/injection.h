// How the agent reaches calls no hook can interpose: CUDA's tool injection (the path Nsight
// Systems takes). At cuInit the driver dlopens the library named by CUDA_INJECTION64_PATH and
// calls its InitializeInjection(); libprofagent.so exports it, and names itself in that
// variable for its own process when nobody else did, so the driver hands it CUPTI's callbacks
// for driver-API-only and statically linked programs (collector/cupti_callbacks.h).
#pragma once

namespace profagent::agent {

inline constexpr const char* kCudaInjectionVariable = "CUDA_INJECTION64_PATH";

// At load, while the process is single-threaded (setenv is not thread-safe later): sets
// CUDA_INJECTION64_PATH to this library when it is unset and device tracing is wanted. A value
// set by someone else is never touched: that tool owns CUPTI (the device backend then says so).
void claim_cuda_injection() noexcept;

}  // namespace profagent::agent
