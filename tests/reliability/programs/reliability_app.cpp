// reliability_app: one plain C++ program (no nvcc) driving the CUDA runtime through every way a
// process can end, fork, spawn threads or name kernels badly. tests/reliability/reliability.py
// runs it with and without libprofagent.so and compares.
//
//   reliability_app <mode> [args...]       (the modes are the table at the end of the file)
//
// Every mode prints "expect {...}" with the hooked calls it made, so the checker can compare the
// trace's counts with what really happened.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fake_module.h"

namespace {

// A few hooked calls (one allocation, a memset, a free, a synchronize): 4 events.
void some_work(int iterations) {
  for (int i = 0; i < iterations; ++i) {
    void* device = nullptr;
    cudaMalloc(&device, 4096);
    cudaMemset(device, 0, 4096);
    cudaFree(device);
    cudaDeviceSynchronize();
  }
}

void print_expect(const char* name, long count) {
  std::printf("expect {\"%s\": %ld}\n", name, count);
  std::fflush(stdout);
}

int end_by(const std::string& how, int status) {
  some_work(3);
  print_expect("cudaMalloc", 3);
  if (how == "return") return status;
  if (how == "exit") std::exit(status);
  if (how == "_exit") _exit(status);
  if (how == "_Exit") _Exit(status);
  std::fprintf(stderr, "unknown end %s\n", how.c_str());
  return 99;
}

// Work, then exec `path` with the remaining arguments (the new image gets a fresh agent).
int exec_into(char** argv) {
  some_work(3);
  print_expect("cudaMalloc", 3);
  execv(argv[0], argv);
  std::perror("execv");
  return 98;
}

// The signal ends the process. With `handler` the program's own SIGTERM handler prints a line,
// restores the default action and re-raises (the case that hung other profilers).
void own_handler(int sig) {
  const char line[] = "own handler\n";
  (void)!write(STDOUT_FILENO, line, sizeof line - 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

int end_by_signal(const std::string& which, bool handler) {
  const int sig = which == "SIGINT" ? SIGINT : SIGTERM;
  some_work(3);
  print_expect("cudaMalloc", 3);
  if (handler) signal(sig, own_handler);
  raise(sig);
  return 97;
}

// Launches a kernel until a signal ends the process (opt-in signal handling). After
// `announce` launches it prints "recording" so the driver knows the trace has kernels. `busy`:
// the launches go on, so the signal usually lands inside a CUDA call; `idle`: the program
// then waits in pause(); `big`: 3 million more calls first, then pause(). `handler`: the
// program's own SIGTERM handler calls exit(3); `late`: installed after the first CUDA call,
// where the agent installs its own (which it replaces), `early`: before (the agent chains it);
// `reraise`: before, the handler that restores SIG_DFL and re-raises (own_handler above).
void exit_with_3(int) { std::exit(3); }

char g_loop_stub;

void launch_loop_kernel() {
  cudaLaunchKernel(&g_loop_stub, dim3(1), dim3(1), nullptr, 0, nullptr);
  cudaDeviceSynchronize();
}

int loop_until_signal(const std::string& how, const std::string& handler) {
  if (handler == "early") signal(SIGTERM, exit_with_3);
  if (handler == "reraise") signal(SIGTERM, own_handler);
  register_fake_kernels(&g_loop_stub, {"loop_kernel"});
  constexpr int announce = 20;
  for (int i = 0; i < announce; ++i) launch_loop_kernel();
  if (handler == "late") signal(SIGTERM, exit_with_3);
  if (how == "big") {  // a trace too big to be written within the handler's bound
    for (long i = 0; i < 3000000; ++i) cudaStreamSynchronize(nullptr);
  }
  // write(2), not stdio: a signal handler calling exit() while fflush is under way would
  // flush the line a second time.
  const char line[] = "recording\n";
  (void)!write(STDOUT_FILENO, line, sizeof line - 1);
  if (how != "busy") for (;;) pause();
  for (;;) launch_loop_kernel();
}

// How SIGTERM and SIGINT are disposed of once main runs (the agent must leave SIG_IGN alone).
const char* disposition(int sig) {
  struct sigaction action{};
  sigaction(sig, nullptr, &action);
  if ((action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_IGN) return "ignored";
  if ((action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_DFL) return "default";
  return "handler";
}

// Threads keep calling CUDA while main returns: the flush must neither crash nor hang.
int exit_with_live_threads() {
  some_work(1);
  std::atomic<bool> started[4] = {};
  for (int t = 0; t < 4; ++t) {
    std::thread([&started, t] {
      started[t] = true;
      for (;;) cudaStreamSynchronize(nullptr);
    }).detach();
  }
  for (auto& flag : started) while (!flag.load()) std::this_thread::yield();
  print_expect("cudaMalloc", 1);
  std::exit(5);
}

// 8 threads record in a hot loop while main forks `forks` times; each child records 10 ranges
// "child" (CPU-side: CUDA after fork is undefined behaviour, and devsim's own locks may be
// held by a parent thread at the fork) and ends with _exit(7). The parent checks every
// child's status.
int fork_stress(int forks) {
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        cudaStreamSynchronize(nullptr);
        calls.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  int bad = 0;
  for (int i = 0; i < forks; ++i) {
    const pid_t child = fork();
    if (child == 0) {
      for (int k = 0; k < 10 && profagent_range_push; ++k) {
        profagent_range_push("child");
        profagent_range_pop();
      }
      _exit(7);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7) ++bad;
  }
  stop = true;
  for (auto& thread : threads) thread.join();
  std::printf("children failed: %d\n", bad);
  std::printf("expect {\"cudaStreamSynchronize\": %ld}\n", calls.load());
  return bad == 0 ? 0 : 1;
}

int many_threads(int threads, long calls_each) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([calls_each] {
      for (long i = 0; i < calls_each; ++i) cudaStreamSynchronize(nullptr);
    });
  }
  for (auto& thread : pool) thread.join();
  std::printf("expect {\"cudaStreamSynchronize\": %ld}\n", long(threads) * calls_each);
  return 0;
}

// Short-lived threads, a few alive at a time.
int short_threads(int total, int calls_each) {
  for (int batch = 0; batch < total; batch += 8) {
    std::vector<std::thread> pool;
    for (int t = batch; t < total && t < batch + 8; ++t) {
      pool.emplace_back([calls_each] {
        for (int i = 0; i < calls_each; ++i) cudaStreamSynchronize(nullptr);
      });
    }
    for (auto& thread : pool) thread.join();
  }
  std::printf("expect {\"cudaStreamSynchronize\": %ld}\n", long(total) * calls_each);
  return 0;
}

// Kernels registered under hostile device names (devsim takes any name; so would the real
// runtime, which prints them as given), each launched once.
std::vector<std::string> hostile_names() {
  std::vector<std::string> names = {
      "quote\"kernel", "back\\slash\\", "ctrl\x01\x02\x1f\x7f\tbytes\n", "bad utf8 \xff\xfe\xc3\x28 \xe2\x82",
      "lone surrogate \xed\xa0\x80", "{\"json\": [1,2]}", "<script>&amp;</script>", "percent %s %n %%"};
  names.push_back(std::string(64 * 1024, 'K') + "\"\\");
  std::string all_bytes;
  for (int c = 1; c < 256; ++c) all_bytes.push_back(char(c));
  names.push_back(all_bytes);
  return names;
}

char g_stubs[16];  // each kernel's "host function" is one distinct address

int hostile_kernels() {
  const std::vector<std::string> names = hostile_names();
  register_fake_kernels(g_stubs, names);
  for (size_t i = 0; i < names.size(); ++i) {
    if (profagent_range_push) profagent_range_push(names[i].c_str());  // an operator-like name
    cudaLaunchKernel(&g_stubs[i], dim3(1), dim3(1), nullptr, 0, nullptr);
    if (profagent_range_pop) profagent_range_pop();
  }
  cudaDeviceSynchronize();
  std::printf("expect {\"kernels\": %zu}\n", names.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const auto arg = [&](int i, long fallback) { return argc > i ? std::atol(argv[i]) : fallback; };
  if (mode == "end") return end_by(argc > 2 ? argv[2] : "return", int(arg(3, 0)));
  if (mode == "exec" && argc > 2) return exec_into(argv + 2);
  if (mode == "signal") return end_by_signal(argc > 2 ? argv[2] : "SIGTERM", argc > 3);
  if (mode == "loop") return loop_until_signal(argc > 2 ? argv[2] : "busy", argc > 3 ? argv[3] : "");
  if (mode == "dispositions") {
    some_work(1);
    std::printf("SIGTERM %s SIGINT %s\n", disposition(SIGTERM), disposition(SIGINT));
    return 0;
  }
  if (mode == "live_threads") return exit_with_live_threads();
  if (mode == "fork_stress") return fork_stress(int(arg(2, 50)));
  if (mode == "threads") return many_threads(int(arg(2, 64)), arg(3, 100000));
  if (mode == "short_threads") return short_threads(int(arg(2, 1000)), int(arg(3, 10)));
  if (mode == "hostile") return hostile_kernels();
  if (mode == "agent_loaded") {  // secure mode: prove the agent is there (and silent)
    std::printf("agent loaded: %s\n", dlsym(RTLD_DEFAULT, "profagent_step") ? "yes" : "no");
    some_work(2);
    return 0;
  }
  if (mode == "work") {
    some_work(int(arg(2, 3)));
    print_expect("cudaMalloc", arg(2, 3));
    return int(arg(3, 0));
  }
  std::fprintf(stderr, "usage: reliability_app end|exec|signal|loop|dispositions|live_threads|fork_stress|threads|short_threads|hostile|work ...\n");
  return 2;
}
