// Module loading and the memory, stream and event calls of the simulated libcuda.so.1: what a
// program that uses the driver API alone needs (Triton, CuPy and Numba load their kernels this
// way). A module image's kernels are found by name (core/module_image.h) and registered with
// the device model like the runtime's, so launches are timed and reported the same way.
// The real parameter structs of CUPTI's callback data (generated_cuda_meta.h), which name the
// legacy v1 types that cuda.h declares only for its own implementation.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <generated_cuda_meta.h>

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device.h"
#include "driver_common.h"
#include "kernels.h"
#include "memory.h"
#include "pools.h"
#include "module_image.h"
#include "ops.h"
#include "timeline.h"

using namespace devsim;
using namespace devsim::drv;

namespace {

// Never freed: a kernel handle taken from a module may outlive cuModuleUnload in a buggy
// program, and the device model keeps every KernelInfo anyway.
struct Module {
  static constexpr uint32_t kMagic = 0x6d6f646cu;  // "modl"
  uint32_t magic = kMagic;
  bool loaded = true;
  std::deque<std::string> names;  // stable storage: KernelInfo::name points into it
  std::deque<char> stubs;         // one address per kernel: its registration key
  std::unordered_map<std::string, KernelInfo*> kernels;
};

std::mutex g_modules_mutex;
std::vector<Module*>& modules() {
  static auto* all = new std::vector<Module*>;  // leaked: exit-safe
  return *all;
}

Module* module_of(CUmodule handle) {
  std::lock_guard lock(g_modules_mutex);
  for (Module* m : modules()) {
    if (reinterpret_cast<CUmodule>(m) == handle) return m;
  }
  return nullptr;
}

CUresult load_image(CUmodule* out, const void* image) {
  if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
  const ImageKernels found = kernels_in_image(image);
  if (found.kind == ImageKind::Unknown) return CUDA_ERROR_INVALID_IMAGE;
  if (found.names.empty()) return found.compressed_entries ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_NO_BINARY_FOR_GPU;
  auto* m = new Module;
  for (const std::string& name : found.names) {
    m->names.push_back(name);
    m->stubs.push_back(0);
    m->kernels[name] = register_kernel(&m->stubs.back(), m->names.back().c_str());
  }
  {
    std::lock_guard lock(g_modules_mutex);
    modules().push_back(m);
  }
  *out = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

Stream* stream_of(CUstream stream) { return stream_from_handle(stream, false); }

CUresult copy_impl(ApiScope& scope, void* dst, const void* src, size_t bytes, int kind, CUstream stream,
                   bool async) {
  Stream* s = stream_of(stream);
  if (!s) return finish(scope, CUDA_ERROR_INVALID_HANDLE);
  CopyParams c;
  c.dst = dst, c.src = src, c.width = bytes, c.dpitch = bytes, c.spitch = bytes;
  c.declared_kind = kind, c.async = async;
  return finish(scope, copy(s, c, scope.correlation_id()));
}

// D32 sets: the model fills bytes, so only values whose four bytes are equal (0, -1, ...)
// can be modelled; others are refused rather than written wrongly.
CUresult set_impl(ApiScope& scope, CUdeviceptr dst, unsigned value, size_t element_bytes, size_t count,
                  CUstream stream, bool async) {
  const unsigned byte = value & 0xffu;
  if (element_bytes == 4 && value != byte * 0x01010101u) return finish(scope, CUDA_ERROR_NOT_SUPPORTED);
  Stream* s = stream_of(stream);
  if (!s) return finish(scope, CUDA_ERROR_INVALID_HANDLE);
  const size_t bytes = count * element_bytes;
  return finish(scope, set(s, reinterpret_cast<void*>(dst), bytes, int(byte), bytes, 1, async, scope.correlation_id()));
}

}  // namespace

namespace devsim::drv {

bool is_loaded_module(CUmodule handle) {
  Module* m = module_of(handle);
  return m != nullptr && m->loaded;
}

bool is_unloaded_module(CUmodule handle) {
  Module* m = module_of(handle);
  return m != nullptr && !m->loaded;
}

KernelInfo* kernel_in_module(CUmodule handle, const char* name) {
  Module* m = module_of(handle);
  if (m == nullptr) return nullptr;
  auto found = m->kernels.find(name);
  return found == m->kernels.end() ? nullptr : found->second;
}

}  // namespace devsim::drv

extern "C" {

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  DEVSIM_CU_CALL(cuModuleLoadData, Alloc, nullptr);
  DEVSIM_CU_RETURN(load_image(module, image));
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned, CUjit_option*, void**) {
  DEVSIM_CU_CALL(cuModuleLoadDataEx, Alloc, nullptr);
  DEVSIM_CU_RETURN(load_image(module, image));  // JIT options change nothing in the model
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule* module, const void* fatbin) {
  DEVSIM_CU_CALL(cuModuleLoadFatBinary, Alloc, nullptr);
  DEVSIM_CU_RETURN(load_image(module, fatbin));
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  DEVSIM_CU_CALL(cuModuleUnload, Other, nullptr);
  Module* m = module_of(module);
  if (m == nullptr || !m->loaded) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_HANDLE);
  m->loaded = false;
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  cuMemAlloc_v2_params params{ptr, bytes};
  DEVSIM_CU_CALL_P(cuMemAlloc_v2, Alloc, nullptr, &params);
  if (!ptr) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  void* p = nullptr;
  Status st = allocate_reported(MemKind::Device, current_device(), bytes, scope_.correlation_id(), &p);
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  DEVSIM_CU_RETURN(st);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr ptr) {
  DEVSIM_CU_CALL(cuMemFree_v2, Alloc, nullptr);
  if (ptr == 0) DEVSIM_CU_RETURN(CUDA_SUCCESS);
  device_synchronize(current_device());  // as cudaFree: queued work may still use it
  void* p = reinterpret_cast<void*>(ptr);
  if (is_pool_block(p)) DEVSIM_CU_RETURN(pool_free_now(p, scope_.correlation_id()));
  DEVSIM_CU_RETURN(release_reported(p, MemKind::Device, scope_.correlation_id()));
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  cuMemcpyHtoD_v2_params params{dst, src, bytes};
  DEVSIM_CU_CALL_P(cuMemcpyHtoD_v2, MemcpyAsync, nullptr, &params);
  return copy_impl(scope_, reinterpret_cast<void*>(dst), src, bytes, 1, nullptr, false);
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  cuMemcpyDtoH_v2_params params{dst, src, bytes};
  DEVSIM_CU_CALL_P(cuMemcpyDtoH_v2, MemcpyAsync, nullptr, &params);
  return copy_impl(scope_, dst, reinterpret_cast<const void*>(src), bytes, 2, nullptr, false);
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  cuMemcpyHtoDAsync_v2_params params{dst, src, bytes, stream};
  DEVSIM_CU_CALL_P(cuMemcpyHtoDAsync_v2, MemcpyAsync, nullptr, &params);
  return copy_impl(scope_, reinterpret_cast<void*>(dst), src, bytes, 1, stream, true);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  cuMemcpyDtoHAsync_v2_params params{dst, src, bytes, stream};
  DEVSIM_CU_CALL_P(cuMemcpyDtoHAsync_v2, MemcpyAsync, nullptr, &params);
  return copy_impl(scope_, dst, reinterpret_cast<const void*>(src), bytes, 2, stream, true);
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) {
  cuMemsetD8_v2_params params{dst, value, count};
  DEVSIM_CU_CALL_P(cuMemsetD8_v2, MemcpyAsync, nullptr, &params);
  return set_impl(scope_, dst, value, 1, count, nullptr, false);
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count) {
  cuMemsetD32_v2_params params{dst, value, count};
  DEVSIM_CU_CALL_P(cuMemsetD32_v2, MemcpyAsync, nullptr, &params);
  return set_impl(scope_, dst, value, 4, count, nullptr, false);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  cuMemsetD8Async_params params{dst, value, count, stream};
  DEVSIM_CU_CALL_P(cuMemsetD8Async, MemcpyAsync, nullptr, &params);
  return set_impl(scope_, dst, value, 1, count, stream, true);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
  cuMemsetD32Async_params params{dst, value, count, stream};
  DEVSIM_CU_CALL_P(cuMemsetD32Async, MemcpyAsync, nullptr, &params);
  return set_impl(scope_, dst, value, 4, count, stream, true);
}

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int flags) {
  DEVSIM_CU_CALL(cuStreamCreate, Other, nullptr);
  if (!stream || flags > CU_STREAM_NON_BLOCKING) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *stream = reinterpret_cast<CUstream>(create_stream(current_device(), flags, 0));
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream stream) {
  DEVSIM_CU_CALL(cuStreamDestroy_v2, Other, nullptr);
  auto* s = reinterpret_cast<Stream*>(stream);
  if (!s || !stream_live(s)) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_HANDLE);
  DEVSIM_CU_RETURN(destroy_stream(s));
}

CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int flags) {
  DEVSIM_CU_CALL(cuEventCreate, Other, nullptr);
  if (!event) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *event = reinterpret_cast<CUevent>(create_event(current_device(), flags));
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
  DEVSIM_CU_CALL(cuEventRecord, EventRecord, nullptr);
  Stream* s = stream_of(stream);
  if (!s) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_HANDLE);
  DEVSIM_CU_RETURN(record_event(reinterpret_cast<Event*>(event), s, scope_.correlation_id()));
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  DEVSIM_CU_CALL(cuEventSynchronize, Other, nullptr);
  auto* e = reinterpret_cast<Event*>(event);
  const uint64_t start = now_ns();
  const Status st = synchronize_event(e);
  if (Tracer* t = tracer(); t && scope_.reported() && st == Status::Ok) {
    t->on_sync(SyncRecord{CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, scope_.correlation_id(),
                          context_id(current_device()), CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                          CUPTI_SYNCHRONIZATION_INVALID_VALUE, start, now_ns()});
  }
  DEVSIM_CU_RETURN(st);
}

CUresult CUDAAPI cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
  DEVSIM_CU_CALL(cuEventElapsedTime_v2, Query, nullptr);
  DEVSIM_CU_RETURN(elapsed_ms(reinterpret_cast<Event*>(start), reinterpret_cast<Event*>(end), ms));
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent event) {
  DEVSIM_CU_CALL(cuEventDestroy_v2, Other, nullptr);
  DEVSIM_CU_RETURN(destroy_event(reinterpret_cast<Event*>(event)));
}

}  // extern "C"
