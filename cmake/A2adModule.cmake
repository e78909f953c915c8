# a2ad_module(NAME SOURCES ... DEPS ...)
# Declares one module library a2ad_<NAME>. Modules may only link the modules they list,
# so a wrong-way include fails to build (ARCHITECTURE.md "dependencies point one way").
function(a2ad_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;PUBLIC_LIBS" ${ARGN})
  add_library(a2ad_${name} STATIC ${M_SOURCES})
  target_include_directories(a2ad_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  foreach(dep IN LISTS M_DEPS)
    target_link_libraries(a2ad_${name} PUBLIC a2ad_${dep})
  endforeach()
  target_link_libraries(a2ad_${name} PUBLIC ${M_PUBLIC_LIBS})
  a2ad_warnings(a2ad_${name})
  # Every module, the folders of its sources and its DEPS, for the include-layering check
  # (tests/lint/check_layers.py): a header-only type included the wrong way would compile
  # and link, so the link graph alone does not hold the line.
  set(dirs "")
  foreach(src IN LISTS M_SOURCES)
    get_filename_component(dir "${CMAKE_CURRENT_SOURCE_DIR}/${src}" DIRECTORY)
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}/src/a2ad" "${dir}")
    list(APPEND dirs "${rel}")
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  list(JOIN dirs "," dirs_text)
  list(JOIN M_DEPS "," deps_text)
  file(APPEND "${CMAKE_BINARY_DIR}/a2ad_modules.txt" "${name};${dirs_text};${deps_text}\n")
endfunction()

function(a2ad_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 false positive at -O2 on Asio's coroutine frame allocator (aligned_new paired
    # with its own sized operator delete).
    # ... and on std::string concatenation at -O3 (-Wrestrict, GCC bug 105329).
    target_compile_options(${target} PRIVATE -Wno-mismatched-new-delete -Wno-restrict)
    # With -fsanitize=address GCC 12 reports maybe-uninitialized inside libstdc++'s <regex>
    # (its instrumentation defeats the flow analysis); the other presets keep the warning.
    if(A2AD_SANITIZE)
      target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
    endif()
  endif()
  if(A2AD_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
