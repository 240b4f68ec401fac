# dicebench_precompile_common_headers(): gives a target with many translation units one
# precompiled header of the third-party headers they share. nlohmann/json.hpp costs about 3.3 s of
# the compiler in each of the 161 translation units that include it, and CLI11 (header-only in the
# 2.1 that Debian ships) about 10 s in each of the dicebench executable's 17; each target's header
# is made once, with that target's own flags, so it is exactly what the translation units would
# have parsed. Every translation unit of the target gets it first (-include); the headers' include
# guards make a unit's own #include of them a no-op. CMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns it
# off (CMake's own switch).
#
#   dicebench_precompile_common_headers(<target> [CLI])     CLI: CLI11 too
function(dicebench_precompile_common_headers target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "CLI" "" "")
  set(headers <nlohmann/json.hpp> <fmt/format.h> <filesystem> <string> <vector> <optional> <map>)
  if(ARG_CLI)
    list(APPEND headers <CLI/CLI.hpp>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
