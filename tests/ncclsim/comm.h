// A simulated communicator, its knobs, and the collective model: every collective launches
// one kernel on the caller's stream; the kernel starts when the stream reaches it (the rank's
// arrival) and ends when the last rank of the communicator has arrived plus the time its bytes
// take over a ring at the modelled bandwidth, so an early rank's kernel shows the wait.
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "kernels.h"
#include "rendezvous.h"

struct ncclComm {
  std::string name;          // the shared-memory segment's name
  int rank = 0;
  int nranks = 1;
  int device = 0;
  uint64_t seq = 0;          // collectives (groups count once) launched on it so far
  uint64_t split_rounds = 0;
  std::atomic<int> async_error{ncclSuccess};
  ncclsim::Rendezvous rendezvous;
};

namespace ncclsim {

// DEVSIM_NCCL_* variables, read once.
struct Knobs {
  double bandwidth_gbps = 50.0;  // DEVSIM_NCCL_BANDWIDTH_GBPS: the ring's bus bandwidth
  int slow_rank = -1;            // DEVSIM_NCCL_SLOW_RANK: this rank reaches every collective...
  uint64_t slow_ns = 0;          // DEVSIM_NCCL_SLOW_US: ...this much later on its device
  int64_t timeout_ms = 20000;    // DEVSIM_NCCL_TIMEOUT_MS: a rank missing longer is gone
  bool legacy_names = false;     // DEVSIM_NCCL_KERNEL_NAMES=legacy: NCCL 2.18's kernel names
};
const Knobs& knobs();

// Ring time of moving `bytes` of `func` among `nranks` (NCCL's bus-bandwidth factors).
uint64_t transfer_ns(Func func, uint64_t bytes, int nranks);

// Opens and joins communicator `name` as `rank` of `nranks` on the current device.
ncclResult_t init_comm(ncclComm_t* out, const std::string& name, int nranks, int rank);

// One launch of the collective model: `bytes` of `func` on `comm`, on `stream`.
ncclResult_t launch_collective(ncclComm_t comm, Func func, uint64_t bytes, cudaStream_t stream);

size_t type_size(ncclDataType_t type);

}  // namespace ncclsim
