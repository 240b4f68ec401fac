# Finds the libraries dicebench builds against. System packages come first; a folder made by
# tools/gather-offline-deps.sh (DICEBENCH_DEPS_DIR) fills what the system lacks, for offline hosts.
set(DICEBENCH_DEPS_DIR "$ENV{DICEBENCH_DEPS_DIR}" CACHE PATH "Unpacked offline dependency bundle (tools/gather-offline-deps.sh)")
if(DICEBENCH_DEPS_DIR)
  if(NOT EXISTS "${DICEBENCH_DEPS_DIR}/root/usr")
    message(FATAL_ERROR "DICEBENCH_DEPS_DIR=${DICEBENCH_DEPS_DIR} holds no unpacked bundle (expected root/usr inside); make one with tools/gather-offline-deps.sh")
  endif()
  set(_bundle "${DICEBENCH_DEPS_DIR}/root/usr")
  # Appended, so that a library the host already has wins over the bundle's copy.
  list(APPEND CMAKE_PREFIX_PATH "${_bundle}" "${_bundle}/lib/x86_64-linux-gnu/cmake" "${_bundle}/share/cmake" "${_bundle}/lib/cmake")
  list(APPEND CMAKE_INCLUDE_PATH "${_bundle}/include")
  list(APPEND CMAKE_LIBRARY_PATH "${_bundle}/lib/x86_64-linux-gnu")
  message(STATUS "dicebench: offline dependency bundle at ${DICEBENCH_DEPS_DIR}")
endif()

find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
# libcurl (its multi interface) carries the openai: model plugin's requests.
find_package(CURL 7.68 REQUIRED)

# The worker embeds CPython and imports torch from the same environment (tools/bootstrap.sh passes
# Python3_EXECUTABLE: the project's .venv, or the host's python3 offline).
find_package(Python3 3.10 REQUIRED COMPONENTS Interpreter Development.Embed)
execute_process(COMMAND ${Python3_EXECUTABLE} -m pybind11 --cmakedir OUTPUT_VARIABLE _pybind11_dir
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
find_package(pybind11 2.10 CONFIG REQUIRED HINTS ${_pybind11_dir})
# Boost.Process (v1) starts the workers. Boost releases that can build it on std::filesystem use it
# header-only (the GPU host has Boost 1.83 headers and no compiled Boost libraries); older ones,
# such as Debian 12's 1.74, need Boost.Filesystem.
find_package(Boost 1.74 REQUIRED)
add_library(dicebench_boost_process INTERFACE)
set(_boost_process_std_fs "")
foreach(_config IN ITEMS boost/process/filesystem.hpp boost/process/v1/filesystem.hpp)
  foreach(_dir IN LISTS Boost_INCLUDE_DIRS)
    if(EXISTS "${_dir}/${_config}")
      file(STRINGS "${_dir}/${_config}" _found REGEX "BOOST_PROCESS_USE_STD_FS")
      list(APPEND _boost_process_std_fs ${_found})
    endif()
  endforeach()
endforeach()
if(_boost_process_std_fs)
  target_compile_definitions(dicebench_boost_process INTERFACE BOOST_PROCESS_USE_STD_FS=1)
  target_link_libraries(dicebench_boost_process INTERFACE Boost::headers)
else()
  find_package(Boost 1.74 REQUIRED COMPONENTS filesystem)
  target_link_libraries(dicebench_boost_process INTERFACE Boost::headers Boost::filesystem)
endif()

# PCRE2 (8-bit code units) runs the tokenizer's pre-tokenizer regex. Found by header and library
# rather than pkg-config, so that the offline bundle's copy (headers the GPU host lacks) is found
# through CMAKE_INCLUDE_PATH / CMAKE_LIBRARY_PATH like the others.
find_path(PCRE2_INCLUDE_DIR pcre2.h REQUIRED)
find_library(PCRE2_8_LIBRARY NAMES pcre2-8 REQUIRED)
add_library(dicebench_pcre2 INTERFACE)
target_include_directories(dicebench_pcre2 SYSTEM INTERFACE ${PCRE2_INCLUDE_DIR})
target_link_libraries(dicebench_pcre2 INTERFACE ${PCRE2_8_LIBRARY})
target_compile_definitions(dicebench_pcre2 INTERFACE PCRE2_CODE_UNIT_WIDTH=8)

# libseccomp builds dicebench-sandbox's system-call filter. Found by header and library like PCRE2,
# so that the offline bundle's copy fills a host without libseccomp-dev; its static archive is
# preferred, so that the launcher needs no libseccomp.so.2 where it runs.
find_path(SECCOMP_INCLUDE_DIR seccomp.h REQUIRED)
find_library(SECCOMP_LIBRARY NAMES libseccomp.a seccomp REQUIRED)
add_library(dicebench_seccomp INTERFACE)
target_include_directories(dicebench_seccomp SYSTEM INTERFACE ${SECCOMP_INCLUDE_DIR})
target_link_libraries(dicebench_seccomp INTERFACE ${SECCOMP_LIBRARY})

# toml++ is used header-only (one translation unit includes it), so no library is needed at run time.
find_path(TOMLPLUSPLUS_INCLUDE_DIR toml++/toml.h REQUIRED)
add_library(dicebench_tomlplusplus INTERFACE)
target_include_directories(dicebench_tomlplusplus SYSTEM INTERFACE ${TOMLPLUSPLUS_INCLUDE_DIR})
target_compile_definitions(dicebench_tomlplusplus INTERFACE TOML_HEADER_ONLY=1 TOML_EXCEPTIONS=1)
# Suppression for the sanitizer build: toml++ 3.3.0 (Debian 12) reaches __builtin_unreachable in
# is_non_ascii_horizontal_whitespace for some non-ASCII code points (e.g. U+02C1; fuzz_gate_rules
# found it; upstream marzer/tomlplusplus#295, fixed by #305 after 3.3.0). Its header cannot be
# patched from here, so the check is off where toml++ is compiled; see README "Fuzzing".
if(DICEBENCH_SANITIZE)
  target_compile_options(dicebench_tomlplusplus INTERFACE -fno-sanitize=unreachable)
endif()

if(DICEBENCH_BUILD_TESTS)
  find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h REQUIRED)
  add_library(dicebench_doctest INTERFACE)
  target_include_directories(dicebench_doctest SYSTEM INTERFACE ${DOCTEST_INCLUDE_DIR})
endif()
