// The device kernels of the simulated NCCL (kernels.cu), one per kind of work, named as
// NCCL 2.28 names its kernels (ncclDevKernel_<Func>_<Op>_<Type>_<Algo>_<Proto>), so tools see
// the names they see on a GPU. They never run (devsim times kernels, it does not execute them).
#pragma once

#include <cuda_runtime_api.h>

namespace ncclsim {

enum class Func { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, SendRecv };

// Launches the kernel of `func` on `stream` through the runtime's ordinary launch entry.
// `legacy`: NCCL 2.18's names (ncclKernel_<Func>_RING_LL_Sum_float), which tools written
// before 2.19 (HTA's straggler analysis) look for.
cudaError_t launch_kernel(Func func, cudaStream_t stream, bool legacy);

}  // namespace ncclsim
