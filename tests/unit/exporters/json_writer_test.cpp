// The streaming JSON writer: numbers, and strings that stay valid JSON for any bytes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "exporters/json_writer.h"
#include "exporters/output_stream.h"

using namespace profagent::exporters;

namespace {

// Writes `text` as one JSON string through a writer of the given buffer size.
std::string encoded(std::string_view text, std::size_t capacity = 1 << 20) {
  MemorySink sink;
  std::string error;
  auto stream = sink.open("s", &error);
  {
    JsonWriter w(*stream, capacity);
    w.string(text);
  }
  stream->commit();
  return sink.files().at("s");
}

std::string decoded(std::string_view text, std::size_t capacity = 1 << 20) {
  return nlohmann::json::parse(encoded(text, capacity)).get<std::string>();
}

std::string number(uint64_t v) {
  char buf[32];
  return std::string(buf, write_u64(buf, v));
}

std::string micros(uint64_t ns) {
  char buf[32];
  return std::string(buf, write_us3(buf, ns));
}

}  // namespace

TEST_CASE("integers are written in decimal", "[exporters][json]") {
  for (uint64_t v : {0ull, 7ull, 10ull, 99ull, 100ull, 12345ull, 1000000ull, 18446744073709551615ull}) {
    CHECK(number(v) == std::to_string(v));
  }
  // Every digit count, at both edges: the length comes from the bit length plus one compare.
  for (uint64_t power = 1; power <= 10000000000000000000ull / 10; power *= 10) {
    for (uint64_t v : {power - 1, power, power + 1, power * 10 - 1, power * 9 + power / 2}) {
      CHECK(number(v) == std::to_string(v));
    }
  }
  CHECK(number(10000000000000000000ull) == "10000000000000000000");
  CHECK(number(9999999999999999999ull) == "9999999999999999999");
  CHECK(number(100000000ull * 100000000ull + 7) == "10000000000000007");
}

TEST_CASE("timestamps are microseconds with exactly three decimals", "[exporters][json]") {
  CHECK(micros(0) == "0.000");
  CHECK(micros(1) == "0.001");
  CHECK(micros(999) == "0.999");
  CHECK(micros(1000) == "1.000");
  CHECK(micros(1234567) == "1234.567");
  CHECK(micros(7889238000000000000ull) == "7889238000000000.000");
}

// The writer copies the digits above the last four of the microseconds from the time before
// when they are the same: every time must still read exactly as write_us3 writes it alone,
// across the edges where those digits change, back and forth, and for the largest times.
TEST_CASE("times written one after the other read as each one alone", "[exporters][json]") {
  std::vector<uint64_t> times = {0, 999, 9999999, 10000000, 10000001, 9999999, 4877382423260768ull,
                                 4877382423400516ull, 4877382429999999ull, 4877382430000000ull,
                                 4877382420000001ull, 18446744073709551615ull, 12, 1234567890123ull};
  std::mt19937_64 random(26);
  uint64_t t = 4877382423260768ull;
  for (int i = 0; i < 20000; ++i) times.push_back(t += random() % 3000000);  // steps of up to 3 ms
  for (int i = 0; i < 2000; ++i) times.push_back(random() >> (random() % 64));
  MemorySink sink;
  std::string error;
  auto stream = sink.open("times", &error);
  std::string expected;
  {
    JsonWriter w(*stream, 4096);  // small: flushes in between
    for (uint64_t ns : times) {
      w.us3(ns);
      w.raw(",");
      expected += micros(ns) + ",";
    }
  }
  stream->commit();
  CHECK(sink.files().at("times") == expected);
}

TEST_CASE("quotes, backslashes and every control byte are escaped and round-trip",
          "[exporters][json]") {
  std::string all_controls;
  for (int c = 0; c < 0x20; ++c) all_controls += static_cast<char>(c);
  for (const std::string& s : {std::string("plain"), std::string("a\"b\\c"), all_controls,
                               std::string("tab\there\nnew\rline\x7f"), std::string()}) {
    CHECK(decoded(s) == s);
  }
  CHECK(encoded(std::string("\x01", 1)) == "\"\\u0001\"");
  CHECK(encoded("\"\\") == "\"\\\"\\\\\"");
}

// Plain ASCII is copied 8 bytes at a time: every ASCII byte at every position of a word must
// still be escaped exactly as it is on its own.
TEST_CASE("each ASCII byte is escaped the same at any position of a long name",
          "[exporters][json]") {
  for (int c = 0; c < 0x80; ++c) {
    const std::string alone = encoded(std::string(1, static_cast<char>(c)));
    const std::string inner = alone.substr(1, alone.size() - 2);
    for (std::size_t at = 0; at < 17; ++at) {
      std::string name(17, 'k');
      name[at] = static_cast<char>(c);
      const std::string expected = "\"" + std::string(at, 'k') + inner + std::string(16 - at, 'k') + "\"";
      REQUIRE(encoded(name) == expected);
    }
  }
}

TEST_CASE("valid UTF-8 is copied unchanged", "[exporters][json]") {
  const std::string s = "caf\xC3\xA9 \xE5\x8D\xB7\xE7\xA7\xAF \xF0\x9F\x9A\x80 \xEF\xBF\xBF \xF4\x8F\xBF\xBF";
  CHECK(encoded(s) == "\"" + s + "\"");
  CHECK(decoded(s) == s);
}

TEST_CASE("each invalid UTF-8 sequence becomes one U+FFFD and the rest is kept",
          "[exporters][json]") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(decoded("a\xFF" "b") == "a" + fffd + "b");
  CHECK(decoded("a\xE2\x82") == "a" + fffd);                        // truncated 3-byte
  CHECK(decoded("\xF0\x9F\x98" "x") == fffd + "x");                 // truncated 4-byte
  CHECK(decoded("\xED\xA0\x80") == fffd + fffd + fffd);             // surrogate
  CHECK(decoded("\xC0\xAF") == fffd + fffd);                        // overlong
  CHECK(decoded("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // above U+10FFFF
  CHECK(decoded("\x80\xBF") == fffd + fffd);                        // stray continuations
  CHECK(decoded("kernel<\xFE>") == "kernel<" + fffd + ">");
}

TEST_CASE("a 64 KiB name is written whole, also through a small buffer", "[exporters][json]") {
  std::string name(64 * 1024, 'x');
  for (std::size_t i = 0; i < name.size(); i += 997) name[i] = '"';
  for (std::size_t i = 5; i < name.size(); i += 1013) name.replace(i, 3, "\xE2\x82\xAC");
  CHECK(decoded(name) == name);
  CHECK(decoded(name, 4096) == name);
  CHECK(encoded(name, 4096) == encoded(name));
}

TEST_CASE("random bytes always give valid JSON, the same at any buffer size", "[exporters][json]") {
  std::mt19937 rng(12345);
  for (int round = 0; round < 300; ++round) {
    std::string s(rng() % 9000, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0x80 + rng() % 0x80 : rng() % 256);
    const std::string big = encoded(s);
    REQUIRE_NOTHROW(nlohmann::json::parse(big));
    CHECK(encoded(s, 4096) == big);
  }
}

TEST_CASE("fixed3 keeps output finite", "[exporters][json]") {
  MemorySink sink;
  std::string error;
  auto stream = sink.open("n", &error);
  {
    JsonWriter w(*stream);
    w.fixed3(1.23456);
    w.raw(",");
    w.fixed3(-1);
    w.raw(",");
    w.fixed3(1.0 / 0.0);
  }
  stream->commit();
  CHECK(sink.files().at("n") == "1.235,0.000,0.000");
}
