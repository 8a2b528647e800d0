// The crash-safe partial trace: after every append the published file is a complete trace of
// every interval so far, the swap file one append behind, and both hold exactly what the whole
// window's trace holds for those intervals.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "exporters/chrome_trace.h"
#include "exporters/output_file.h"
#include "exporters/partial_trace.h"
#include "synthetic_trace.h"

using namespace profagent;
using namespace profagent::exporters;
using nlohmann::json;

namespace {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/profagent_partial_XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

json parse_file(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());  // throws (fails the test) on anything but a complete document
}

// The sample window moved `k` ms later, with its own ids and correlations: one interval.
Trace interval(int k) {
  Trace t = test::sample_trace();
  const uint64_t shift = uint64_t(k) * 1'000'000;
  t.start_ns = test::kT0;
  t.end_ns = test::kT0 + shift + 500'000;
  for (HostRecord& h : t.host) {
    h.start_ns += shift, h.end_ns += shift;
    if (h.id) h.id += 100 * uint64_t(k);
    h.external_id += 100 * uint64_t(k);
    if (h.correlation) h.correlation += 100 * uint32_t(k);
  }
  for (DeviceRecord& d : t.device) {
    d.start_ns += shift, d.end_ns += shift;
    d.correlation += 100 * uint32_t(k);
    d.external_id += 100 * uint64_t(k);
  }
  return t;
}

// The intervals as one window, as the collector's join would give it.
Trace whole(int intervals) {
  Trace all = interval(0);
  for (int k = 1; k < intervals; ++k) {
    Trace next = interval(k);
    const int64_t offset = int64_t(all.host.size());
    for (HostRecord& h : next.host) {
      if (h.parent != kNoIndex) h.parent += offset;
      all.host.push_back(h);
    }
    for (DeviceRecord& d : next.device) {
      if (d.host != kNoIndex) d.host += offset;
      all.device.push_back(d);
    }
    all.end_ns = next.end_ns;
  }
  return all;
}

// The trace's events; the made-up correlation of a call without device work (no flow starts
// there) is left out: a whole window numbers them above its largest id, a partial trace from 2^31.
std::multiset<std::string> trace_events(const json& doc) {
  std::set<uint64_t> flows;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "s") flows.insert(e["id"].get<uint64_t>());
  }
  std::multiset<std::string> events;
  for (json e : doc["traceEvents"]) {
    if (e.contains("args") && e["args"].contains("correlation") && !flows.count(e["args"]["correlation"].get<uint64_t>())) {
      e["args"].erase("correlation");
    }
    events.insert(e.dump());
  }
  return events;
}

// Every call's correlation, each once in the trace (calls of different intervals never share one).
bool correlations_unique(const json& doc) {
  std::set<uint64_t> seen;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "cuda_runtime" || !e["args"].contains("correlation")) continue;
    if (!seen.insert(e["args"]["correlation"].get<uint64_t>()).second) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("every append publishes a complete trace of all intervals so far", "[exporters][partial]") {
  TempDir dir;
  std::string error;
  PartialTrace partial(OutputDir::create(dir.path(), &error), "node7.4242.r3.w1");
  const std::string published = dir.path() + "/node7.4242.r3.w1.trace.json.partial";
  const std::string swap = dir.path() + "/.node7.4242.r3.w1.trace.json.partial.swap";
  CHECK(names_in(dir.path()).empty());  // nothing before the first append
  for (int k = 0; k < 4; ++k) {
    Trace next = interval(k);
    REQUIRE(partial.append(next) == "");
    const json doc = parse_file(published);
    CHECK(doc["profagent_partial"]["intervals"] == k + 1);
    CHECK(doc["profagent_partial"]["host_events"] == 8 * (k + 1));
    CHECK(doc["traceName"] == "node7.4242.r3.w1.trace.json");
    // Exactly the events the whole window's trace has for these intervals.
    std::string text;
    StringStream stream(text);
    JsonWriter w(stream);
    REQUIRE(write_chrome_trace(whole(k + 1), "node7.4242.r3.w1.trace.json", w));
    const json expected = json::parse(text);
    CHECK(trace_events(doc) == trace_events(expected));
    CHECK(correlations_unique(doc));
    CHECK(doc["baseTimeNanoseconds"] == expected["baseTimeNanoseconds"]);
    CHECK(doc["distributedInfo"] == expected["distributedInfo"]);
    if (k > 0) {  // the other file is one append behind, and complete too
      CHECK(parse_file(swap)["profagent_partial"]["intervals"] == k);
    }
  }
  CHECK(partial.intervals() == 4);
  partial.remove();
  CHECK(names_in(dir.path()).empty());
}

TEST_CASE("a partial trace that cannot be written says why and publishes nothing", "[exporters][partial]") {
  TempDir dir;
  std::string error;
  std::unique_ptr<OutputDir> out = OutputDir::create(dir.path() + "/sub", &error);
  REQUIRE(out);
  // The swap name is taken by a directory: it cannot be created as a file.
  REQUIRE(::mkdir((dir.path() + "/sub/.s.trace.json.partial.swap").c_str(), 0755) == 0);
  PartialTrace partial(std::move(out), "s");
  Trace first_interval = interval(0), second_interval = interval(1);
  const std::string first = partial.append(first_interval);
  CHECK(first.find("cannot create") != std::string::npos);
  CHECK(partial.append(second_interval) == first);  // later appends fail the same way
  CHECK(::access((dir.path() + "/sub/s.trace.json.partial").c_str(), F_OK) != 0);
}

TEST_CASE("finish: a streamed window's segments and tail become its trace, with the whole window's head", "[exporters][partial]") {
  TempDir dir;
  std::string error;
  PartialTrace partial(OutputDir::create(dir.path(), &error), "node7.4242.w1", 64 << 10);
  for (int k = 0; k < 3; ++k) {
    Trace segment = interval(k);
    REQUIRE(partial.append(segment) == "");
  }
  Trace tail = interval(3);
  tail.drops.host_events = 1234;  // known at the window's end only
  tail.streamed.segments = 3;
  tail.streamed.host_events = partial.host_events();
  REQUIRE(partial.finish(tail, "node7.4242.w1.trace.json", streamed_trace_keys(tail)) == "");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"node7.4242.w1.trace.json"});
  CHECK(partial.location() == dir.path() + "/node7.4242.w1.trace.json");
  const json doc = parse_file(dir.path() + "/node7.4242.w1.trace.json");
  CHECK_FALSE(doc.contains("profagent_partial"));
  CHECK(doc["traceName"] == "node7.4242.w1.trace.json");
  CHECK(doc["profagent_streamed"]["segments"] == 3);
  CHECK(doc["profagent_streamed"]["host_events"] == 24);
  CHECK(doc["profagent_streamed"]["tail_host_events"] == 8);
  CHECK(doc["profagent_drops"]["host_events"] == 1234);  // the head is the tail's, not the first segment's
  // Exactly the events of the whole window.
  std::string text;
  StringStream stream(text);
  JsonWriter w(stream);
  Trace all = whole(4);
  REQUIRE(write_chrome_trace(all, "node7.4242.w1.trace.json", w));
  const json expected = json::parse(text);
  CHECK(trace_events(doc) == trace_events(expected));
  CHECK(correlations_unique(doc));
  CHECK(doc["baseTimeNanoseconds"] == expected["baseTimeNanoseconds"]);
  partial.remove();  // the finished trace stays
  CHECK(names_in(dir.path()) == std::vector<std::string>{"node7.4242.w1.trace.json"});
}

TEST_CASE("appends not published reach the published trace with the next publish or the finish", "[exporters][partial]") {
  TempDir dir;
  std::string error;
  PartialTrace partial(OutputDir::create(dir.path(), &error), "node7.4242.w2", 64 << 10);
  const std::string published = dir.path() + "/node7.4242.w2.trace.json.partial";
  auto expected_events = [](int intervals) {
    std::string text;
    StringStream stream(text);
    JsonWriter w(stream);
    REQUIRE(write_chrome_trace(whole(intervals), "node7.4242.w2.trace.json", w));
    return trace_events(json::parse(text));
  };
  Trace first = interval(0);
  REQUIRE(partial.append(first) == "");
  for (int k = 1; k < 3; ++k) {  // written to the swap file only: the published trace stays as it was
    Trace segment = interval(k);
    REQUIRE(partial.append(segment, false) == "");
    const json doc = parse_file(published);
    CHECK(doc["profagent_partial"]["intervals"] == 1);
    CHECK(trace_events(doc) == expected_events(1));
  }
  Trace fourth = interval(3);
  REQUIRE(partial.append(fourth) == "");
  json doc = parse_file(published);
  CHECK(doc["profagent_partial"]["intervals"] == 4);
  CHECK(doc["profagent_partial"]["host_events"] == 32);
  CHECK(trace_events(doc) == expected_events(4));
  CHECK(correlations_unique(doc));
  Trace fifth = interval(4);
  REQUIRE(partial.append(fifth, false) == "");
  Trace tail = interval(5);
  tail.streamed.segments = 5;
  tail.streamed.host_events = partial.host_events();
  CHECK(partial.host_events() == 40);
  REQUIRE(partial.finish(tail, "node7.4242.w2.trace.json", streamed_trace_keys(tail)) == "");
  doc = parse_file(dir.path() + "/node7.4242.w2.trace.json");
  CHECK(doc["profagent_streamed"]["host_events"] == 40);
  CHECK(trace_events(doc) == expected_events(6));  // every event once, the unpublished fifth too
  CHECK(correlations_unique(doc));
}
