# Programs of the loader cases (tests/reliability/cases_loader.py): a program and libraries
# whose loading depends on the CALLER of dlopen ($ORIGIN, RUNPATH, hwcaps), a plugin that links
# the runtime (unload/reload), and a thread cancelled inside a CUDA call. The libraries land in
# <bin>/loader_fixtures/, where the cases copy them into the layouts they test.
set(loader_dir ${CMAKE_CURRENT_SOURCE_DIR}/programs/loader)
set(loader_fixtures ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/loader_fixtures)

add_executable(loader_app ${loader_dir}/loader_app.cpp)
target_link_libraries(loader_app PRIVATE ${CMAKE_DL_LIBS})

add_executable(loader_cancel ${loader_dir}/loader_cancel.cpp)
target_include_directories(loader_cancel SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(loader_cancel PRIVATE CUDA::cudart Threads::Threads)

foreach(variant plain x86-64-v2)
  add_library(loader_plugin_${variant} SHARED ${loader_dir}/loader_plugin.cpp)
  target_compile_definitions(loader_plugin_${variant} PRIVATE LOADER_PLUGIN_VARIANT="${variant}")
  set_target_properties(loader_plugin_${variant} PROPERTIES OUTPUT_NAME loader_plugin
    LIBRARY_OUTPUT_DIRECTORY ${loader_fixtures}/${variant})
endforeach()

add_library(loader_host SHARED ${loader_dir}/loader_host.cpp)
target_link_libraries(loader_host PRIVATE ${CMAKE_DL_LIBS})
# DT_RUNPATH (not DT_RPATH): the form current toolchains and pip wheels write.
target_link_options(loader_host PRIVATE -Wl,--enable-new-dtags)
set_target_properties(loader_host PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${loader_fixtures}
  BUILD_RPATH "$ORIGIN/sub" SKIP_BUILD_RPATH OFF)

add_library(loader_cuda_plugin SHARED ${loader_dir}/loader_cuda_plugin.cpp)
target_include_directories(loader_cuda_plugin SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(loader_cuda_plugin PRIVATE CUDA::cudart)
set_target_properties(loader_cuda_plugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${loader_fixtures})

add_library(loader_nocrt SHARED ${loader_dir}/loader_nocrt.cpp)
target_link_libraries(loader_nocrt PRIVATE ${CMAKE_DL_LIBS})
target_link_options(loader_nocrt PRIVATE -nostartfiles)
set_target_properties(loader_nocrt PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${loader_fixtures})

# Kernels still queued when the plugin that registered them is unloaded.
add_library(loader_kernel_plugin SHARED ${loader_dir}/loader_kernel_plugin.cu)
set_target_properties(loader_kernel_plugin PROPERTIES CUDA_ARCHITECTURES ${PROFAGENT_CUDA_ARCH}
  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
  LIBRARY_OUTPUT_DIRECTORY ${loader_fixtures})
add_executable(loader_unload_queued ${loader_dir}/loader_unload_queued.cpp)
target_include_directories(loader_unload_queued SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(loader_unload_queued PRIVATE CUDA::cudart ${CMAKE_DL_LIBS})
