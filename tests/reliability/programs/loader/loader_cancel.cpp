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

#include "../fake_module.h"

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
  register_fake_kernels(&g_endless_stub, {"endless_kernel"});
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
