// Bad input never crashes the loader: one line naming the file and what is wrong.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "agent/report/trace_loader.h"
#include "trace_files.h"

using namespace profagent::report;
using namespace profagent::report::test;

namespace {

constexpr const char* kGood = R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.5, "dur": 3},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11, "dur": 1, "args": {"correlation": 5}}
]})";

// Loads `text` from a file named `name`; returns the error line (REQUIREs that there is one).
std::string error_of(const std::string& name, const std::string& text, bool gzip = false) {
  const std::string path = gzip ? write_gzip(name, text) : write_file(name, text);
  std::string error;
  const std::optional<LoadedTrace> loaded = load_trace(path, error);
  CHECK_FALSE(loaded);
  CHECK(error.rfind(path + ": ", 0) == 0);  // starts with the file name
  CHECK(error.find('\n') == std::string::npos);
  return error;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the well-formed base case loads") {
  std::string error;
  const auto loaded = load_trace(write_file("good.json", kGood), error);
  REQUIRE(loaded);
  CHECK(loaded->trace.host.size() == 2);
}

TEST_CASE("a missing file") {
  std::string error;
  CHECK_FALSE(load_trace(temp_dir() + "/absent.json", error));
  CHECK(error.find("absent.json: cannot open it") != std::string::npos);
}

TEST_CASE("not JSON") {
  CHECK_THAT(error_of("text.json", "hello world"), Catch::Contains("does not start with a JSON object"));
  CHECK_THAT(error_of("array.json", "[1, 2]"), Catch::Contains("traceEvents[0] is not an object"));  // the array format
  CHECK_THAT(error_of("empty.json", ""), Catch::Contains("empty file"));
  CHECK_THAT(error_of("garbage_event.json", replaced(kGood, "\"ts\": 11", "\"ts\": 11 x")), Catch::Contains("event 1"));
  CHECK_THAT(error_of("trailing.json", std::string(kGood) + " {}"), Catch::Contains("bytes after the end"));
  CHECK_THAT(error_of("badmeta.json", replaced(kGood, "{\"traceEvents\"", "{\"a\": tru, \"traceEvents\"")),
             Catch::Contains("not valid JSON"));
}

TEST_CASE("a truncated file, plain and gzip") {
  const std::string good(kGood);
  for (std::size_t cut : {std::size_t(5), good.size() / 2, good.size() - 2}) {
    CHECK_THAT(error_of("cut.json", good.substr(0, cut)), Catch::Contains("truncated"));
  }
  const std::string gz = read_file(write_gzip("whole.json.gz", kGood));
  CHECK_THAT(error_of("cut.json.gz", gz.substr(0, gz.size() - 12)), Catch::Contains("truncated"));
}

TEST_CASE("not a trace: no traceEvents, or events that are not objects") {
  CHECK_THAT(error_of("notrace.json", R"({"schemaVersion": 1, "events": []})"), Catch::Contains("no \"traceEvents\""));
  CHECK_THAT(error_of("numbers.json", R"({"traceEvents": [1, 2]})"), Catch::Contains("traceEvents[0] is not an object"));
}

TEST_CASE("a trace with no event") {
  CHECK_THAT(error_of("zero.json", R"({"traceEvents": []})"), Catch::Contains("has no events"));
}

TEST_CASE("missing ts, dur or name") {
  CHECK_THAT(error_of("nots.json", replaced(kGood, "\"ts\": 10.5, ", "")), Catch::Contains("event 0 (\"aten::mm\"): no \"ts\""));
  CHECK_THAT(error_of("nodur.json", replaced(kGood, ", \"dur\": 1", "")), Catch::Contains("event 1 (\"cudaLaunchKernel\"): no \"dur\""));
  CHECK_THAT(error_of("noname.json", replaced(kGood, "\"name\": \"aten::mm\", ", "")), Catch::Contains("event 0: no \"name\""));
  CHECK_THAT(error_of("noph.json", replaced(kGood, "\"ph\": \"X\", ", "")), Catch::Contains("event 0 (\"aten::mm\"): no \"ph\""));
}

TEST_CASE("invalid UTF-8 in a name") {
  CHECK_THAT(error_of("utf8.json", replaced(kGood, "aten::mm", "aten::\xC3\x28mm")), Catch::Contains("UTF-8"));
  CHECK_THAT(error_of("utf8meta.json", replaced(kGood, "{\"traceEvents\"", "{\"host_name\": \"\xFF\", \"traceEvents\"")),
             Catch::Contains("UTF-8"));
}

TEST_CASE("fields of the wrong type") {
  CHECK_THAT(error_of("tsstring.json", replaced(kGood, "\"ts\": 10.5", "\"ts\": \"10.5\"")), Catch::Contains("\"ts\" is not a number"));
  CHECK_THAT(error_of("namenum.json", replaced(kGood, "\"name\": \"aten::mm\"", "\"name\": 7")), Catch::Contains("\"name\" is not a string"));
  CHECK_THAT(error_of("pidobj.json", replaced(kGood, "\"pid\": 1,", "\"pid\": {},")), Catch::Contains("\"pid\" is neither"));
  CHECK_THAT(error_of("argsarr.json", replaced(kGood, "\"args\": {\"correlation\": 5}", "\"args\": [5]")), Catch::Contains("\"args\" is not an object"));
  CHECK_THAT(error_of("events_obj.json", R"({"traceEvents": {"a": 1}})"), Catch::Contains("no \"traceEvents\" array"));
  CHECK_THAT(error_of("negdur.json", replaced(kGood, "\"dur\": 3", "\"dur\": -3")), Catch::Contains("negative \"dur\""));
}

TEST_CASE("times out of range or before the base: one line that says which") {
  CHECK_THAT(error_of("negts.json", replaced(kGood, "\"ts\": 10.5", "\"ts\": -5")),
             Catch::Contains("event 0 (\"aten::mm\"): \"ts\" is negative"));
  CHECK_THAT(error_of("ts1e308.json", replaced(kGood, "\"ts\": 10.5", "\"ts\": 1e308")),
             Catch::Contains("\"ts\" is out of range"));
  CHECK_THAT(error_of("ts93e14.json", replaced(kGood, "\"ts\": 10.5", "\"ts\": 9300000000000000")),
             Catch::Contains("\"ts\" is out of range"));
  CHECK_THAT(error_of("tsbig.json", replaced(kGood, "\"ts\": 10.5", "\"ts\": 99999999999999999999999")),
             Catch::Contains("\"ts\" is out of range"));
  CHECK_THAT(error_of("dur1e308.json", replaced(kGood, "\"dur\": 3", "\"dur\": 1e308")),
             Catch::Contains("\"dur\" is out of range"));
  CHECK_THAT(error_of("durneg.json", replaced(kGood, "\"dur\": 3", "\"dur\": -1e308")),
             Catch::Contains("\"dur\" is out of range"));
}

TEST_CASE("a time far away but representable is placed where it is") {
  std::string error;
  const auto loaded = load_trace(write_file("late.json", replaced(kGood, "\"ts\": 10.5", "\"ts\": 4e15")), error);
  REQUIRE(loaded);
  const auto& host = loaded->trace.host;
  REQUIRE(host.size() == 2);
  CHECK(std::max(host[0].start_ns, host[1].start_ns) == uint64_t(4e18));
}

TEST_CASE("escapes in names: a lone surrogate becomes U+FFFD, a bad escape is named") {
  std::string error;
  const auto loaded = load_trace(
      write_file("surrogate.json", replaced(kGood, "\"aten::mm\"", "\"a\\ud800b\\udc00c\\ud83d\\ude00\\u00e9\\n\\\"\"")),
      error);
  REQUIRE(loaded);
  std::vector<std::string> names;
  for (const auto& h : loaded->trace.host) names.push_back(h.name);
  CHECK(std::find(names.begin(), names.end(), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xF0\x9F\x98\x80\xC3\xA9\n\"") != names.end());
  CHECK_THAT(error_of("badescape.json", replaced(kGood, "\"aten::mm\"", "\"a\\qb\"")),
             Catch::Contains("\"name\" has a bad escape (\\q)"));
  CHECK_THAT(error_of("badu.json", replaced(kGood, "\"aten::mm\"", "\"a\\u12G4\"")),
             Catch::Contains("\"name\" has a bad \\u escape"));
}

TEST_CASE("a gzip file that expands too far is refused early, with the flag to raise the limit") {
  std::string events = "{\"traceEvents\": [";
  const std::string one = R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 1},)";
  for (int i = 0; i < 400000; ++i) events += one;  // ~36 MB that gzip makes ~100 KB
  events += R"({"ph": "X", "cat": "cpu_op", "name": "last", "pid": 1, "tid": 1, "ts": 2, "dur": 1}]})";
  const std::string error = error_of("bomb.json.gz", events, true);
  CHECK_THAT(error, Catch::Contains("gzip file expands more than 100 times"));
  CHECK_THAT(error, Catch::Contains("--max-gzip-ratio"));
  std::string why;
  StreamLimits unlimited;
  unlimited.max_gzip_ratio = 0;
  const auto loaded = load_trace(temp_dir() + "/bomb.json.gz", why, unlimited);
  REQUIRE(loaded);
  CHECK(loaded->trace.host.size() == 400001);
}
