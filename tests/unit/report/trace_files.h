// Trace files for the loader tests: written to a fresh temporary directory, plain or gzip.
#pragma once

#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace profagent::report::test {

// One directory per test process, removed with everything in it when the process exits.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/profagent_loader_XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

inline std::string temp_dir() {
  static TempDir dir;
  return dir.path;
}

inline std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline std::string write_gzip(const std::string& name, const std::string& bytes) {
  const std::string path = temp_dir() + "/" + name;
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), unsigned(bytes.size())) == int(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
  return path;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace profagent::report::test
