// The partial writer's lock is never held across the device flush (CUPTI): a backend whose
// flush asks, from another thread, whether finish_partial can take the lock meanwhile — the
// lock a window's export and the exit flush wait for. Once where a streamed window's segment is
// cut (drain_streamed_window, the exit's path), once where the agent's thread peeks an interval
// for the partial trace. Over the real collector and agent (agent/partial_writer.h), the
// segments' trace read back from disk.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "agent/config.h"
#include "agent/partial_writer.h"
#include "collector/api.h"
#include "collector/device_backend.h"
#include "collector/session.h"
#include "collector/thread_buffer.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

// A device backend with no device work, whose flush runs the armed probe (once).
class ProbingBackend final : public DeviceBackend {
 public:
  bool start() noexcept override { return true; }
  void push_external_id(uint64_t) noexcept override {}
  void pop_external_id() noexcept override {}
  void flush() noexcept override {
    std::function<void()> probe;
    {
      std::lock_guard lock(mutex_);
      probe.swap(probe_);
    }
    if (probe) probe();
  }
  DeviceBatch drain() noexcept override { return {}; }
  std::string status() const override { return "probing"; }
  void disable_in_child() noexcept override {}

  // At the next flush: whether finish_partial, from a thread of its own, took the writer's
  // lock (it waits 2 s for it at most), into the future returned.
  std::future<bool> arm() {
    auto result = std::make_shared<std::promise<bool>>();
    std::future<bool> future = result->get_future();
    std::lock_guard lock(mutex_);
    probe_ = [result] {
      bool taken = false;
      // Window 0: no window's partial is finished or removed; only the lock is taken.
      std::thread([&] { taken = agent::finish_partial(0, false); }).join();
      result->set_value(taken);
    };
    return future;
  }

 private:
  std::mutex mutex_;
  std::function<void()> probe_;
};

ProbingBackend& backend() {
  static auto* b = new ProbingBackend;
  return *b;
}

std::string out_dir() {
  static const std::string dir = [] {
    char path[] = "/tmp/profagent_partial_lock_XXXXXX";
    return std::string(mkdtemp(path) ? path : "/tmp");
  }();
  return dir;
}

// The config of the test process's one partial writer (it is configured once per process):
// streamed past 1 MiB of host events, an interval due at once.
const agent::Config& config() {
  static const agent::Config* c = [] {
    auto* made = new agent::Config;
    made->output_dir = out_dir();
    made->stream_after_mb = 1;
    made->partial_interval_ms = 1;
    return made;
  }();
  return *c;
}

void start_once() {
  static const bool started = [] {
    SessionOptions options;
    options.device_backend = &backend();
    options.config_pairs = [] { return ConfigPairs{{"PROFAGENT_CUPTI", "auto"}}; };
    if (!start(options)) return false;
    cuda_in_use();  // the device backend runs (and is flushed) from here on
    agent::start_partial_writer(config());
    return true;
  }();
  REQUIRE(started);
}

void runtime_calls(size_t count) {
  const NameId name = intern("cudaMemsetAsync");
  for (size_t i = 0; i < count; ++i) {
    HostEvent e{};
    e.id = new_event_id(), e.start = now(), e.end = now(), e.kind = uint8_t(EventKind::Runtime), e.name = name;
    record(e);
  }
}

// The text of the first file in the output folder whose name ends with `suffix`.
std::string read_output(const std::string& suffix) {
  DIR* dir = opendir(out_dir().c_str());
  if (dir == nullptr) return {};
  std::string text;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::ifstream file(out_dir() + "/" + name);
    std::stringstream s;
    s << file.rdbuf();
    text = s.str();
    break;
  }
  closedir(dir);
  return text;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a streamed window's segment is cut without the partial writer's lock", "[partial_lock]") {
  start_once();
  set_state(RecordState::Record);
  const size_t events = (size_t(1) << 20) / kChunkBytes * kEventsPerChunk + 4 * kEventsPerChunk;
  runtime_calls(events);
  std::future<bool> lock_free = backend().arm();
  agent::drain_streamed_window();  // the exit's path: this thread cuts, and flushes CUPTI
  REQUIRE(lock_free.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(lock_free.get());
  // The segments were appended all the same: every taken call is in the streamed trace.
  const std::string trace = read_output(".trace.json.partial");
  CHECK(occurrences(trace, "\"cudaMemsetAsync\"") >= events - kEventsPerChunk);
  freeze_window();  // the window ends (its tail is not exported here)
}

TEST_CASE("an interval of the partial trace is peeked without the partial writer's lock", "[partial_lock]") {
  start_once();
  set_state(RecordState::Record);
  runtime_calls(100);
  std::future<bool> lock_free = backend().arm();
  // As the device poller does at each tick: once the first interval is due (1 ms after the
  // start), the agent's thread starts and peeks.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (lock_free.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready &&
         std::chrono::steady_clock::now() < deadline) {
    agent::partial_writer_tick();
  }
  REQUIRE(lock_free.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(lock_free.get());
}
