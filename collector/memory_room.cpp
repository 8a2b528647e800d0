#include "collector/memory_room.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace profagent::collector {
namespace {

// statm: size resident shared text lib data dt, in pages ("data" is data + stack).
bool mapped_pages(size_t* size, size_t* data) noexcept {
  char text[128] = {};
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return false;
  char* next = text;
  size_t fields[6] = {};
  for (size_t& field : fields) field = size_t(std::strtoull(next, &next, 10));
  *size = fields[0];
  *data = fields[5];
  return true;
}

size_t room_below(int resource, size_t used) noexcept {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  return used < limit.rlim_cur ? size_t(limit.rlim_cur - used) : 0;
}

}  // namespace

size_t memory_room() noexcept {
  size_t size_pages = 0, data_pages = 0;
  if (!mapped_pages(&size_pages, &data_pages)) return SIZE_MAX;
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return std::min(room_below(RLIMIT_AS, size_pages * page), room_below(RLIMIT_DATA, data_pages * page));
}

}  // namespace profagent::collector
