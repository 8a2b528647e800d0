// A CUDA injection tool of the program's own (tests/reliability/cases_footprint.py): the driver
// loads it from CUDA_INJECTION64_PATH at cuInit; it only says so on stdout.
#include <unistd.h>

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static const char line[] = "tool: InitializeInjection called\n";
  return write(1, line, sizeof line - 1) == ssize_t(sizeof line - 1) ? 1 : 0;
}
