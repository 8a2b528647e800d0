// The cross-process meeting point of one simulated communicator: a POSIX shared-memory
// segment named after the communicator's unique id, mapped by every rank (every process).
//
// Ranks meet three ways: once at init (all ranks mapped the segment), once per ncclCommSplit
// (each rank's colour and key), and once per collective (each rank's arrival time on the
// device, a CLOCK_MONOTONIC time: the ranks of one host share that clock).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ncclsim {

inline constexpr int kMaxRanks = 64;
inline constexpr int kArrivalRing = 64;  // collectives in flight per communicator, at most

struct Arrival {
  std::atomic<uint64_t> tag{0};  // sequence number + 1 of the collective this slot holds
  uint64_t ns = 0;               // written before the tag (release)
};

struct SplitVote {
  std::atomic<uint64_t> tag{0};  // split round + 1
  int32_t color = 0;
  int32_t key = 0;
};

struct Segment {
  std::atomic<int32_t> joined{0};
  std::atomic<int32_t> nranks{0};
  SplitVote split[kMaxRanks];
  Arrival arrivals[kArrivalRing][kMaxRanks];
};

class Rendezvous {
 public:
  // Maps (creating if first) the segment `name`; false with `error` set on failure.
  bool open(const std::string& name, int nranks, std::string* error);
  // Waits until all ranks joined (init barrier); false after `timeout_ms`.
  bool wait_joined(int64_t timeout_ms);
  void unlink();  // the name is no longer needed once everyone mapped it
  // Publishes this rank's arrival at collective `seq` and waits for all ranks'. Returns the
  // latest arrival, or 0 after the timeout (a rank is gone).
  uint64_t arrive(int rank, uint64_t seq, uint64_t arrival_ns, int64_t timeout_ms);
  // Publishes this rank's vote of split round `round`, waits for all, fills the votes.
  bool vote(int rank, uint64_t round, int color, int key, SplitVote* votes_out, int64_t timeout_ms);
  int nranks() const { return nranks_; }

 private:
  Segment* seg_ = nullptr;
  std::string name_;
  int nranks_ = 0;
};

uint64_t monotonic_ns();

}  // namespace ncclsim
