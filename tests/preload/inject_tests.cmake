# Injection tests (label preload): programs no hook can see — one that uses the driver API
# alone, one linked with the static runtime — traced through CUDA's tool injection and CUPTI's
# callbacks, and the interposed build of the same work, which must not be recorded twice.
# Included by tests/preload/CMakeLists.txt; checks in inject_checks.py.
if(TARGET devsim_driver AND TARGET devsim_cudart_static AND TARGET profagent_launcher)
set(INJECT_GENERATED ${CMAKE_CURRENT_BINARY_DIR}/inject_generated)
file(MAKE_DIRECTORY ${INJECT_GENERATED})
set(INJECT_KERNELS ${CMAKE_CURRENT_SOURCE_DIR}/programs/inject_kernels.cu)
find_program(PROFAGENT_BIN2C bin2c HINTS ${CUDAToolkit_BIN_DIR} REQUIRED)

# inject_<kind>.h: the kernels compiled by nvcc to a cubin, PTX or fatbin, embedded by bin2c
# (NUL-padded: PTX is text the driver reads up to its NUL).
set(INJECT_IMAGE_HEADERS)
foreach(kind cubin ptx fatbin)
  set(image ${INJECT_GENERATED}/inject_kernels.${kind})
  set(header ${INJECT_GENERATED}/inject_${kind}.h)
  add_custom_command(OUTPUT ${image}
    COMMAND ${CMAKE_CUDA_COMPILER} -arch=sm_${PROFAGENT_CUDA_ARCH} --${kind} -o ${image} ${INJECT_KERNELS}
    DEPENDS ${INJECT_KERNELS} ${CMAKE_CURRENT_SOURCE_DIR}/programs/inject_kernels.cuh
    COMMENT "inject tests: nvcc --${kind} of the kernels")
  add_custom_command(OUTPUT ${header}
    COMMAND ${PROFAGENT_BIN2C} --const --padd 0 --name inject_${kind} ${image} > ${header}
    DEPENDS ${image}
    COMMENT "inject tests: bin2c of the ${kind}")
  list(APPEND INJECT_IMAGE_HEADERS ${header})
endforeach()

add_executable(inject_driver_only programs/driver_only.cpp ${INJECT_IMAGE_HEADERS})
target_include_directories(inject_driver_only PRIVATE ${INJECT_GENERATED} ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(inject_driver_only PRIVATE devsim_driver)  # libcuda.so.1 alone

add_executable(inject_runtime_shared programs/runtime_work.cu)
set_target_properties(inject_runtime_shared PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH})
add_executable(inject_runtime_static programs/runtime_work.cu)
set_target_properties(inject_runtime_static PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH}
  CUDA_RUNTIME_LIBRARY None)
target_link_libraries(inject_runtime_static PRIVATE devsim_cudart_static)

# Unit tests of the callback path (label unit): their own executable over the collector's
# test entry, so the collector's shared test list stays untouched.
add_executable(collector_callbacks_tests ${PROJECT_SOURCE_DIR}/tests/unit/collector/main.cpp
  ${PROJECT_SOURCE_DIR}/tests/unit/collector/cupti_callbacks_test.cpp)
target_link_libraries(collector_callbacks_tests PRIVATE profagent_collector Catch2::Catch2)
target_include_directories(collector_callbacks_tests PRIVATE ${CUDAToolkit_INCLUDE_DIRS}
  ${PROJECT_SOURCE_DIR}/tests/unit/collector)
profagent_catch_tests(collector_callbacks_tests PREFIX collector.callbacks. LABELS unit)

# The module loader's image parser, checked against readelf and the PTX text.
add_executable(devsim_image_kernels ${PROJECT_SOURCE_DIR}/tests/devsim/tests/image_kernels_main.cpp)
target_link_libraries(devsim_image_kernels PRIVATE devsim)
add_custom_target(inject_images ALL DEPENDS ${INJECT_IMAGE_HEADERS})
set(INJECT_BOTH_FATBIN ${INJECT_GENERATED}/inject_kernels_ptx_and_elf.fatbin)
add_custom_command(OUTPUT ${INJECT_BOTH_FATBIN}
  COMMAND ${CMAKE_CUDA_COMPILER} -gencode arch=compute_${PROFAGENT_CUDA_ARCH},code=[sm_${PROFAGENT_CUDA_ARCH},compute_${PROFAGENT_CUDA_ARCH}]
          --fatbin -o ${INJECT_BOTH_FATBIN} ${INJECT_KERNELS}
  DEPENDS ${INJECT_KERNELS} COMMENT "inject tests: a fatbin with an ELF and a PTX entry")
add_custom_target(inject_both_fatbin ALL DEPENDS ${INJECT_BOTH_FATBIN})
add_test(NAME devsim.module_image
  COMMAND ${PRELOAD_PYTHON} ${PROJECT_SOURCE_DIR}/tests/devsim/tests/image_kernels_check.py
          $<TARGET_FILE:devsim_image_kernels> ${INJECT_GENERATED}/inject_kernels.cubin
          ${INJECT_GENERATED}/inject_kernels.ptx ${INJECT_BOTH_FATBIN})
set_tests_properties(devsim.module_image PROPERTIES LABELS "devsim;unit")

set(INJECT_CHECKER ${PRELOAD_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/inject_checks.py
  --agent $<TARGET_FILE:profagent> --launcher $<TARGET_FILE:profagent_launcher> --devsim ${PROFAGENT_DEVSIM_DIR}
  --driver-program $<TARGET_FILE:inject_driver_only>
  --shared-program $<TARGET_FILE:inject_runtime_shared>
  --static-program $<TARGET_FILE:inject_runtime_static>)
foreach(case driver_cubin driver_ptx driver_fatbin driver_injection_only driver_api_marker
        static_runtime static_injection_only interposed_no_duplicates ctypes_unversioned variable_claimed foreign_injection_kept launcher
        callbacks_refused)
  add_test(NAME preload.inject_${case}
    COMMAND ${INJECT_CHECKER} --out ${CMAKE_CURRENT_BINARY_DIR}/out/inject_${case} --case ${case})
  set_tests_properties(preload.inject_${case} PROPERTIES LABELS "preload;inject" TIMEOUT 180)
endforeach()
endif()

# The callback path's cost (label bench): tests/bench/driver_launch_bench.cpp, reported by
# tests/bench/inject_bench.py (no agent / agent idle / agent recording).
if(TARGET devsim_driver AND TARGET devsim_cudart_static)
add_executable(driver_launch_bench ${PROJECT_SOURCE_DIR}/tests/bench/driver_launch_bench.cpp ${INJECT_GENERATED}/inject_cubin.h)
target_include_directories(driver_launch_bench PRIVATE ${INJECT_GENERATED} ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(driver_launch_bench PRIVATE devsim_driver)
add_test(NAME bench.inject_callback_cost
  COMMAND ${PRELOAD_PYTHON} ${PROJECT_SOURCE_DIR}/tests/bench/inject_bench.py $<TARGET_FILE:driver_launch_bench>
          $<TARGET_FILE:profagent> ${PROFAGENT_DEVSIM_DIR} ${CMAKE_CURRENT_BINARY_DIR}/out/inject_bench)
set_tests_properties(bench.inject_callback_cost PROPERTIES LABELS bench TIMEOUT 600)
endif()
