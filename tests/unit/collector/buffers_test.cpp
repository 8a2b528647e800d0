// Per-thread buffers: exact counts, many writers, exhaustion counted, exited threads kept.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <algorithm>
#include <set>
#include <thread>

#include "collector/chunk_pool.h"
#include "test_util.h"

using namespace profagent;
using namespace profagent::collector;
using namespace profagent::collector::testing;

TEST_CASE("one thread: every recorded event comes back once, in order", "[buffers]") {
  drain_all();  // leftovers of other tests
  constexpr uint64_t kMarker = 0xB001;
  constexpr uint64_t kCount = 3 * kEventsPerChunk + 17;  // spans chunk boundaries
  for (uint64_t i = 0; i < kCount; ++i) record(make_event(EventKind::Runtime, i, i + 1, kMarker));
  DrainResult all;
  std::vector<HostEvent> events = drain_marked(kMarker, &all);
  REQUIRE(events.size() == kCount);
  for (uint64_t i = 0; i < kCount; ++i) REQUIRE(events[i].start == i);
  CHECK(all.dropped == 0);
  CHECK(drain_marked(kMarker).empty());  // a second drain sees nothing new
}

TEST_CASE("the thread's identity is captured at registration", "[buffers]") {
  drain_all();
  std::thread worker([] {
    pthread_setname_np(pthread_self(), "h4-named");
    record(make_event(EventKind::Runtime, 1, 2, 0xB002));
  });
  worker.join();
  DrainResult result = drain_all();
  REQUIRE(result.threads.size() == 1);
  CHECK(result.threads[0].name == "h4-named");
  CHECK(result.threads[0].pid == uint32_t(getpid()));
  CHECK(result.threads[0].tid != this_tid());
}

TEST_CASE("many writers: exact counts per thread, events of exited threads kept", "[buffers]") {
  drain_all();
  constexpr int kThreads = 8;
  constexpr uint64_t kPerThread = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (uint64_t i = 0; i < kPerThread; ++i) {
        record(make_event(EventKind::Runtime, i, i, 0xB100 + uint64_t(t)));
      }
    });
  }
  for (auto& thread : threads) thread.join();  // all exited before the drain
  DrainResult result = drain_all();
  CHECK(result.dropped == 0);
  std::set<uint32_t> tids;
  for (const ThreadEvents& thread : result.threads) {
    REQUIRE(thread.events.size() == kPerThread);
    uint64_t marker = thread.events.front().arg1;
    CHECK(std::all_of(thread.events.begin(), thread.events.end(),
                      [&](const HostEvent& e) { return e.arg1 == marker; }));
    tids.insert(thread.tid);
  }
  CHECK(tids.size() == kThreads);
}

TEST_CASE("short-lived threads recycle their buffers", "[buffers]") {
  drain_all();
  // Far more threads than the 128-chunk test arena could hold one chunk each, drained in
  // rounds: retired buffers give their chunks back and are reused.
  uint64_t seen = 0;
  for (int round = 0; round < 10; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 50; ++t) {
      threads.emplace_back([] { record(make_event(EventKind::Runtime, 1, 2, 0xB200)); });
    }
    for (auto& thread : threads) thread.join();
    DrainResult result;
    seen += drain_marked(0xB200, &result).size();
    CHECK(result.dropped == 0);
  }
  CHECK(seen == 500);
  CHECK(registered_buffer_count() < 100);
}

TEST_CASE("an exhausted pool drops and counts, and recovers after a drain", "[buffers]") {
  drain_all();
  const uint64_t capacity = uint64_t(pool_capacity_chunks()) * kEventsPerChunk;
  const uint64_t attempts = capacity + 5000;
  std::thread writer([&] {
    for (uint64_t i = 0; i < attempts; ++i) record(make_event(EventKind::Runtime, i, i, 0xB300));
  });
  writer.join();
  DrainResult result;
  uint64_t kept = drain_marked(0xB300, &result).size();
  CHECK(kept + result.dropped == attempts);
  CHECK(result.dropped >= 5000);
  // Every chunk came back: a new writer fills the pool again.
  std::thread again([] {
    for (int i = 0; i < 1000; ++i) record(make_event(EventKind::Runtime, 1, 1, 0xB301));
  });
  again.join();
  CHECK(drain_marked(0xB301, &result).size() == 1000);
  CHECK(result.dropped == 0);
}

TEST_CASE("ids are unique across threads and below 2^53", "[ids]") {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  std::vector<std::vector<uint64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ids, t] {
      for (int i = 0; i < kPerThread; ++i) ids[t].push_back(new_event_id());
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<uint64_t> all;
  for (const auto& list : ids) {
    for (uint64_t id : list) {
      REQUIRE(id < (uint64_t(1) << 53));
      REQUIRE(id != 0);
      all.insert(id);
    }
  }
  CHECK(all.size() == size_t(kThreads) * kPerThread);
  drain_all();
}

TEST_CASE("the chunk pool hands out each chunk once and takes them back", "[pool]") {
  ChunkPool pool(4 * kChunkBytes);
  REQUIRE(pool.capacity() == 4);
  std::set<Chunk*> chunks;
  for (int i = 0; i < 4; ++i) chunks.insert(pool.pop());
  CHECK(chunks.size() == 4);
  CHECK(chunks.count(nullptr) == 0);
  CHECK(pool.pop() == nullptr);
  for (Chunk* chunk : chunks) pool.push(chunk);
  std::set<Chunk*> again;
  for (int i = 0; i < 4; ++i) again.insert(pool.pop());
  CHECK(again == chunks);
  CHECK(pool.pop() == nullptr);
}

TEST_CASE("the chunk pool takes at most what it is allowed", "[pool]") {
  ChunkPool pool(64 * kChunkBytes, 5 * kChunkBytes);
  CHECK(pool.capacity() == 5);
  CHECK(pool.requested_bytes() == 64 * kChunkBytes);
  CHECK(pool.reserved_bytes() == 5 * kChunkBytes);
}

// Under an address-space limit (ulimit -v) 256 MiB cannot be reserved: the pool halves its
// reservation until one fits. In a child: the limit stays there.
// Sanitizer runtimes reserve terabytes of shadow memory, so the limit cannot be set there.
// [kernel_memory]: what the kernel does with the process's memory; qemu-user keeps RLIMIT_AS
// to itself (it would limit the emulator's own mappings), so the cross build leaves it out.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_CASE("under an address-space limit the chunk pool reserves what fits", "[pool][kernel_memory]") {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    size_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = pages * size_t(sysconf(_SC_PAGESIZE)) + (24u << 20);
    const rlimit as{limit, limit};
    if (setrlimit(RLIMIT_AS, &as) != 0) _exit(2);
    ChunkPool pool(256u << 20);
    const bool halved = pool.requested_bytes() == (256u << 20) && pool.reserved_bytes() >= kMinReserveBytes &&
                        pool.reserved_bytes() <= (16u << 20) && pool.pop() != nullptr;
    _exit(halved ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
#endif

TEST_CASE("the chunk pool survives concurrent pop/push", "[pool]") {
  ChunkPool pool(16 * kChunkBytes);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        Chunk* a = pool.pop();
        Chunk* b = pool.pop();
        if (!a || !b || a == b) failures.fetch_add(1);
        if (a) pool.push(a);
        if (b) pool.push(b);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(failures.load() == 0);
  std::set<Chunk*> all;
  for (int i = 0; i < 16; ++i) all.insert(pool.pop());
  CHECK(all.size() == 16);
  CHECK(all.count(nullptr) == 0);
}

namespace {
// Whether every page of [address, address + bytes) is resident (mincore).
bool resident(const void* address, size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((bytes + page - 1) / page);
  if (mincore(const_cast<void*>(address), bytes, pages.data()) != 0) return false;
  return std::all_of(pages.begin(), pages.end(), [](unsigned char p) { return (p & 1) != 0; });
}

bool kernel_populates_on_request() {
#ifdef MADV_POPULATE_WRITE
  void* probe = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool ok = probe != MAP_FAILED && madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
  if (probe != MAP_FAILED) munmap(probe, 4096);
  return ok;
#else
  return false;
#endif
}
}  // namespace

// [kernel_memory]: qemu-user answers madvise(MADV_POPULATE_WRITE) with success and does
// nothing (a hint it may ignore), so residency cannot be checked there.
TEST_CASE("warming commits the next chunks' pages and never touches contents", "[pool][kernel_memory]") {
  ChunkPool pool(8 * kChunkBytes);
  Chunk* first = pool.pop();
  REQUIRE(first != nullptr);
  first->events[0].id = 0xC0FFEE;
  first->committed.store(1);
  const auto* base = reinterpret_cast<const std::byte*>(first);  // chunks are carved in order
  const bool populates = kernel_populates_on_request();
  if (populates) CHECK_FALSE(resident(base + 3 * kChunkBytes, kChunkBytes));

  pool.warm_ahead(2);  // chunks 1 and 2: the next two past the one handed out
  CHECK(pool.handed_out() == 1);
  if (populates) {
    CHECK(resident(base + 1 * kChunkBytes, 2 * kChunkBytes));
    CHECK_FALSE(resident(base + 3 * kChunkBytes, kChunkBytes));
  } else {
    WARN("this kernel has no MADV_POPULATE_WRITE: residency not checked");
  }
  CHECK(first->events[0].id == 0xC0FFEE);
  CHECK(first->committed.load() == 1);

  std::set<Chunk*> rest;
  for (int i = 0; i < 7; ++i) rest.insert(pool.pop());
  CHECK(rest.size() == 7);
  CHECK(rest.count(nullptr) == 0);
  CHECK(pool.pop() == nullptr);
  pool.warm_ahead(4);  // nothing left to warm: harmless
  CHECK(pool.handed_out() == 8);
}
