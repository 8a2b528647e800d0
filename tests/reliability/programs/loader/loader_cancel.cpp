// loader_cancel: pthread_cancel of a thread blocked in a CUDA call: the thread's cleanup handler runs and it
// ends as PTHREAD_CANCELED; the process goes on. The thread enables cancellation only right
// before cudaStreamSynchronize, so the cancel can only be acted on inside that call (the wait
// for the device is a cancellation point) — and the kernel it waits for outlasts the test
// (DEVSIM_KERNEL_NS gives `endless_kernel` a minute).
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdio>

extern "C" {
void** __cudaRegisterFatBinary(void* fat_cubin);
void __cudaRegisterFatBinaryEnd(void** handle);
void __cudaRegisterFunction(void** handle, const char* host_fun, char* device_fun, const char* device_name,
                            int thread_limit, uint3* tid, uint3* bid, dim3* block, dim3* grid, int* wsize);
}

namespace {

char g_endless_stub;
std::atomic<bool> g_armed{false};

void say_cleanup(void*) { std::printf("cancel: cleanup handler ran\n"); }

void* blocked_thread(void*) {
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaLaunchKernel(&g_endless_stub, dim3(1), dim3(1), nullptr, 0, stream);
  pthread_cleanup_push(say_cleanup, nullptr);
  g_armed.store(true);
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, nullptr);
  cudaStreamSynchronize(stream);  // blocks until cancelled
  std::printf("cancel: the synchronize returned (not expected)\n");
  pthread_cleanup_pop(0);
  return nullptr;
}

}  // namespace

int main() {
  void** module = __cudaRegisterFatBinary(nullptr);
  __cudaRegisterFunction(module, &g_endless_stub, const_cast<char*>("endless_kernel"), "endless_kernel", -1,
                         nullptr, nullptr, nullptr, nullptr, nullptr);
  __cudaRegisterFatBinaryEnd(module);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, blocked_thread, nullptr) != 0) return 1;
  while (!g_armed.load()) sched_yield();
  pthread_cancel(thread);  // deferred: acted on at the next cancellation point, in the wait
  void* result = nullptr;
  pthread_join(thread, &result);
  std::printf("cancel: thread ended %s\n", result == PTHREAD_CANCELED ? "cancelled" : "normally");
  std::fflush(stdout);
  return 0;
}
