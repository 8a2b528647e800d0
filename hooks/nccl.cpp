// NCCL (libnccl.so.2, unversioned symbols) interposed like the runtime: each collective and
// communicator call is an operator, with Kineto's communication arguments and the
// communicator's hash and sequence number (collector/event.h CollectiveArgs), and the id it
// pushes as the external correlation id links the kernels NCCL launches inside it. The calls
// between ncclGroupStart and ncclGroupEnd are one more operator, "ncclGroup", spanning the
// group, with the kernels its end launches: NCCL runs a group as one operation.
#include <nccl.h>

#include "hooks/hook.h"
#include "hooks/library.h"
#include "hooks/nccl_comms.h"

namespace profagent::hooks {
// The library descriptor (hooks/library.h). Its calls are operators with arguments, not the
// one-line runtime-call hooks of the template, so only the descriptor's resolution, failure
// value and first-use rule are used here.
struct Nccl : LibraryDefaults {
  using Error = ncclResult_t;
  static constexpr Error kSuccess = ncclSuccess;
  static constexpr Error kUnavailable = ncclSystemError;  // as a library that failed to load
  static constexpr const char* kUnavailableName = "ncclSystemError";
  static constexpr DeviceApi kDevice = DeviceApi::Cuda;  // its first call may be the first CUDA use
};
inline constexpr LibraryVersion kNccl2{"libnccl.so.2", nullptr, "libnccl.so."};
}  // namespace profagent::hooks

namespace {

using profagent::CollectiveArgs;
using profagent::HostEvent;
using Site = profagent::hooks::LibrarySite<profagent::hooks::Nccl>;
namespace collector = profagent::collector;
namespace comms = profagent::hooks::nccl;

// torch's scalar type names, which Kineto's `dtype` argument holds.
const char* dtype_name(ncclDataType_t type) noexcept {
  switch (type) {
    case ncclInt8: return "Char";
    case ncclUint8: return "Byte";
    case ncclInt32: return "Int";
    case ncclUint32: return "UInt32";
    case ncclInt64: return "Long";
    case ncclUint64: return "UInt64";
    case ncclFloat16: return "Half";
    case ncclFloat32: return "Float";
    case ncclFloat64: return "Double";
    case ncclBfloat16: return "BFloat16";
    case ncclFloat8e4m3: return "Float8_e4m3fn";
    case ncclFloat8e5m2: return "Float8_e5m2";
    default: return "unknown";
  }
}

uint64_t type_bytes(ncclDataType_t type) noexcept {
  switch (type) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

void record_operator(Site& site, uint64_t id, uint64_t start, ncclResult_t result, const CollectiveArgs* args) noexcept {
  HostEvent event{};
  event.start = start;
  event.end = collector::now();
  event.id = id;
  event.name = profagent::hooks::site_name(site);
  event.kind = uint8_t(profagent::EventKind::Operator);
  event.result = int16_t(result);
  if (result != ncclSuccess && result != ncclInProgress) event.flags |= profagent::kFlagFailed;
  if (args != nullptr) {
    event.arg1 = collector::record_collective(*args);
    if (event.arg1 != 0) event.flags |= profagent::kFlagCollective;
  }
  collector::record(event);
  collector::record_call_stack(id, event.end);
}

// One hooked call: the real function inside the operator's id scope; `after` sees the result
// before the event is recorded (communicator calls register what they made there).
template <typename Fn, typename After, typename... Args>
ncclResult_t call(Site& site, const CollectiveArgs* args, After&& after, Args... a) {
  auto* real = reinterpret_cast<Fn*>(profagent::hooks::resolve(site.real));
  if (real == nullptr) {
    profagent::hooks::report_unresolved(site);
    return profagent::hooks::Nccl::kUnavailable;
  }
  profagent::hooks::note_cuda_use();
  ncclResult_t result;
  if (!collector::operator_should_record()) {
    result = real(a...);
    after(result);
  } else {
    const uint64_t id = collector::new_event_id();
    const uint64_t start = collector::open_scope();
    result = profagent::hooks::call_with_external_id(id, real, a...);
    after(result);
    record_operator(site, id, start, result, args);
    collector::scope_closed();
  }
  if (collector::step_markers_armed()) collector::hooked_call_ended(site.real.name, nullptr);
  return result;
}

void nothing(ncclResult_t) noexcept {}

// Which message counts are per rank and grow with the communicator's size (all-gather's
// result, reduce-scatter's input, all-to-all's both), once the size is known.
enum class Scale { None, Out, In, Both };

// A collective or point-to-point call: numbered on its communicator, added to the group.
template <typename Fn, typename... Args>
ncclResult_t collective(Site& site, CollectiveArgs args, Scale scale, ncclComm_t comm, Args... a) {
  comms::describe_call(comm, args);
  const uint64_t n = uint64_t(args.group_size > 0 ? args.group_size : 1);
  if (scale == Scale::Out || scale == Scale::Both) args.out_nelems *= n;
  if (scale == Scale::In || scale == Scale::Both) args.in_nelems *= n, args.bytes *= n;
  if (comms::Group* open = comms::current_group()) {
    CollectiveArgs& group = open->args;
    if (group.calls++ == 0) {
      group.comm_hash = args.comm_hash, group.seq = args.seq, group.group_size = args.group_size;
      group.rank = args.rank, group.dtype = args.dtype, group.world_communicator = args.world_communicator;
    }
    group.in_nelems += args.in_nelems, group.out_nelems += args.out_nelems, group.bytes += args.bytes;
  }
  return call<Fn>(site, &args, nothing, a...);
}

CollectiveArgs make_args(const char* name, ncclDataType_t type, uint64_t in, uint64_t out) noexcept {
  CollectiveArgs args;
  args.collective = name;
  args.dtype = dtype_name(type);
  args.in_nelems = in;
  args.out_nelems = out;
  args.bytes = (in != 0 ? in : out) * type_bytes(type);
  return args;
}

int comm_size(ncclComm_t comm);
int comm_rank(ncclComm_t comm);

#define NCCL_SITE(name)                       \
  Site site_##name{#name, profagent::hooks::kNccl2};              \
  PROFAGENT_REGISTER_REAL_SYMBOL(nccl_##name, site_##name.real)

NCCL_SITE(ncclCommInitRank);
NCCL_SITE(ncclCommInitRankConfig);
NCCL_SITE(ncclCommInitAll);
NCCL_SITE(ncclCommSplit);
NCCL_SITE(ncclCommDestroy);
NCCL_SITE(ncclCommAbort);
NCCL_SITE(ncclCommCount);
NCCL_SITE(ncclCommUserRank);
NCCL_SITE(ncclAllReduce);
NCCL_SITE(ncclBroadcast);
NCCL_SITE(ncclBcast);
NCCL_SITE(ncclReduce);
NCCL_SITE(ncclAllGather);
NCCL_SITE(ncclReduceScatter);
NCCL_SITE(ncclAlltoAll);
NCCL_SITE(ncclSend);
NCCL_SITE(ncclRecv);
NCCL_SITE(ncclGroupStart);
NCCL_SITE(ncclGroupEnd);
// The group's operator: named, never resolved (no such NCCL function).
Site site_ncclGroup{"ncclGroup", profagent::hooks::kNccl2};

// The agent's own queries of a communicator it saw made (never recorded).
int comm_size(ncclComm_t comm) {
  auto* real = reinterpret_cast<decltype(ncclCommCount)*>(profagent::hooks::resolve(site_ncclCommCount.real));
  int n = 0;
  collector::AgentBusy busy;
  return real != nullptr && real(comm, &n) == ncclSuccess ? n : 0;
}

int comm_rank(ncclComm_t comm) {
  auto* real = reinterpret_cast<decltype(ncclCommUserRank)*>(profagent::hooks::resolve(site_ncclCommUserRank.real));
  int r = -1;
  collector::AgentBusy busy;
  return real != nullptr && real(comm, &r) == ncclSuccess ? r : -1;
}

}  // namespace

#define NCCL_EXPORT extern "C" __attribute__((visibility("default")))

NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  CollectiveArgs args;
  args.collective = "init", args.group_size = nranks, args.rank = rank;
  return call<decltype(ncclCommInitRank)>(site_ncclCommInitRank, &args, [&](ncclResult_t r) {
    if (r != ncclSuccess || comm == nullptr) return;
    comms::add_from_unique_id(*comm, id, rank, nranks);
    collector::note_communicator(rank, nranks);
  }, comm, nranks, id, rank);
}

NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                                ncclConfig_t* config) {
  CollectiveArgs args;
  args.collective = "init", args.group_size = nranks, args.rank = rank;
  return call<decltype(ncclCommInitRankConfig)>(site_ncclCommInitRankConfig, &args, [&](ncclResult_t r) {
    if ((r != ncclSuccess && r != ncclInProgress) || comm == nullptr) return;
    comms::add_from_unique_id(*comm, id, rank, nranks);
    collector::note_communicator(rank, nranks);
  }, comm, nranks, id, rank, config);
}

NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms_out, int ndev, const int* devlist) {
  return call<decltype(ncclCommInitAll)>(site_ncclCommInitAll, nullptr, [&](ncclResult_t r) {
    if (r == ncclSuccess && comms_out != nullptr) comms::add_all(comms_out, ndev);
  }, comms_out, ndev, devlist);
}

NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  CollectiveArgs args;
  args.collective = "split";
  return call<decltype(ncclCommSplit)>(site_ncclCommSplit, &args, [&](ncclResult_t r) {
    if (r != ncclSuccess || newcomm == nullptr) return;
    ncclComm_t child = *newcomm;
    comms::add_from_split(comm, child, color, child ? comm_rank(child) : -1, child ? comm_size(child) : 0);
  }, comm, color, key, newcomm, config);
}

NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return call<decltype(ncclCommDestroy)>(site_ncclCommDestroy, nullptr, [&](ncclResult_t) { comms::remove(comm); }, comm);
}

NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return call<decltype(ncclCommAbort)>(site_ncclCommAbort, nullptr, [&](ncclResult_t) { comms::remove(comm); }, comm);
}

NCCL_EXPORT ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                       ncclComm_t comm, cudaStream_t stream) {
  return collective<decltype(ncclAllReduce)>(site_ncclAllReduce, make_args("allreduce", type, count, count), Scale::None, comm,
                                             send, recv, count, type, op, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  CollectiveArgs args = make_args("broadcast", type, count, count);
  args.root = root;
  return collective<decltype(ncclBroadcast)>(site_ncclBroadcast, args, Scale::None, comm, send, recv, count, type, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                                   cudaStream_t stream) {
  CollectiveArgs args = make_args("broadcast", type, count, count);
  args.root = root;
  return collective<decltype(ncclBcast)>(site_ncclBcast, args, Scale::None, comm, buff, count, type, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                                    int root, ncclComm_t comm, cudaStream_t stream) {
  CollectiveArgs args = make_args("reduce", type, count, count);
  args.root = root;
  return collective<decltype(ncclReduce)>(site_ncclReduce, args, Scale::None, comm, send, recv, count, type, op, root, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t type,
                                       ncclComm_t comm, cudaStream_t stream) {
  return collective<decltype(ncclAllGather)>(site_ncclAllGather, make_args("allgather", type, sendcount, sendcount),
                                             Scale::Out, comm, send, recv, sendcount, type, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t type,
                                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective<decltype(ncclReduceScatter)>(site_ncclReduceScatter,
                                                 make_args("reduce_scatter", type, recvcount, recvcount), Scale::In,
                                                 comm, send, recv, recvcount, type, op, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                                      cudaStream_t stream) {
  return collective<decltype(ncclAlltoAll)>(site_ncclAlltoAll, make_args("alltoall", type, count, count), Scale::Both,
                                            comm, send, recv, count, type, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                  cudaStream_t stream) {
  CollectiveArgs args = make_args("send", type, count, 0);
  args.peer = peer;
  return collective<decltype(ncclSend)>(site_ncclSend, args, Scale::None, comm, send, count, type, peer, comm, stream);
}

NCCL_EXPORT ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                                  cudaStream_t stream) {
  CollectiveArgs args = make_args("recv", type, 0, count);
  args.peer = peer;
  return collective<decltype(ncclRecv)>(site_ncclRecv, args, Scale::None, comm, recv, count, type, peer, comm, stream);
}

// The group's operator opens at the outermost start and is recorded at the outermost end,
// whose real call launches the group's kernels under the group's id.
NCCL_EXPORT ncclResult_t ncclGroupStart() {
  if (comms::Group* group = comms::begin_group()) {
    group->id = collector::new_event_id();
    group->start = collector::now();
    group->args.collective = "coalesced";
    group->args.calls = 0;
  }
  auto* real = reinterpret_cast<decltype(ncclGroupStart)*>(profagent::hooks::resolve(site_ncclGroupStart.real));
  if (real == nullptr) {
    profagent::hooks::report_unresolved(site_ncclGroupStart);
    return profagent::hooks::Nccl::kUnavailable;
  }
  return real();
}

NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  auto* real = reinterpret_cast<decltype(ncclGroupEnd)*>(profagent::hooks::resolve(site_ncclGroupEnd.real));
  if (real == nullptr) {
    profagent::hooks::report_unresolved(site_ncclGroupEnd);
    return profagent::hooks::Nccl::kUnavailable;
  }
  comms::Group group;
  if (!comms::end_group(&group) || group.id == 0 || !collector::operator_should_record()) return real();
  const ncclResult_t result = profagent::hooks::call_with_external_id(group.id, real);
  record_operator(site_ncclGroup, group.id, group.start, result, group.args.calls > 0 ? &group.args : nullptr);
  return result;
}
