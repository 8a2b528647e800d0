// cuGetProcAddress as cuda.h documents it and as NVIDIA's runtime uses it: the ABI of the
// version asked for, the per-thread variants, the self-lookup NVIDIA's static runtime starts
// with, and every request that runtime makes at start-up (static_runtime_requests.txt).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Answer {
  CUresult result;
  void* function;
  CUdriverProcAddressQueryResult status;
};

Answer ask(const char* symbol, int version, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  Answer a{CUDA_ERROR_UNKNOWN, reinterpret_cast<void*>(1), CU_GET_PROC_ADDRESS_SUCCESS};
  a.result = cuGetProcAddress_v2(symbol, &a.function, version, flags, &a.status);
  return a;
}

void* exported(const std::string& name) { return dlsym(RTLD_DEFAULT, name.c_str()); }

}  // namespace

TEST_CASE("cuGetProcAddress finds itself at both of its ABIs, as NVIDIA's static runtime asks", "[proc_address]") {
  const Answer v1 = ask("cuGetProcAddress", 11030);
  REQUIRE(v1.result == CUDA_SUCCESS);
  REQUIRE(v1.status == CU_GET_PROC_ADDRESS_SUCCESS);
  REQUIRE(v1.function != nullptr);
  CHECK(v1.function == exported("cuGetProcAddress"));  // the CUDA 11.3 ABI, also exported
  // It works as that ABI: four arguments, no status.
  void* init = nullptr;
  REQUIRE(reinterpret_cast<PFN_cuGetProcAddress_v11030>(v1.function)("cuInit", &init, 2000, 0) == CUDA_SUCCESS);
  CHECK(init == exported("cuInit"));

  const Answer v2 = ask("cuGetProcAddress", 12000);
  REQUIRE(v2.result == CUDA_SUCCESS);
  CHECK(v2.function == exported("cuGetProcAddress_v2"));
  CHECK(ask("cuGetProcAddress", 13000).function == v2.function);  // the newest ABI at most 13000

  const Answer early = ask("cuGetProcAddress", 11020);  // before the symbol existed
  CHECK(early.result == CUDA_SUCCESS);
  CHECK(early.function == nullptr);
  CHECK(early.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

TEST_CASE("cuGetProcAddress answers with the ABI of the version asked for", "[proc_address]") {
  // cuCtxGetDevice: (CUdevice*) up to 12.x, (CUdevice*, CUcontext) from 13000.
  const Answer old_abi = ask("cuCtxGetDevice", 12090);
  const Answer new_abi = ask("cuCtxGetDevice", 13000);
  REQUIRE(old_abi.function != nullptr);
  REQUIRE(new_abi.function != nullptr);
  CHECK(old_abi.function != new_abi.function);
  CUcontext context = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&context, 0) == CUDA_SUCCESS);
  CUdevice device = -1;
  CHECK(reinterpret_cast<PFN_cuCtxGetDevice_v13000>(new_abi.function)(&device, context) == CUDA_SUCCESS);
  CHECK(device == 0);
  device = -1;
  CHECK(reinterpret_cast<PFN_cuCtxGetDevice_v13000>(new_abi.function)(&device, nullptr) == CUDA_SUCCESS);  // current
  CHECK(device == 0);
  CHECK(reinterpret_cast<PFN_cuCtxSynchronize_v13000>(ask("cuCtxSynchronize", 13000).function)(context) == CUDA_SUCCESS);

  // cuMemAlloc: the 32-bit v2000 ABI is not devsim's; from 3020 on, cuMemAlloc_v2.
  CHECK(ask("cuMemAlloc", 3020).function == exported("cuMemAlloc_v2"));
  const Answer old_alloc = ask("cuMemAlloc", 2000);
  CHECK(old_alloc.result == CUDA_SUCCESS);
  CHECK(old_alloc.function == nullptr);
  CHECK(old_alloc.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

TEST_CASE("cuGetProcAddress: per-thread variants, unknown symbols, bad arguments", "[proc_address]") {
  void* legacy = ask("cuStreamSynchronize", 13000).function;
  CHECK(legacy == exported("cuStreamSynchronize"));
  CHECK(ask("cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM).function == legacy);
  CHECK(ask("cuStreamSynchronize", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM).function ==
        exported("cuStreamSynchronize_ptsz"));
  // Before 7.0 there was no per-thread variant: the legacy one.
  CHECK(ask("cuStreamSynchronize", 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM).function == legacy);

  for (const char* unknown : {"cuNoSuchFunction", "cuMemAlloc_v2", ""}) {  // base names only
    const Answer a = ask(unknown, 13000);
    CHECK(a.result == CUDA_SUCCESS);
    CHECK(a.function == nullptr);
    CHECK(a.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  }
  CHECK(ask("cuInit", CUDA_VERSION + 10).result == CUDA_ERROR_INVALID_VALUE);  // newer than the driver
  CHECK(ask("cuInit", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM).result ==
        CUDA_ERROR_INVALID_VALUE);
  CHECK(ask("cuInit", 13000, 8).result == CUDA_ERROR_INVALID_VALUE);
}

// Every request of NVIDIA's static runtime is accepted; each one for an entry point devsim
// exports under any name of its (the base name, _v2, _v3, _ptsz) is answered with a function,
// at the version and with the default-stream flag asked. Per-thread requests for an entry
// point whose _ptsz/_ptds variant devsim lacks stay unanswered (the legacy function would run
// on the wrong stream).
TEST_CASE("every cuGetProcAddress request of NVIDIA's static runtime at start-up", "[proc_address]") {
  std::ifstream file(DEVSIM_STATIC_RUNTIME_REQUESTS);
  REQUIRE(file.good());
  int requests = 0, answered = 0;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string symbol;
    int version = 0;
    cuuint64_t flags = 0;
    REQUIRE(fields >> symbol >> version >> flags);
    ++requests;
    const Answer a = ask(symbol.c_str(), version, flags);
    INFO(symbol << " " << version << " " << flags);
    REQUIRE(a.result == CUDA_SUCCESS);
    answered += a.function != nullptr;
    const bool devsim_has = exported(symbol) || exported(symbol + "_v2") || exported(symbol + "_v3") ||
                            exported(symbol + "_ptsz");
    if (flags == CU_GET_PROC_ADDRESS_DEFAULT && devsim_has) CHECK(a.function != nullptr);
    if (!devsim_has) CHECK(a.function == nullptr);
  }
  CHECK(requests == 439);
  WARN(answered << " of " << requests << " requests answered with a function");
}
