# Memory workloads (of the kinds in CUDA's samples): stream-ordered allocation with pools,
# unified memory prefetch/advice, peer copies between two devices, and pinned frees right after
# asynchronous work on per-thread default streams.
foreach(program stream_ordered_alloc managed_prefetch peer_copy per_thread_pinned)
  add_executable(${program} ${program}.cu)
  set_target_properties(${program} PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})
endforeach()
target_compile_options(per_thread_pinned PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--default-stream=per-thread>)
target_link_libraries(per_thread_pinned PRIVATE Threads::Threads)

profagent_workload_test(stream_ordered_alloc PROGRAM stream_ordered_alloc
  EXPECT "default pool: 16 iterations of 3 MiB each, reserved high 3.0 MiB, used now 0 bytes"
         "default pool after a synchronize with release threshold 0: reserved 0 bytes"
         "created pool: 16 iterations of 3 MiB each, reserved high 3.0 MiB"
         "stream_ordered_alloc: PASSED")
profagent_workload_test(managed_prefetch PROGRAM managed_prefetch
  EXPECT "4 streams: managed buffers advised, prefetched to the device and back, data intact"
         "managed_prefetch: PASSED")
profagent_workload_test(peer_copy PROGRAM peer_copy ENV DEVSIM_DEVICE_COUNT=2
  EXPECT "cudaMemcpyPeerAsync of 32 MiB: [0-9.]+ ms staged, [0-9.]+ ms with peer access"
         "peer bandwidth [0-9.]+ GB/s" "peer_copy: PASSED")
profagent_workload_test(per_thread_pinned PROGRAM per_thread_pinned
  EXPECT "3 threads x 6 rounds of 4 MiB: pinned sources freed right after queueing, results intact"
         "per_thread_pinned: PASSED")
