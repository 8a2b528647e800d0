// Occupancy figures on kernel events: hand-computed cases for real GPUs, and a sweep checked
// against the CUDA toolkit's own occupancy calculator (cuda_occupancy.h, header-only host code:
// the same answer cudaOccupancyMaxActiveBlocksPerMultiprocessor gives for these properties).
#include <cuda_occupancy.h>

#include <catch2/catch.hpp>

#include "exporters/occupancy.h"

using profagent::DeviceInfo;
using profagent::DeviceRecord;
using profagent::exporters::kernel_occupancy;
using profagent::exporters::max_active_blocks;

namespace {

DeviceInfo gpu(int major, int minor, int sms, int threads_per_sm, uint64_t shared_per_sm,
               uint64_t reserved) {
  DeviceInfo d;
  d.compute_major = major, d.compute_minor = minor, d.num_sms = sms;
  d.max_threads_per_block = 1024, d.max_threads_per_multiprocessor = threads_per_sm;
  d.regs_per_block = 65536, d.regs_per_multiprocessor = 65536, d.warp_size = 32;
  d.shared_mem_per_block = 49152, d.shared_mem_per_multiprocessor = shared_per_sm;
  d.shared_mem_per_block_optin = shared_per_sm - reserved;
  d.reserved_shared_mem_per_block = reserved;
  return d;
}

// Published properties (cudaGetDeviceProperties) of four generations.
const DeviceInfo kV100 = gpu(7, 0, 80, 2048, 98304, 0);
const DeviceInfo kT4 = gpu(7, 5, 40, 1024, 65536, 0);
const DeviceInfo kA100 = gpu(8, 0, 108, 2048, 167936, 1024);
const DeviceInfo kH100 = gpu(9, 0, 132, 2048, 233472, 1024);

DeviceRecord kernel(int grid, int block, uint32_t registers, uint32_t shared) {
  DeviceRecord k;
  k.grid[0] = grid, k.grid[1] = 1, k.grid[2] = 1;
  k.block[0] = block, k.block[1] = 1, k.block[2] = 1;
  k.registers_per_thread = registers, k.shared_memory = shared;
  return k;
}

cudaOccResult toolkit_answer(const DeviceInfo& d, int threads, int registers, size_t shared) {
  cudaOccDeviceProp p;
  p.computeMajor = d.compute_major, p.computeMinor = d.compute_minor;
  p.maxThreadsPerBlock = d.max_threads_per_block;
  p.maxThreadsPerMultiprocessor = d.max_threads_per_multiprocessor;
  p.regsPerBlock = d.regs_per_block, p.regsPerMultiprocessor = d.regs_per_multiprocessor;
  p.warpSize = d.warp_size, p.numSms = d.num_sms;
  p.sharedMemPerBlock = d.shared_mem_per_block;
  p.sharedMemPerMultiprocessor = d.shared_mem_per_multiprocessor;
  p.sharedMemPerBlockOptin = d.shared_mem_per_block_optin;
  p.reservedSharedMemPerBlock = d.reserved_shared_mem_per_block;
  cudaOccFuncAttributes f;  // defaults: no barriers, default shared-memory limit
  f.maxThreadsPerBlock = 1024;
  f.numRegs = registers;
  cudaOccDeviceState state;
  cudaOccResult r{};
  REQUIRE(cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &f, &state, threads, shared) == CUDA_OCC_SUCCESS);
  return r;
}

}  // namespace

TEST_CASE("occupancy: T4, 256 threads, 32 registers: warp slots allow 4 blocks, the grid gives 2") {
  const auto o = kernel_occupancy(kT4, kernel(80, 256, 32, 0));
  REQUIRE(o.known);
  CHECK(o.limit_warps == 4);       // 32 warps per SM / 8 per block
  CHECK(o.limit_registers == 8);   // 16 warps of 1024 registers per sub-partition, 4 partitions
  CHECK(o.limit_blocks == 16);
  CHECK(o.active_blocks_per_sm == 4);
  CHECK(o.blocks_per_sm == 2.0f);  // 80 blocks over 40 SMs
  CHECK(o.warps_per_sm == 16.0f);
  CHECK(o.achieved_percent() == 50);  // 2 blocks x 256 threads of 1024
}

TEST_CASE("occupancy: A100, 128 threads, 64 registers, 16 KiB shared: registers limit to 8 blocks") {
  const auto o = kernel_occupancy(kA100, kernel(1080, 128, 64, 16384));
  REQUIRE(o.known);
  CHECK(o.limit_registers == 8);   // 2048 registers per warp: 8 warps per partition, 4 per block
  CHECK(o.limit_warps == 16);
  CHECK(o.allocated_shared_memory_per_block == 17408);  // 16 KiB + 1 KiB reserved
  CHECK(o.limit_shared_memory == 9);                    // 164 KiB / 17 KiB
  CHECK(o.active_blocks_per_sm == 8);
  CHECK(o.achieved_percent() == 50);  // 8 x 128 of 2048 threads (the grid gives 10 per SM)
}

TEST_CASE("occupancy: H100, 1024-thread blocks: 2 blocks fill the SM, one per SM from the grid") {
  const auto o = kernel_occupancy(kH100, kernel(132, 1024, 32, 0));
  REQUIRE(o.known);
  CHECK(o.limit_warps == 2);
  CHECK(o.limit_registers == 2);
  CHECK(o.limit_shared_memory == 228);  // 1 KiB reserved per block of 228 KiB
  CHECK(o.active_blocks_per_sm == 2);
  CHECK(o.blocks_per_sm == 1.0f);
  CHECK(o.achieved_percent() == 50);
}

TEST_CASE("occupancy: V100, 255 registers per thread: one block of 256 threads per SM") {
  const auto o = kernel_occupancy(kV100, kernel(160, 256, 255, 0));
  REQUIRE(o.known);
  CHECK(o.allocated_registers_per_block == 65536);  // 8160 rounded to 8192 per warp, 8 warps
  CHECK(o.limit_registers == 1);
  CHECK(o.active_blocks_per_sm == 1);
  CHECK(o.achieved_percent() == 13);  // 256 / 2048 = 12.5 %, rounded as Kineto rounds
}

TEST_CASE("occupancy: a block asking more shared memory than a block may have fits nowhere") {
  const auto o = kernel_occupancy(kT4, kernel(40, 128, 16, 49153));
  REQUIRE(o.known);
  CHECK(o.limit_shared_memory == 0);
  CHECK(o.active_blocks_per_sm == 0);
  CHECK(o.achieved_percent() == 0);
}

TEST_CASE("occupancy: unknown architectures and missing properties give no estimate") {
  DeviceInfo old = kT4;
  old.compute_major = 3;
  CHECK_FALSE(max_active_blocks(old, 256, 32, 0).known);
  CHECK_FALSE(max_active_blocks(DeviceInfo{}, 256, 32, 0).known);
}

TEST_CASE("occupancy: agrees with the toolkit's calculator across block sizes, registers, shared memory") {
  int compared = 0;
  for (const DeviceInfo* d : {&kV100, &kT4, &kA100, &kH100}) {
    for (int threads : {1, 32, 33, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024}) {
      for (int registers : {0, 16, 24, 32, 40, 64, 72, 96, 128, 168, 255}) {
        for (uint64_t shared : {0ull, 1ull, 1024ull, 4000ull, 12288ull, 40000ull, 49152ull}) {
          const auto ours = max_active_blocks(*d, threads, registers, shared);
          const cudaOccResult theirs = toolkit_answer(*d, threads, registers, shared);
          INFO("sm_" << d->compute_major << d->compute_minor << " threads " << threads << " registers "
                     << registers << " shared " << shared);
          REQUIRE(ours.known);
          CHECK(ours.active_blocks_per_sm == theirs.activeBlocksPerMultiprocessor);
          CHECK(ours.limit_registers == theirs.blockLimitRegs);
          CHECK(ours.limit_shared_memory == theirs.blockLimitSharedMem);
          CHECK(ours.limit_warps == theirs.blockLimitWarps);
          CHECK(ours.allocated_registers_per_block == theirs.allocatedRegistersPerBlock);
          CHECK(ours.allocated_shared_memory_per_block == theirs.allocatedSharedMemPerBlock);
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 4 * 13 * 11 * 7);
}
