// nvtx_bench: what an NVTX push+pop pair costs the program's thread.
//
//   nvtx_bench N   prints "<kind> <ns per pair>" per kind, each the best of 9 batches of N pairs
//
// Kinds: plain (nvtxRangePushA of one name), domain (nvtxDomainRangePushEx with a registered
// string), torch (a name as torch's emit_nvtx writes its operators, shapes included). Run by
// nvtx_bench.py without the agent, with it idle (no step recorded) and recording.
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

template <typename Pair>
double best_ns_per_pair(long n, Pair pair) {
  double best = 1e30;
  for (int batch = 0; batch < 9; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) pair();
    const auto end = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(end - start).count() / double(n));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 100000;
  nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nvtxDomainRegisterStringA(domain, "bench_step");
  const char* torch = "aten::addmm, seq = 12, op_id = 345, sizes = [[16], [4, 8], [8, 16], [], []], "
                      "input_op_ids = [(0,-1), (343,0), (344,0), (0,-1), (0,-1)]";
  std::printf("plain %.1f\n", best_ns_per_pair(n, [] {
    nvtxRangePushA("bench_range");
    nvtxRangePop();
  }));
  std::printf("domain %.1f\n", best_ns_per_pair(n, [&] {
    nvtxDomainRangePushEx(domain, &a);
    nvtxDomainRangePop(domain);
  }));
  std::printf("torch %.1f\n", best_ns_per_pair(n, [&] {
    nvtxRangePushA(torch);
    nvtxRangePop();
  }));
  return 0;
}
