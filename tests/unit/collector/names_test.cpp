// Interning, kernel-name registration and demangling.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "collector/api.h"
#include "collector/names.h"

using namespace profagent;
using namespace profagent::collector;

TEST_CASE("interning gives one id per distinct name", "[names]") {
  NameId a = intern("cudaLaunchKernel");
  NameId b = intern("cudaMemcpyAsync");
  CHECK(a != kNoName);
  CHECK(a != b);
  CHECK(intern("cudaLaunchKernel") == a);
  CHECK(intern("") == kNoName);
  std::vector<std::string> names = names_snapshot();
  REQUIRE(names.size() > std::max(a, b));
  CHECK(names[a] == "cudaLaunchKernel");
  CHECK(names[b] == "cudaMemcpyAsync");
  CHECK(names[kNoName].empty());
}

TEST_CASE("interning from many threads agrees", "[names]") {
  std::vector<NameId> ids(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&ids, t] {
      for (int i = 0; i < 1000; ++i) intern("shared-" + std::to_string(i));
      ids[t] = intern("shared-42");
    });
  }
  for (auto& thread : threads) thread.join();
  for (NameId id : ids) CHECK(id == ids[0]);
  CHECK(names_snapshot()[ids[0]] == "shared-42");
}

TEST_CASE("kernel names are remembered per host stub", "[names]") {
  static int stub_a, stub_b;
  note_kernel_name(&stub_a, "_Z6vecAddPKfS0_Pfi");
  note_kernel_name(&stub_b, "plain_c_kernel");
  note_kernel_name(nullptr, "ignored");
  auto kernels = kernel_names_snapshot();
  CHECK(kernels.at(&stub_a) == "_Z6vecAddPKfS0_Pfi");
  CHECK(kernels.at(&stub_b) == "plain_c_kernel");
  CHECK(kernels.count(nullptr) == 0);
}

TEST_CASE("demangling", "[names]") {
  CHECK(demangle("_Z6vecAddPKfS0_Pfi") == "vecAdd(float const*, float const*, float*, int)");
  CHECK(demangle("plain_c_kernel") == "plain_c_kernel");
  CHECK(demangle("_Znot-a-valid-name") == "_Znot-a-valid-name");
  CHECK(demangle("") == "");
}
