// Prints the kernel names devsim's module loader finds in an image file (one per line), for
// tests/devsim/tests/image_kernels_check.py to compare with what binutils and the PTX text say.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "module_image.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream file(argv[1], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return 2;
  bytes.push_back('\0');  // PTX as the driver gets it: NUL-terminated text
  const devsim::ImageKernels found = devsim::kernels_in_image(bytes.data(), bytes.size());
  std::printf("kind %d compressed %zu\n", int(found.kind), found.compressed_entries);
  for (const std::string& name : found.names) std::printf("%s\n", name.c_str());
  return 0;
}
