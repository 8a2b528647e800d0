// The allocation ledger's state (collector/memory_ledger.h), shared by its two halves:
// memory_ledger.cpp books what the hooks see and cuts windows; memory_device_records.cpp books
// the device's own allocation records, which arrive later than the calls around them.
//
// Times. Hooked entries keep raw ticks (converted at the window's finish, as host events are);
// device records carry ns of the agent's monotonic clock. Telling apart two allocations that
// shared an address needs one clock for both: every live entry also has `order_ns`, its start
// on the monotonic clock — the device record's time, the hooked call's start while device
// records are on, or the latest cut for a hooked call made while nothing was recorded (no
// device record of that idle time exists to compare it with: device records of earlier windows
// are all before that cut).
//
// Lock: Ledger::mutex, a leaf, held by every function here.
#pragma once

#include <array>
#include <set>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "collector/api.h"
#include "collector/cupti_memory.h"
#include "collector/trace.h"

namespace profagent::collector::ledger {

inline constexpr int32_t kMaxDevices = 64;  // devices above are booked on the last slot

struct Live {
  uint64_t bytes = 0;
  uint64_t ticks = 0;     // when it was made: raw ticks, or ns when from_device
  uint64_t order_ns = 0;  // when it was made on the monotonic clock (see above)
  uint64_t event_id = 0;
  uint64_t serial = 0;    // the ledger's number of this allocation (its records carry it)
  uint32_t tid = 0;
  int32_t device = kHostDevice;
  MemoryKind kind = MemoryKind::Device;
  NameId api = kNoName;
  bool from_device = false;  // booked from a device record
};

struct DeviceTotals {
  int64_t allocated = 0;       // all live allocations
  int64_t pool_allocated = 0;  // the part of `allocated` served by pools
  int64_t pool_reserved = 0;   // what the pools hold, as the device last reported (sum of pools)
  bool used = false;
  int64_t reserved() const {
    return allocated - pool_allocated + (pool_allocated > pool_reserved ? pool_allocated : pool_reserved);
  }
};

// Who saw a booked operation, and when.
struct Source {
  uint64_t ticks = 0;     // raw ticks (hooked) or ns (from_device)
  uint64_t order_ns = 0;  // the monotonic clock
  uint64_t event_id = 0;  // the hooked call's host event (0: none recorded)
  uint32_t tid = 0;
  uint32_t correlation = 0;  // a device record's CUPTI correlation id
  bool from_device = false;
  bool in_window = true;     // happened while recording (device records: always): recorded
};

// A hooked allocation or free made while recording with device records on. The device reports
// it too, at its own time among the records of everything no hook sees; the hook leaves it to
// that record, which books it in time order with the call's event, function and thread. Its
// record is the one at its address and operation whose time lies within the call.
struct PendingCall {
  MemoryOp op;            // op.call_ns: the call's start (0: unknown, matched by address alone)
  uint64_t end_ns = 0;    // the call's end
  uint64_t ticks = 0;     // the call's end in raw ticks
  uint64_t event_id = 0;
  uint32_t tid = 0;
  uint32_t cut = 0;       // cuts before it (Ledger::cuts): the window whose join books it at the
                          // latest, from the call itself, if its record never came
};

// The pending calls of one address and operation, in call order: a record usually matches the
// first, which is then taken from the front (one allocation for the usual single call).
struct PendingQueue {
  std::vector<PendingCall> calls;
  size_t head = 0;  // calls before it are taken
  bool empty() const { return head == calls.size(); }
};

// An allocation whose address was handed out again before its free was seen (the free comes
// in a device record not read yet, or never: a driver-level free while nothing recorded).
struct Displaced {
  Live entry;
  uint64_t at_ns = 0;  // when the address was handed out again: it was free by then
};

// A free of an address no allocation held when it was booked: its allocation's record may
// still come (records of different buffers arrive in any order); if none has by the join of
// the window it lies in, it was a free of unknown memory.
struct Orphan {
  Source source;
};

struct Ledger {
  std::mutex mutex;  // leaf lock
  std::unordered_map<uint64_t, Live> live;
  std::array<DeviceTotals, kMaxDevices + 1> totals{};  // [0] host, [d + 1] device d
  std::vector<MemoryTotals> window_start;               // totals at the previous cut
  std::vector<MemoryRecord> records;                    // this window's, ns still in ticks
  size_t capacity = (size_t(64) << 20) / sizeof(MemoryRecord);  // configure_memory_records()
  uint64_t unknown_frees = 0;
  uint64_t null_frees = 0;
  uint64_t dropped = 0;
  uint64_t next_serial = 1;
  uint64_t cut_ns = 0;  // the monotonic clock at the latest cut
  uint32_t cuts = 0;    // cuts so far
  // Device allocation records (memory_device_records.cpp).
  bool device_records = false;
  uint64_t match_slack_ns = 0;  // how far a record's time may lie outside its call (clock error)
  size_t pending_count = 0;
  std::unordered_map<uint64_t, PendingQueue> pending;  // by call_key(address, release)
  // Hooked calls between their start and their booking, by start time: a record of one of them
  // can be read (another thread flushes CUPTI) before the call is booked.
  std::multiset<uint64_t> in_flight;
  // Records read while a call that started before them was in flight and that no pending call
  // claimed: the in-flight call claims its own when it is booked; the others are booked as
  // the device's once no call that started before them is in flight.
  std::vector<DeviceMemoryEvent> unclaimed;
  std::unordered_multimap<uint64_t, Displaced> displaced;   // by address
  std::unordered_multimap<uint64_t, Orphan> orphans;        // by address
  std::unordered_map<uint64_t, std::pair<int32_t, int64_t>> pools;  // pool address -> device, size
};

Ledger& state();
DeviceTotals& totals_of(Ledger& l, int32_t device);

// Counting (under the lock). An allocation or a free changes the totals and, while recording
// (device records always), leaves a record; the live map is the caller's.
Live make_live(Ledger& l, const MemoryOp& op, const Source& source);
void count_allocation(Ledger& l, uint64_t address, const Live& made, const Source& source);
void count_free(Ledger& l, uint64_t address, const Live& freed, const Source& source);

// The allocation at `address` is replaced by a newer one (booked from `by`): it waits in
// Ledger::displaced for its free, or is freed now when no device record of it can come
// (memory_device_records.cpp).
void displace(Ledger& l, uint64_t address, const Live& entry, const Source& by);

// While recording with device records on, a hooked allocation or free (not of registered
// memory, which the device does not report) is left to its device record: true when it was.
bool leave_to_device_record(Ledger& l, const MemoryOp& op, const Source& source);
// The call (op.call_ns) is booked: no longer in flight; the records it held back are booked.
// call_ended only takes it out of flight (its booking failed).
void call_booked(Ledger& l, const MemoryOp& op);
void call_ended(Ledger& l, const MemoryOp& op) noexcept;
// A hooked free, while nothing records, of memory the ledger does not hold: an allocation
// record not read yet may still explain it (memory_device_records.cpp).
void free_unknown_later(Ledger& l, uint64_t address, const Source& source);

void clear_device_record_state(Ledger& l);

}  // namespace profagent::collector::ledger
