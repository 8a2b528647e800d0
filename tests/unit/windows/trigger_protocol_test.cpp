// The lines `profagent trigger` and the agent exchange (agent/trigger_protocol.h), and the
// launcher options of on-demand tracing and size limits.
#include <catch2/catch.hpp>

#include "agent/launcher/launcher.h"
#include "agent/trigger_protocol.h"

using namespace profagent::agent::trigger;

TEST_CASE("trigger: requests read back as written, a directory may hold spaces") {
  Request status;
  status.status = true;
  REQUIRE(parse_request(format(status)));
  CHECK(parse_request(format(status))->status);

  Request steps;
  steps.first = 12, steps.steps = 3, steps.output_dir = "/tmp/my prof dir=x";
  const auto read = parse_request(format(steps));
  REQUIRE(read);
  CHECK_FALSE(read->status);
  CHECK(read->first == 12);
  CHECK(read->steps == 3);
  CHECK(read->duration_ms == 0);
  CHECK(read->output_dir == "/tmp/my prof dir=x");

  Request cancel;
  cancel.cancel = true, cancel.first = 40;
  const auto read_cancel = parse_request(format(cancel));
  REQUIRE(read_cancel);
  CHECK(read_cancel->cancel);
  CHECK_FALSE(read_cancel->status);
  CHECK(read_cancel->first == 40);

  Request timed;
  timed.duration_ms = 500;
  const auto read_timed = parse_request(format(timed));
  REQUIRE(read_timed);
  CHECK(read_timed->duration_ms == 500);
  CHECK(read_timed->output_dir.empty());
}

TEST_CASE("trigger: bad requests are refused") {
  for (const char* bad : {"", "\n", "record\n", "record first=1 steps=0 dir=/x\n", "record first=x steps=1 dir=/x\n",
                          "record first=1 steps=2\n", "record ms=0 dir=/x\n", "status\nstatus\n", "stop\n", "cancel\n", "cancel first=0\n",
                          "cancel first=x\n"}) {
    INFO(bad);
    CHECK_FALSE(parse_request(bad));
  }
}

TEST_CASE("trigger: answers read back as written") {
  Answer status;
  status.ok = true, status.step = 41, status.busy = true, status.first = 42, status.last = 44;
  auto read = parse_answer(format(status));
  REQUIRE(read);
  CHECK((read->ok && read->step == 41 && read->busy && !read->timed && read->first == 42 && read->last == 44));

  Answer timed_busy;
  timed_busy.ok = true, timed_busy.step = 7, timed_busy.busy = true, timed_busy.timed = true;
  read = parse_answer(format(timed_busy));
  REQUIRE(read);
  CHECK((read->busy && read->timed));

  Answer armed;
  armed.ok = true, armed.first = 42, armed.last = 44, armed.output_dir = "/out dir";
  read = parse_answer(format(armed));
  REQUIRE(read);
  CHECK((read->first == 42 && read->last == 44 && read->output_dir == "/out dir"));

  Answer refused;
  refused.error = "already triggered: steps 1-2 are being recorded";
  read = parse_answer(format(refused));
  REQUIRE(read);
  CHECK_FALSE(read->ok);
  CHECK(read->error == refused.error);
  CHECK_FALSE(parse_answer("garbage\n"));
}

TEST_CASE("launcher: --on-demand, --max-events and --min-duration-us set their variables") {
  std::string error;
  const auto options = profagent::launcher::parse_arguments(
      {"run", "--on-demand", "--max-events", "1000", "--min-duration-us=5", "--", "app"}, error);
  REQUIRE(options);
  CHECK(options->variables.at("PROFAGENT_ON_DEMAND") == "1");
  CHECK(options->variables.at("PROFAGENT_MAX_EVENTS") == "1000");
  CHECK(options->variables.at("PROFAGENT_MIN_DURATION_US") == "5");
  CHECK_FALSE(profagent::launcher::parse_arguments({"run", "--max-events", "-3", "app"}, error));
}

TEST_CASE("launcher: --format sets PROFAGENT_TRACE_FORMAT; an unknown format is one clear error") {
  std::string error;
  const auto options = profagent::launcher::parse_arguments({"run", "--format", "json.gz,perfetto", "--", "app"}, error);
  REQUIRE(options);
  CHECK(options->variables.at("PROFAGENT_TRACE_FORMAT") == "json.gz,perfetto");
  CHECK_FALSE(profagent::launcher::parse_arguments({"run", "--format=protobuf", "app"}, error));
  CHECK(error == "--format needs json, json.gz or perfetto (or several, comma-separated), got 'protobuf'");
}
