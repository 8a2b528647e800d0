#include "hooks/nccl_comms.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <new>
#include <unordered_map>

namespace profagent::hooks::nccl {
namespace {

struct Comm {
  uint64_t hash = 0;
  int32_t rank = 0;
  int32_t nranks = 1;
  bool world = false;
  uint64_t next_seq = 0;
  uint64_t splits = 0;
};

// The group of this thread: the sequence number each communicator got in it.
struct GroupSeq {
  ncclComm_t comm;
  uint64_t seq;
};

// A group over more communicators than this numbers the others' calls one by one (NCCL's own
// limit is higher, but a group spans a handful of communicators in practice).
constexpr int kGroupComms = 16;

struct ThreadGroup {
  int depth = 0;
  int count = 0;
  GroupSeq seqs[kGroupComms];
  Group group;
};

std::mutex g_mutex;  // leaf lock over the registry; never held across an NCCL or CUDA call
std::unordered_map<ncclComm_t, Comm>* g_comms = new std::unordered_map<ncclComm_t, Comm>;  // leaked
bool g_world_seen = false;
// The thread's group behind a pthread key, not static TLS: the agent's static TLS block has
// no room left (tests/preload/check_exports.py), and a key costs nothing until a group opens.
// A thread that ends inside a group leaks its ThreadGroup (NCCL would never finish it either).
pthread_key_t group_key() {
  static pthread_key_t key = [] {
    pthread_key_t k{};
    pthread_key_create(&k, nullptr);
    return k;
  }();
  return key;
}

ThreadGroup* thread_group() { return static_cast<ThreadGroup*>(pthread_getspecific(group_key())); }

// FNV-1a: stable across processes and builds (std::hash is neither promised).
uint64_t fnv1a(const void* data, size_t size, uint64_t hash = 1469598103934665603ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash & ((1ull << 53) - 1);  // JSON readers keep it exact
}

void add(ncclComm_t comm, Comm entry) noexcept {
  if (comm == nullptr) return;
  try {
    std::lock_guard lock(g_mutex);
    (*g_comms)[comm] = entry;
  } catch (...) {  // out of memory: its calls carry no communicator fields
  }
}

uint64_t take_seq(ncclComm_t comm, Comm& c) {
  ThreadGroup* g = thread_group();
  if (g == nullptr) return c.next_seq++;
  for (int i = 0; i < g->count; ++i) {
    if (g->seqs[i].comm == comm) return g->seqs[i].seq;
  }
  if (g->count < kGroupComms) g->seqs[g->count++] = {comm, c.next_seq};
  return c.next_seq++;
}

}  // namespace

void add_from_unique_id(ncclComm_t comm, const ncclUniqueId& id, int rank, int nranks) noexcept {
  Comm entry{fnv1a(id.internal, sizeof id.internal), rank, nranks, false, 0, 0};
  {
    std::lock_guard lock(g_mutex);
    entry.world = !g_world_seen;
    g_world_seen = true;
  }
  add(comm, entry);
}

void add_from_split(ncclComm_t parent, ncclComm_t child, int color, int rank, int nranks) noexcept {
  uint64_t key[3] = {0, 0, uint64_t(int64_t(color))};
  {
    std::lock_guard lock(g_mutex);
    auto found = g_comms->find(parent);
    if (found == g_comms->end()) return;
    key[0] = found->second.hash;
    key[1] = found->second.splits++;
  }
  if (child != nullptr) add(child, Comm{fnv1a(key, sizeof key), rank, nranks, false, 0, 0});
}

void add_all(const ncclComm_t* comms, int ndev) noexcept {
  static std::atomic<uint64_t> calls{0};
  const uint64_t key[2] = {uint64_t(getpid()), calls.fetch_add(1)};
  const uint64_t hash = fnv1a(key, sizeof key);
  for (int r = 0; r < ndev; ++r) add(comms[r], Comm{hash, r, ndev, false, 0, 0});
}

void remove(ncclComm_t comm) noexcept {
  std::lock_guard lock(g_mutex);
  g_comms->erase(comm);
}

void describe_call(ncclComm_t comm, CollectiveArgs& args) noexcept {
  std::lock_guard lock(g_mutex);
  auto found = g_comms->find(comm);
  if (found == g_comms->end()) return;  // a communicator made before the agent saw it
  Comm& c = found->second;
  args.comm_hash = c.hash;
  args.group_size = c.nranks;
  args.rank = c.rank;
  args.world_communicator = c.world ? 1 : 0;
  args.seq = take_seq(comm, c);
}

Group* begin_group() noexcept {
  if (ThreadGroup* open = thread_group()) {
    ++open->depth;
    return nullptr;
  }
  auto* g = new (std::nothrow) ThreadGroup;
  if (g == nullptr || pthread_setspecific(group_key(), g) != 0) {
    delete g;
    return nullptr;
  }
  g->depth = 1;
  return &g->group;
}

Group* current_group() noexcept {
  ThreadGroup* g = thread_group();
  return g != nullptr ? &g->group : nullptr;
}

bool end_group(Group* out) noexcept {
  ThreadGroup* g = thread_group();
  if (g == nullptr || --g->depth != 0) return false;  // nested, or unbalanced (NCCL refuses it)
  *out = g->group;
  pthread_setspecific(group_key(), nullptr);
  delete g;
  return true;
}

}  // namespace profagent::hooks::nccl
