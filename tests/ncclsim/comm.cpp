#include "comm.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ops.h"  // devsim: set_next_launch_gate

namespace ncclsim {
namespace {

double env_double(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (*end != '\0' || v < 0) {
    std::fprintf(stderr, "[devsim-nccl] %s=%s is not a number >= 0: using %g\n", name, text, fallback);
    return fallback;
  }
  return v;
}

Knobs read_knobs() {
  Knobs k;
  k.bandwidth_gbps = env_double("DEVSIM_NCCL_BANDWIDTH_GBPS", k.bandwidth_gbps);
  if (k.bandwidth_gbps <= 0) k.bandwidth_gbps = 50.0;
  const char* slow = std::getenv("DEVSIM_NCCL_SLOW_RANK");
  if (slow != nullptr && *slow != '\0') k.slow_rank = int(env_double("DEVSIM_NCCL_SLOW_RANK", -1));
  k.slow_ns = uint64_t(env_double("DEVSIM_NCCL_SLOW_US", 0) * 1000.0);
  k.timeout_ms = int64_t(env_double("DEVSIM_NCCL_TIMEOUT_MS", double(k.timeout_ms)));
  const char* names = std::getenv("DEVSIM_NCCL_KERNEL_NAMES");
  k.legacy_names = names != nullptr && std::strcmp(names, "legacy") == 0;
  return k;
}

}  // namespace

const Knobs& knobs() {
  static const Knobs k = read_knobs();
  return k;
}

size_t type_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

// Bus factors as NCCL's performance notes state them: a ring all-reduce moves 2(n-1)/n of the
// buffer through each link, all-gather and reduce-scatter (n-1)/n of the whole result,
// broadcast and reduce the buffer once; a send/receive moves its bytes once.
uint64_t transfer_ns(Func func, uint64_t bytes, int nranks) {
  const double n = nranks;
  double factor = 1.0;
  if (func == Func::AllReduce) factor = 2.0 * (n - 1) / n;
  if (func == Func::AllGather || func == Func::ReduceScatter || func == Func::AlltoAll) factor = (n - 1) / n;
  return uint64_t(double(bytes) * factor / knobs().bandwidth_gbps);  // GB/s = bytes per ns
}

ncclResult_t init_comm(ncclComm_t* out, const std::string& name, int nranks, int rank) {
  if (out == nullptr || nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  auto* comm = new ncclComm;
  comm->name = name;
  comm->rank = rank;
  comm->nranks = nranks;
  cudaGetDevice(&comm->device);
  std::string error;
  if (!comm->rendezvous.open(name, nranks, &error)) {
    std::fprintf(stderr, "[devsim-nccl] %s\n", error.c_str());
    delete comm;
    return ncclSystemError;
  }
  if (!comm->rendezvous.wait_joined(knobs().timeout_ms)) {
    std::fprintf(stderr, "[devsim-nccl] rank %d: not all %d ranks joined %s\n", rank, nranks, name.c_str());
    delete comm;
    return ncclSystemError;
  }
  if (rank == 0) comm->rendezvous.unlink();  // every rank has it mapped: the name can go
  *out = comm;
  return ncclSuccess;
}

ncclResult_t launch_collective(ncclComm_t comm, Func func, uint64_t bytes, cudaStream_t stream) {
  if (comm == nullptr) return ncclInvalidArgument;
  if (comm->async_error.load() != ncclSuccess) return ncclResult_t(comm->async_error.load());
  const uint64_t seq = comm->seq++;
  const uint64_t delay = knobs().slow_rank == comm->rank ? knobs().slow_ns : 0;
  const uint64_t transfer = transfer_ns(func, bytes, comm->nranks);
  devsim::set_next_launch_gate([comm, seq, delay, transfer](uint64_t start) {
    const uint64_t arrival = start + delay;
    const uint64_t last = comm->rendezvous.arrive(comm->rank, seq, arrival, knobs().timeout_ms);
    if (last == 0) {  // a rank never came: the kernel ends now and the communicator is broken
      std::fprintf(stderr, "[devsim-nccl] rank %d: collective %llu of %s: a rank did not arrive\n", comm->rank,
                   (unsigned long long)seq, comm->name.c_str());
      comm->async_error.store(ncclRemoteError);
      return std::pair<uint64_t, uint64_t>{arrival, monotonic_ns()};
    }
    return std::pair<uint64_t, uint64_t>{arrival, last + transfer};
  });
  return launch_kernel(func, stream, knobs().legacy_names) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

}  // namespace ncclsim
