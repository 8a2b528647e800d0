// execl, execlp and execle from a vfork child, as shells and process launchers call them.
// The child shares the parent's memory, so the program counts the mallocs made while its
// child runs exec (this executable's malloc comes before every library's in the lookup
// order, so the agent's allocations are counted too): the exec family must allocate nothing.
//   vfork_exec_app         each variant once, exec failing (ENOENT) then succeeding
// Prints the mallocs seen in the children and the children's exit statuses.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" void* __libc_malloc(size_t size);

namespace {
volatile int g_counting = 0;
volatile long g_mallocs = 0;
}  // namespace

extern "C" void* malloc(size_t size) {
  if (g_counting) g_mallocs = g_mallocs + 1;
  return __libc_malloc(size);
}

namespace {

char* const kEnvironment[] = {const_cast<char*>("VFORK_EXEC=1"), nullptr};

int run_in_vfork_child(const char* variant, const char* path) {
  const pid_t child = vfork();
  if (child == 0) {
    g_counting = 1;
    if (std::strcmp(variant, "execl") == 0) execl(path, "echo", "execl", "ran", nullptr);
    else if (std::strcmp(variant, "execlp") == 0) execlp(path, "echo", "execlp", "ran", nullptr);
    else execle(path, "sh", "-c", "echo execle ran $VFORK_EXEC", nullptr, kEnvironment);
    g_counting = 0;
    _exit(127);
  }
  g_counting = 0;
  int status = 0;
  waitpid(child, &status, 0);
  std::fflush(stdout);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int main() {
  struct Variant {
    const char* name;
    const char* found;
  } variants[] = {{"execl", "/bin/echo"}, {"execlp", "echo"}, {"execle", "/bin/sh"}};
  for (const Variant& variant : variants) {
    const int missing = run_in_vfork_child(variant.name, "/nonexistent/program");
    std::fflush(stdout);
    const int found = run_in_vfork_child(variant.name, variant.found);
    std::printf("%s: missing program status %d, found program status %d, mallocs in the child %ld\n",
                variant.name, missing, found, g_mallocs);
    std::fflush(stdout);
    g_mallocs = 0;
  }
  return 0;
}
