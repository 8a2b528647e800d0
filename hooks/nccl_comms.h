// What the NCCL hooks know about the program's communicators: each one's hash (the same on
// every rank of it), its rank and size, and how many collectives it has run, so that one
// collective has one (hash, sequence number) on every rank. Kept whether or not a window
// records: every rank counts from the communicator's first call, so their numbers agree.
// Groups (ncclGroupStart/End) of this thread are tracked here too: a group is one operation
// and takes one sequence number per communicator it uses.
#pragma once

#include <nccl.h>

#include <cstdint>

#include "collector/event.h"

namespace profagent::hooks::nccl {

// A communicator made by ncclCommInitRank(Config): the hash of its unique id, which all its
// ranks were given. `world`: the process's first such communicator (torch's default group).
void add_from_unique_id(ncclComm_t comm, const ncclUniqueId& id, int rank, int nranks) noexcept;
// ncclCommSplit of `parent`: the parent's hash, split count and colour name the child alike on
// every rank of one colour.
void add_from_split(ncclComm_t parent, ncclComm_t child, int color, int rank, int nranks) noexcept;
// ncclCommInitAll: `ndev` communicators of this process, ranks 0..ndev-1 of one group.
void add_all(const ncclComm_t* comms, int ndev) noexcept;
void remove(ncclComm_t comm) noexcept;

// Fills the communicator fields (hash, group size, rank, world) and the sequence number of a
// call on `comm`; inside a group, the group's number for that communicator.
void describe_call(ncclComm_t comm, CollectiveArgs& args) noexcept;

// This thread's open group: the operator's id, start and accumulated arguments (hooks/nccl.cpp
// fills them). Allocated at the outermost ncclGroupStart, freed at its ncclGroupEnd, so a
// thread holds one TLS pointer (the agent's static TLS block must stay small).
struct Group {
  uint64_t id = 0;
  uint64_t start = 0;
  CollectiveArgs args;
};
// begin_group returns the new group at the outermost start (nullptr when nested, or when
// out of memory: the calls are then numbered one by one and no group operator is recorded).
Group* begin_group() noexcept;
Group* current_group() noexcept;  // nullptr outside a group
// At the outermost end: true, and `out` gets the group (when one was allocated).
bool end_group(Group* out) noexcept;

}  // namespace profagent::hooks::nccl
