# Unit tests of NVTX's side of the hooks (label unit): torch's operator range names of several
# torch versions parsed back into operators (hooks/nvtx/torch_names.h).
add_executable(nvtx_unit_test ${CMAKE_CURRENT_LIST_DIR}/nvtx/torch_names_test.cpp
  ${PROJECT_SOURCE_DIR}/hooks/nvtx/torch_names.cpp)
target_include_directories(nvtx_unit_test PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(nvtx_unit_test PRIVATE Catch2::Catch2)
profagent_catch_tests(nvtx_unit_test PREFIX nvtx. LABELS unit)
