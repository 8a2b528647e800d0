// Facts about this process for Trace::process: pid, host, executable, command line, rank.
#pragma once

#include "collector/trace.h"

namespace profagent::collector {

// Rank and world size from RANK/WORLD_SIZE (torchrun), else SLURM_PROCID/SLURM_NTASKS, else
// OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, else PMI_RANK/PMI_SIZE (MPICH, Intel MPI); else
// rank 0 of 1 and false.
bool read_rank(int* rank, int* world_size);
// The rank on this host: LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID.
int read_local_rank();

ProcessInfo read_process_info();  // thread_names left empty

// The real path of the library this code is in (libprofagent.so), "" if it cannot be named;
// resolved at the first call.
std::string own_library_path() noexcept;

// An absolute path of that library, with no file access when the loader opened it under one
// (an LD_PRELOAD entry as written: the launcher's is the real path), else its real path; "" if
// it cannot be named. What the agent writes into CUDA_INJECTION64_PATH and
// NVTX_INJECTION64_PATH at every process's start-up: any absolute name of the file does for
// the driver and NVTX, and the real path costs one readlink per component of the path.
std::string own_library_absolute_path() noexcept;

// Whether `path` names that library: the absolute path above as it is, or the same real path.
bool names_own_library(const char* path) noexcept;

// The name the loader opened that library under (an LD_PRELOAD entry as written, such as the
// launcher's `<prefix>/bin/../lib/libprofagent.so`), "" if unknown: an entry equal to it names
// this library without a realpath of its own.
std::string own_library_name() noexcept;

}  // namespace profagent::collector
