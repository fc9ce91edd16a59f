# depscan_module(<target> DIR <folder> [LINKS <targets...>])
# Builds every .cpp directly inside DIR into one static library, so adding a
# file to a stage never needs a CMake edit.
function(depscan_module target)
  cmake_parse_arguments(ARG "" "DIR" "LINKS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${ARG_DIR}/*.cpp")
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${target} PUBLIC ${ARG_LINKS})
endfunction()
