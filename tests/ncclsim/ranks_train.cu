// One rank of a data-parallel training job on the simulated NCCL, started once per rank by a
// launcher (launch_ranks.sh) with RANK, LOCAL_RANK and WORLD_SIZE set, as torchrun sets them
// (or RANKS_TRAIN_RANK and RANKS_TRAIN_WORLD_SIZE, variables the profiler does not know).
// Each step: forward on the compute stream, then the backward pass in two halves; the
// gradients of the first half are all-reduced on a communication stream while the second half
// computes, the second half's right after; the optimizer waits for both all-reduces.
//
//   ranks_train STEPS [--die RANK STEP]    (--die: that rank is killed at the start of that step)
//   ranks_train STEPS --group              (the two all-reduces as one ncclGroupStart/End group,
//                                           after the whole backward pass, on a split communicator)
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <signal.h>
#include <unistd.h>

extern "C" void profagent_step(void) __attribute__((weak));  // the agent's step marker, if loaded

__global__ void forward_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
__global__ void backward_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
__global__ void optimizer_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] -= 0.1f;
}

namespace {

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoi(text) : fallback;
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "ranks_train: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

bool ok(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return true;
  std::fprintf(stderr, "ranks_train: %s: %s\n", what, ncclGetErrorString(r));
  return false;
}

constexpr int kElements = 1 << 20;          // parameters per half: 4 MiB of float gradients
constexpr int kThreads = 256;

struct Streams {
  cudaStream_t compute, comm;
  cudaEvent_t first_half, second_half, reduced;
};

bool step(const Streams& s, ncclComm_t comm, float* grads) {
  const int blocks = (kElements + kThreads - 1) / kThreads;
  float* half2 = grads + kElements;
  forward_kernel<<<blocks, kThreads, 0, s.compute>>>(grads, kElements);
  backward_kernel<<<blocks, kThreads, 0, s.compute>>>(half2, kElements);
  if (!ok(cudaEventRecord(s.second_half, s.compute), "record")) return false;
  if (!ok(cudaStreamWaitEvent(s.comm, s.second_half, 0), "wait")) return false;
  if (!ok(ncclAllReduce(half2, half2, kElements, ncclFloat, ncclSum, comm, s.comm), "all-reduce 1")) return false;
  backward_kernel<<<blocks, kThreads, 0, s.compute>>>(grads, kElements);
  if (!ok(cudaEventRecord(s.first_half, s.compute), "record")) return false;
  if (!ok(cudaStreamWaitEvent(s.comm, s.first_half, 0), "wait")) return false;
  if (!ok(ncclAllReduce(grads, grads, kElements, ncclFloat, ncclSum, comm, s.comm), "all-reduce 2")) return false;
  if (!ok(cudaEventRecord(s.reduced, s.comm), "record")) return false;
  if (!ok(cudaStreamWaitEvent(s.compute, s.reduced, 0), "wait")) return false;
  optimizer_kernel<<<2 * blocks, kThreads, 0, s.compute>>>(grads, 2 * kElements);
  return ok(cudaStreamSynchronize(s.compute), "synchronize");
}

// The grouped variant: both halves reduced in one group on a communicator split from the world
// (one colour: the same ranks), as frameworks coalesce small gradient buckets.
bool grouped_step(const Streams& s, ncclComm_t comm, float* grads) {
  const int blocks = (kElements + kThreads - 1) / kThreads;
  forward_kernel<<<blocks, kThreads, 0, s.compute>>>(grads, kElements);
  backward_kernel<<<2 * blocks, kThreads, 0, s.compute>>>(grads, 2 * kElements);
  if (!ok(cudaEventRecord(s.second_half, s.compute), "record")) return false;
  if (!ok(cudaStreamWaitEvent(s.comm, s.second_half, 0), "wait")) return false;
  if (!ok(ncclGroupStart(), "group start")) return false;
  if (!ok(ncclAllReduce(grads, grads, kElements, ncclFloat, ncclSum, comm, s.comm), "grouped all-reduce 1") ||
      !ok(ncclAllReduce(grads + kElements, grads + kElements, kElements, ncclFloat, ncclSum, comm, s.comm),
          "grouped all-reduce 2") ||
      !ok(ncclGroupEnd(), "group end")) {
    return false;
  }
  if (!ok(cudaEventRecord(s.reduced, s.comm), "record")) return false;
  if (!ok(cudaStreamWaitEvent(s.compute, s.reduced, 0), "wait")) return false;
  optimizer_kernel<<<2 * blocks, kThreads, 0, s.compute>>>(grads, 2 * kElements);
  return ok(cudaStreamSynchronize(s.compute), "synchronize");
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int rank = env_int("RANK", env_int("RANKS_TRAIN_RANK", 0));
  const int world = env_int("WORLD_SIZE", env_int("RANKS_TRAIN_WORLD_SIZE", 1)), local = env_int("LOCAL_RANK", 0);
  const bool dies = argc > 4 && std::strcmp(argv[2], "--die") == 0 && std::atoi(argv[3]) == rank;
  const int die_at = dies ? std::atoi(argv[4]) : -1;
  const bool grouped = argc > 2 && std::strcmp(argv[2], "--group") == 0;
  int devices = 0;
  if (!ok(cudaGetDeviceCount(&devices), "device count") || !ok(cudaSetDevice(local % devices), "set device")) return 1;
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  if (!ok(ncclGetUniqueId(&id), "unique id") || !ok(ncclCommInitRank(&comm, world, id, rank), "init")) return 1;
  if (grouped) {
    ncclComm_t split = nullptr;
    if (!ok(ncclCommSplit(comm, 0, rank, &split, nullptr), "split")) return 1;
    comm = split;
  }
  Streams s{};
  float* grads = nullptr;
  if (!ok(cudaStreamCreateWithFlags(&s.compute, cudaStreamNonBlocking), "stream") ||
      !ok(cudaStreamCreateWithFlags(&s.comm, cudaStreamNonBlocking), "stream") ||
      !ok(cudaEventCreateWithFlags(&s.first_half, cudaEventDisableTiming), "event") ||
      !ok(cudaEventCreateWithFlags(&s.second_half, cudaEventDisableTiming), "event") ||
      !ok(cudaEventCreateWithFlags(&s.reduced, cudaEventDisableTiming), "event") ||
      !ok(cudaMalloc(&grads, 2 * kElements * sizeof(float)), "malloc")) {
    return 1;
  }
  for (int i = 0; i < steps; ++i) {
    if (i == die_at) {
      std::fprintf(stderr, "ranks_train: rank %d dies at step %d\n", rank, i);
      kill(getpid(), SIGKILL);  // as the OOM killer ends a rank: nothing of the process runs after
    }
    if (!(grouped ? grouped_step(s, comm, grads) : step(s, comm, grads))) return 1;
    if (profagent_step) profagent_step();
  }
  ncclCommDestroy(comm);
  cudaFree(grads);
  std::printf("rank %d of %d: %d steps\n", rank, world, steps);
  std::printf("ranks_train: PASSED\n");
  return 0;
}
