// The exported NCCL API of the simulated libnccl.so.2, declared by the toolkit's real nccl.h.
// Communicators, collectives and point-to-point calls; between ncclGroupStart and ncclGroupEnd
// calls are held and launched at the end as one kernel per communicator and stream, as NCCL
// fuses a group into one operation. Buffers are left untouched: devsim runs no kernel.
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "comm.h"

#define NCCLSIM_EXPORT extern "C" __attribute__((visibility("default")))

using ncclsim::Func;

namespace {

struct Pending {
  ncclComm_t comm;
  cudaStream_t stream;
  Func func;
  uint64_t bytes;
};

thread_local int tls_group_depth = 0;
thread_local std::vector<Pending> tls_group;

std::string id_text(const ncclUniqueId& id) {
  return std::string(id.internal, strnlen(id.internal, sizeof id.internal));
}

// Launches what a group held: one kernel per (communicator, stream), of the only function
// used there, else a send/receive kernel; the bytes add up.
ncclResult_t flush_group() {
  std::vector<Pending> held;
  held.swap(tls_group);
  ncclResult_t result = ncclSuccess;
  for (size_t i = 0; i < held.size(); ++i) {
    if (held[i].comm == nullptr) continue;
    Pending merged = held[i];
    for (size_t j = i + 1; j < held.size(); ++j) {
      if (held[j].comm != merged.comm || held[j].stream != merged.stream) continue;
      if (held[j].func != merged.func) merged.func = Func::SendRecv;
      merged.bytes += held[j].bytes;
      held[j].comm = nullptr;
    }
    ncclResult_t r = ncclsim::launch_collective(merged.comm, merged.func, merged.bytes, merged.stream);
    if (r != ncclSuccess) result = r;
  }
  return result;
}

ncclResult_t submit(ncclComm_t comm, Func func, size_t count, ncclDataType_t type, cudaStream_t stream) {
  if (comm == nullptr) return ncclInvalidArgument;
  const size_t size = ncclsim::type_size(type);
  if (size == 0) return ncclInvalidArgument;
  if (tls_group_depth > 0) {
    tls_group.push_back({comm, stream, func, uint64_t(count) * size});
    return ncclSuccess;
  }
  return ncclsim::launch_collective(comm, func, uint64_t(count) * size, stream);
}

}  // namespace

NCCLSIM_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

// NCCL_COMM_ID set: every rank gets the same id from it (real NCCL's bootstrap address works
// that way too), so a launcher can start N processes without passing an id between them.
NCCLSIM_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return ncclInvalidArgument;
  std::string name = "/devsim_nccl.";
  if (const char* fixed = std::getenv("NCCL_COMM_ID"); fixed != nullptr && *fixed != '\0') {
    for (const char* c = fixed; *c != '\0' && name.size() < 100; ++c) name += std::isalnum(*c) ? *c : '_';
  } else {
    name += std::to_string(getpid()) + "." + std::to_string(std::random_device{}());
  }
  std::memset(id->internal, 0, sizeof id->internal);
  std::memcpy(id->internal, name.data(), std::min(name.size(), sizeof id->internal - 1));
  return ncclSuccess;
}

NCCLSIM_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  return ncclsim::init_comm(comm, id_text(id), nranks, rank);
}

NCCLSIM_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                                   ncclConfig_t*) {
  return ncclsim::init_comm(comm, id_text(id), nranks, rank);
}

// One process, `ndev` ranks: each rank joins from a thread of its own (the init barrier).
NCCLSIM_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev < 1) return ncclInvalidArgument;
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  std::string name = id_text(id) + ".all";
  std::vector<ncclResult_t> results(size_t(ndev), ncclSuccess);
  std::vector<std::thread> joiners;
  for (int r = 0; r < ndev; ++r) {
    joiners.emplace_back([&, r] {
      cudaSetDevice(devlist != nullptr ? devlist[r] : r);
      results[size_t(r)] = ncclsim::init_comm(&comms[r], name, ndev, r);
    });
  }
  for (auto& t : joiners) t.join();
  for (ncclResult_t r : results) {
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

// Ranks of one colour form a communicator ordered by (key, old rank); NCCL_SPLIT_NOCOLOR gets none.
NCCLSIM_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t*) {
  if (comm == nullptr || newcomm == nullptr) return ncclInvalidArgument;
  const uint64_t round = comm->split_rounds++;
  ncclsim::SplitVote votes[ncclsim::kMaxRanks];
  if (!comm->rendezvous.vote(comm->rank, round, color, key, votes, ncclsim::knobs().timeout_ms)) return ncclRemoteError;
  *newcomm = nullptr;
  if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
  int size = 0, rank = 0;
  for (int r = 0; r < comm->nranks; ++r) {
    if (votes[r].color != color) continue;
    ++size;
    if (votes[r].key < key || (votes[r].key == key && r < comm->rank)) ++rank;
  }
  std::string name = comm->name + ".s" + std::to_string(round) + "c" + std::to_string(color);
  return ncclsim::init_comm(newcomm, name, size, rank);
}

// The communicator stays allocated: kernels still in flight on the device refer to it.
NCCLSIM_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) { return comm ? ncclSuccess : ncclInvalidArgument; }
NCCLSIM_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) { return comm ? ncclSuccess : ncclInvalidArgument; }
NCCLSIM_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) { return comm ? ncclSuccess : ncclInvalidArgument; }

NCCLSIM_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}

NCCLSIM_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

NCCLSIM_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}

NCCLSIM_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (comm == nullptr || error == nullptr) return ncclInvalidArgument;
  *error = ncclResult_t(comm->async_error.load());
  return ncclSuccess;
}

NCCLSIM_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  static const char* const kText[] = {"no error", "unhandled cuda error", "unhandled system error",
                                      "internal error", "invalid argument", "invalid usage",
                                      "remote process exited or there was a network error", "NCCL operation in progress"};
  return unsigned(result) < sizeof kText / sizeof *kText ? kText[result] : "unknown result code";
}

NCCLSIM_EXPORT const char* ncclGetLastError(ncclComm_t) { return ""; }

NCCLSIM_EXPORT ncclResult_t ncclAllReduce(const void*, void*, size_t count, ncclDataType_t type, ncclRedOp_t,
                                          ncclComm_t comm, cudaStream_t stream) {
  return submit(comm, Func::AllReduce, count, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclBroadcast(const void*, void*, size_t count, ncclDataType_t type, int,
                                          ncclComm_t comm, cudaStream_t stream) {
  return submit(comm, Func::Broadcast, count, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclBcast(void*, size_t count, ncclDataType_t type, int, ncclComm_t comm,
                                      cudaStream_t stream) {
  return submit(comm, Func::Broadcast, count, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclReduce(const void*, void*, size_t count, ncclDataType_t type, ncclRedOp_t, int,
                                       ncclComm_t comm, cudaStream_t stream) {
  return submit(comm, Func::Reduce, count, type, stream);
}

// All-gather and reduce-scatter move the whole result: count per rank times the ranks.
NCCLSIM_EXPORT ncclResult_t ncclAllGather(const void*, void*, size_t sendcount, ncclDataType_t type,
                                          ncclComm_t comm, cudaStream_t stream) {
  return submit(comm, Func::AllGather, comm ? sendcount * size_t(comm->nranks) : 0, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclReduceScatter(const void*, void*, size_t recvcount, ncclDataType_t type,
                                              ncclRedOp_t, ncclComm_t comm, cudaStream_t stream) {
  return submit(comm, Func::ReduceScatter, comm ? recvcount * size_t(comm->nranks) : 0, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclAlltoAll(const void*, void*, size_t count, ncclDataType_t type, ncclComm_t comm,
                                         cudaStream_t stream) {
  return submit(comm, Func::AlltoAll, comm ? count * size_t(comm->nranks) : 0, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclSend(const void*, size_t count, ncclDataType_t type, int, ncclComm_t comm,
                                     cudaStream_t stream) {
  return submit(comm, Func::SendRecv, count, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclRecv(void*, size_t count, ncclDataType_t type, int, ncclComm_t comm,
                                     cudaStream_t stream) {
  return submit(comm, Func::SendRecv, count, type, stream);
}

NCCLSIM_EXPORT ncclResult_t ncclGroupStart() {
  ++tls_group_depth;
  return ncclSuccess;
}

NCCLSIM_EXPORT ncclResult_t ncclGroupEnd() {
  if (tls_group_depth == 0) return ncclInvalidUsage;
  return --tls_group_depth == 0 ? flush_group() : ncclSuccess;
}
