#include "rendezvous.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ncclsim {
namespace {

// Polling with a short sleep: the ranks are other processes. The step does not change the
// modelled times (a kernel ends at the last arrival plus its transfer, whenever that is seen).
constexpr int64_t kPollNs = 100'000;

void pause_briefly() {
  timespec ts{0, kPollNs};
  nanosleep(&ts, nullptr);
}

bool past(uint64_t deadline) { return monotonic_ns() > deadline; }

uint64_t deadline_after(int64_t timeout_ms) { return monotonic_ns() + uint64_t(timeout_ms) * 1'000'000; }

}  // namespace

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

bool Rendezvous::open(const std::string& name, int nranks, std::string* error) {
  name_ = name;
  nranks_ = nranks;
  int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    *error = "shm_open " + name + ": " + std::strerror(errno);
    return false;
  }
  if (ftruncate(fd, sizeof(Segment)) != 0) {
    *error = "ftruncate " + name + ": " + std::strerror(errno);
    close(fd);
    return false;
  }
  void* map = mmap(nullptr, sizeof(Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    *error = "mmap " + name + ": " + std::strerror(errno);
    return false;
  }
  seg_ = static_cast<Segment*>(map);  // zero-filled by ftruncate: every atomic starts at 0
  seg_->nranks.store(nranks);
  seg_->joined.fetch_add(1);
  return true;
}

bool Rendezvous::wait_joined(int64_t timeout_ms) {
  const uint64_t deadline = deadline_after(timeout_ms);
  while (seg_->joined.load() < nranks_) {
    if (past(deadline)) return false;
    pause_briefly();
  }
  return true;
}

void Rendezvous::unlink() { shm_unlink(name_.c_str()); }

uint64_t Rendezvous::arrive(int rank, uint64_t seq, uint64_t arrival_ns, int64_t timeout_ms) {
  Arrival* row = seg_->arrivals[seq % kArrivalRing];
  row[rank].ns = arrival_ns;
  row[rank].tag.store(seq + 1, std::memory_order_release);
  const uint64_t deadline = deadline_after(timeout_ms);
  uint64_t latest = 0;
  for (int r = 0; r < nranks_; ++r) {
    while (row[r].tag.load(std::memory_order_acquire) < seq + 1) {
      if (past(deadline)) return 0;
      pause_briefly();
    }
    latest = std::max(latest, row[r].ns);
  }
  return latest;
}

bool Rendezvous::vote(int rank, uint64_t round, int color, int key, SplitVote* votes_out, int64_t timeout_ms) {
  seg_->split[rank].color = color;
  seg_->split[rank].key = key;
  seg_->split[rank].tag.store(round + 1, std::memory_order_release);
  const uint64_t deadline = deadline_after(timeout_ms);
  for (int r = 0; r < nranks_; ++r) {
    while (seg_->split[r].tag.load(std::memory_order_acquire) < round + 1) {
      if (past(deadline)) return false;
      pause_briefly();
    }
    votes_out[r].color = seg_->split[r].color;
    votes_out[r].key = seg_->split[r].key;
  }
  return true;
}

}  // namespace ncclsim
