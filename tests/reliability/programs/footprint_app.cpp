// Programs of tests/reliability/cases_footprint.py: what the agent must not take from the
// process it is loaded into (its descriptors, the injection slot, a child's environment).
//   footprint_app fds DIR       after a first CUDA call: the first free descriptor; then closes
//                               every descriptor >= 3, opens two files of its own in DIR (fds 3
//                               and 4), makes CUDA calls from JIT code (a copy, on an anonymous
//                               page, of a function without unwind info) and writes its files
//   footprint_app setenv TOOL   setenv("CUDA_INJECTION64_PATH", TOOL, 0), then CUDA calls: the
//                               driver loads TOOL at cuInit (TOOL prints a line)
//   footprint_app child         prints its CUDA_INJECTION64_PATH, makes CUDA calls
// Each prints "expect {...}" with the calls it made.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cuda_runtime_api.h>

namespace {

void* g_device = nullptr;
int g_failures = 0;

void check(cudaError_t status) {
  if (status != cudaSuccess) ++g_failures;
}

int first_free_fd() {
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) close(fd);
  return fd;
}

__attribute__((noinline)) void set_from_jit(int i) {
  check(cudaMemset(g_device, i & 0xff, 256));
  asm volatile("" ::: "memory");
}

}  // namespace

// No .cfi directives: no unwind info. It keeps a frame pointer, so an unwinder that checks its
// reads can follow it; position-independent (an indirect call), so its bytes also run when
// copied to another page.
#if defined(__x86_64__)
extern "C" void jit_call(void (*fn)(int), int arg);
asm(R"(
  .text
  .globl jit_call
  .type jit_call, @function
jit_call:
  push %rbp
  mov %rsp, %rbp
  mov %rdi, %rax
  mov %esi, %edi
  call *%rax
  pop %rbp
  ret
  .size jit_call, .-jit_call
)");
#endif

namespace {

using JitCall = void (*)(void (*)(int), int);

JitCall copy_to_anonymous_page() {
#if defined(__x86_64__)
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return nullptr;
  std::memcpy(page, reinterpret_cast<const void*>(&jit_call), 64);
  return reinterpret_cast<JitCall>(page);
#else
  return [](void (*fn)(int), int arg) { fn(arg); };
#endif
}

bool write_all(int fd, const std::string& text) {
  return write(fd, text.data(), text.size()) == ssize_t(text.size());
}

int descriptors(const char* dir) {
  check(cudaMalloc(&g_device, 256));
  const int first = first_free_fd();
  closefrom(3);
  const int a = open((std::string(dir) + "/a.dat").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  const int b = open((std::string(dir) + "/b.dat").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (a < 0 || b < 0 || !write_all(a, "a: before\n") || !write_all(b, "b: before\n")) return 3;
  const JitCall jit = copy_to_anonymous_page();
  if (jit == nullptr) return 4;
  constexpr int kCalls = 20;
  for (int i = 0; i < kCalls; ++i) {
    jit(set_from_jit, i);
    if (!write_all(a, "a: " + std::to_string(i) + "\n") || !write_all(b, "b: " + std::to_string(i) + "\n")) return 5;
  }
  check(cudaFree(g_device));
  std::printf("first free fd after the first CUDA call: %d; own files at %d and %d\n", first, a, b);
  close(a);
  close(b);
  std::printf("expect {\"cudaMalloc\": 1, \"cudaMemset\": %d, \"cudaFree\": 1, \"failures\": %d}\n", kCalls,
              g_failures);
  return 0;
}

int own_tool(const char* tool) {
  setenv("CUDA_INJECTION64_PATH", tool, 0);
  const char* now = std::getenv("CUDA_INJECTION64_PATH");
  std::printf("CUDA_INJECTION64_PATH is the program's tool: %s\n", now && std::strcmp(now, tool) == 0 ? "yes" : "no");
  std::fflush(stdout);
  check(cudaMalloc(&g_device, 256));
  check(cudaFree(g_device));
  std::printf("expect {\"cudaMalloc\": 1, \"cudaFree\": 1, \"failures\": %d}\n", g_failures);
  return 0;
}

int child() {
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  std::printf("child: CUDA_INJECTION64_PATH=%s\n", injection ? injection : "(unset)");
  check(cudaMalloc(&g_device, 256));
  check(cudaFree(g_device));
  std::printf("expect {\"cudaMalloc\": 1, \"cudaFree\": 1, \"failures\": %d}\n", g_failures);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  int status = 2;
  if (mode == "fds" && argc > 2) status = descriptors(argv[2]);
  else if (mode == "setenv" && argc > 2) status = own_tool(argv[2]);
  else if (mode == "child") status = child();
  else std::fprintf(stderr, "usage: footprint_app fds DIR | setenv TOOL | child\n");
  std::fflush(stdout);
  return status;
}
