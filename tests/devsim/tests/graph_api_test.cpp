// Graph capture and replay, driver-level launches, API reporting and error semantics.
#include <catch2/catch.hpp>

#include <cuda.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <set>
#include <string>

#include "model_test_support.h"

using namespace devsim_test;

namespace {
void step_stub() {}
void lib_stub() {}
const void* k_step = fake_kernel(reinterpret_cast<const void*>(&step_stub), "_ZN5model4stepEv");
const void* k_lib = fake_kernel(reinterpret_cast<const void*>(&lib_stub), "_Z10lib_kernelPf");
}  // namespace

TEST_CASE("graph replay runs the captured work each launch", "[devsim][graph]") {
  constexpr size_t n = 4096;
  void *pinned = nullptr, *dev = nullptr, *scratch = nullptr, *result = nullptr;
  REQUIRE(cudaMallocHost(&pinned, n) == cudaSuccess);
  REQUIRE(cudaMallocHost(&result, n) == cudaSuccess);
  REQUIRE(cudaMalloc(&dev, n) == cudaSuccess);
  REQUIRE(cudaMalloc(&scratch, n) == cudaSuccess);
  std::memset(pinned, 1, n);
  std::memset(result, 0, n);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  tracer().clear();

  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaStreamCaptureStatus status;
  REQUIRE(cudaStreamIsCapturing(s, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  cudaMemcpyAsync(dev, pinned, n, cudaMemcpyHostToDevice, s);
  cudaLaunchKernel(k_step, dim3(8), dim3(128), nullptr, 0, s);
  cudaMemsetAsync(scratch, 0, n, s);
  cudaMemcpyAsync(result, dev, n, cudaMemcpyDeviceToHost, s);
  cudaGraph_t graph;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  CHECK(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(tracer().ops().empty());  // capture records, it does not run
  CHECK(static_cast<unsigned char*>(result)[0] == 0);

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  constexpr int replays = 3;
  for (int i = 0; i < replays; ++i) {
    std::memset(pinned, i + 2, n);  // each replay copies what is there at its time
    REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(static_cast<unsigned char*>(result)[n - 1] == i + 2);
  }
  auto ops = tracer().ops();
  CHECK(ops.size() == 4 * replays);
  auto launches = tracer().calls("cudaGraphLaunch");
  REQUIRE(launches.size() == replays);
  std::set<uint32_t> launch_ids;
  for (const auto& c : launches) launch_ids.insert(c.correlation_id);
  std::set<uint64_t> node_ids;
  for (const auto& op : ops) {
    CHECK(op.graph_id != 0);
    CHECK(launch_ids.count(op.correlation_id) == 1);
    node_ids.insert(op.graph_node_id);
  }
  CHECK(node_ids.size() == 4);  // the same four nodes replayed
  CHECK(tracer().kernels("_ZN5model4stepEv").size() == replays);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(dev), cudaFree(scratch), cudaFreeHost(pinned), cudaFreeHost(result);
}

TEST_CASE("the legacy stream cannot be captured", "[devsim][graph][errors]") {
  CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();
}

TEST_CASE("driver-level launches are driver calls and their kernels carry that correlation id", "[devsim][driver]") {
  tracer().clear();
  cudaFunction_t fn;
  REQUIRE(cudaGetFuncBySymbol(&fn, k_lib) == cudaSuccess);
  const char* name = nullptr;
  REQUIRE(cuFuncGetName(&name, reinterpret_cast<CUfunction>(fn)) == CUDA_SUCCESS);
  CHECK(std::string(name) == "_Z10lib_kernelPf");
  REQUIRE(cuLaunchKernel(reinterpret_cast<CUfunction>(fn), 4, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr) ==
          CUDA_SUCCESS);
  REQUIRE(cudaLaunchKernel(k_lib, 1, 32, nullptr, 0, nullptr) == cudaSuccess);
  REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);

  auto driver_launch = tracer().calls("cuLaunchKernel");
  REQUIRE(driver_launch.size() == 1);
  CHECK(driver_launch[0].domain == devsim::ApiDomain::Driver);
  CHECK(driver_launch[0].cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  CHECK(std::string(driver_launch[0].symbol_name) == "_Z10lib_kernelPf");
  auto runtime_launch = tracer().calls("cudaLaunchKernel");
  REQUIRE(runtime_launch.size() == 1);
  CHECK(runtime_launch[0].domain == devsim::ApiDomain::Runtime);
  CHECK(runtime_launch[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);

  auto ks = tracer().kernels("_Z10lib_kernelPf");
  REQUIRE(ks.size() == 2);
  std::set<uint32_t> ids{ks[0].correlation_id, ks[1].correlation_id};
  CHECK(ids == std::set<uint32_t>{driver_launch[0].correlation_id, runtime_launch[0].correlation_id});
  // The program's three driver calls, and the one the runtime makes inside its first launch of
  // the kernel (fetching it from its library, as NVIDIA's lazy loading does), with its own
  // correlation id: CUPTI reports it, so a profiler must tell it apart.
  std::multiset<std::string> driver_calls;
  for (const auto& c : tracer().exits()) {
    if (c.domain == devsim::ApiDomain::Driver) driver_calls.insert(c.name);
  }
  CHECK(driver_calls == std::multiset<std::string>{"cuFuncGetName", "cuLaunchKernel", "cuCtxSynchronize",
                                                   "cuLibraryGetKernel"});
  CHECK(tracer().calls("cuLibraryGetKernel")[0].correlation_id != runtime_launch[0].correlation_id);

  void* entry = nullptr;
  REQUIRE(cuGetProcAddress_v2("cuLaunchKernel", &entry, 13000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) == CUDA_SUCCESS);
  CHECK(entry == reinterpret_cast<void*>(&cuLaunchKernel));
  void* via_runtime = nullptr;
  cudaDriverEntryPointQueryResult found;
  REQUIRE(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &via_runtime, 13000, cudaEnableDefault, &found) == cudaSuccess);
  CHECK(found == cudaDriverEntryPointSuccess);
  CHECK(via_runtime == entry);
  void* per_thread = nullptr;
  REQUIRE(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &per_thread, 13000, cudaEnablePerThreadDefaultStream, &found) ==
          cudaSuccess);
  CHECK(per_thread != nullptr);
  CHECK(per_thread != entry);  // the _ptsz variant
  REQUIRE(cudaGetDriverEntryPointByVersion("cuNoSuchThing", &per_thread, 13000, cudaEnableDefault, &found) == cudaSuccess);
  CHECK(found == cudaDriverEntryPointSymbolNotFound);
}

TEST_CASE("every public call is reported once with a unique correlation id", "[devsim][api]") {
  tracer().clear();
  void* dev = nullptr;
  cudaMalloc(&dev, 256);
  cudaLaunchKernel(k_step, 2, 64, nullptr, 0, nullptr);
  cudaDeviceSynchronize();
  cudaFree(dev);
  auto enters = tracer().enters();
  auto exits = tracer().exits();
  REQUIRE(enters.size() == 4);
  REQUIRE(exits.size() == 4);
  std::set<uint32_t> ids;
  for (size_t i = 0; i < exits.size(); ++i) {
    CHECK(enters[i].correlation_id == exits[i].correlation_id);
    CHECK(exits[i].end_ns >= exits[i].start_ns);
    CHECK(exits[i].result == 0);
    ids.insert(exits[i].correlation_id);
  }
  CHECK(ids.size() == 4);
  CHECK(exits[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  CHECK(enters[1].params != nullptr);  // cudaLaunchKernel hands its parameter struct to callbacks
  auto ks = tracer().kernels("_ZN5model4stepEv");
  REQUIRE(ks.size() == 1);
  CHECK(ks[0].correlation_id == exits[1].correlation_id);
  CHECK(ks[0].grid[0] == 2);
  CHECK(ks[0].block[0] == 64);
  CHECK(ks[0].registers_per_thread == 40);  // DEVSIM_KERNEL_REGS=model4step=40
  cudaFuncAttributes attr;
  REQUIRE(cudaFuncGetAttributes(&attr, k_step) == cudaSuccess);
  CHECK(attr.numRegs == 40);
  // Modelled host cost (DEVSIM_HOST_COST_SCALE=1): a launch keeps the caller busy >= 3 us.
  CHECK(exits[1].end_ns - exits[1].start_ns >= 3000);
  CHECK(ks[0].queued_ns >= exits[1].start_ns);
  CHECK(ks[0].start_ns >= ks[0].queued_ns + 4000);  // default DEVSIM_LAUNCH_LATENCY_NS
}

TEST_CASE("launch errors and error names", "[devsim][errors]") {
  CHECK(cudaLaunchKernel(k_step, 1, dim3(2048), nullptr, 0, nullptr) == cudaErrorInvalidConfiguration);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);  // peek does not clear
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaSuccess);
  int not_a_kernel = 0;
  CHECK(cudaLaunchKernel(&not_a_kernel, 1, 1, nullptr, 0, nullptr) == cudaErrorInvalidDeviceFunction);
  auto bogus = reinterpret_cast<cudaStream_t>(0x1234);
  CHECK(cudaLaunchKernel(k_step, 1, 1, nullptr, 0, bogus) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamSynchronize(bogus) == cudaErrorInvalidResourceHandle);
  cudaGetLastError();
  CHECK(std::string(cudaGetErrorName(cudaErrorInvalidValue)) == "cudaErrorInvalidValue");
  CHECK(std::string(cudaGetErrorName(cudaErrorStreamCaptureUnsupported)) == "cudaErrorStreamCaptureUnsupported");
  CHECK(std::string(cudaGetErrorName(cudaErrorInvalidResourceConfiguration)) ==
        "cudaErrorInvalidResourceConfiguration");
  CHECK(std::string(cudaGetErrorString(cudaSuccess)) == "no error");
  CHECK(std::string(cudaGetErrorString(cudaErrorMemoryAllocation)) == "out of memory");
  CHECK(std::string(cudaGetErrorString(cudaErrorCapturedEvent)).size() > 10);
  int version = 0;
  REQUIRE(cudaRuntimeGetVersion(&version) == cudaSuccess);
  CHECK(version == 13000);
  cudaDeviceProp prop;
  REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  CHECK(std::string(prop.name).find("devsim simulated GPU") != std::string::npos);
  CHECK(cudaGetDeviceProperties(&prop, 1) == cudaErrorInvalidDevice);  // DEVSIM_DEVICE_COUNT=1
  cudaGetLastError();
}
