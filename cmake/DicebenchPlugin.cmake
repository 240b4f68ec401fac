# dicebench_add_plugin(): builds a model or suite plugin as a shared library named
# libdicebench-<kind>-<name>.so against the plugin SDK (C ABI only), exporting just the entry
# symbol, and writes <library>.manifest.json beside it so that `dicebench list` can show the
# plugin's names without loading it (and whatever heavy libraries it links).
#
#   dicebench_add_plugin(<name> KIND model|suite SOURCES <files...> [LIBRARIES <targets...>]
#                        [OUTPUT_DIRECTORY <dir>] [NO_MANIFEST])
# The CMake target is dicebench-<kind>-<name>.
function(dicebench_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_MANIFEST" "KIND;OUTPUT_DIRECTORY" "SOURCES;LIBRARIES")
  if(NOT ARG_KIND MATCHES "^(model|suite)$")
    message(FATAL_ERROR "dicebench_add_plugin(${name}): KIND must be model or suite")
  endif()
  set(target dicebench-${ARG_KIND}-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE dicebench::sdk ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib")
  if(NOT ARG_OUTPUT_DIRECTORY)
    if(DEFINED DICEBENCH_PLUGIN_OUTPUT_DIR)
      set(ARG_OUTPUT_DIRECTORY ${DICEBENCH_PLUGIN_OUTPUT_DIR})
    else()
      set(ARG_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    endif()
  endif()
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  # Export the entry symbol alone: hidden visibility leaves out our own symbols but not the
  # standard library's template instantiations; a version script does.
  set(exports ${CMAKE_CURRENT_BINARY_DIR}/${target}.exports.map)
  file(CONFIGURE OUTPUT ${exports} CONTENT "{\n  global: dicebench_plugin_entry;\n  local: *;\n};\n")
  target_link_options(${target} PRIVATE LINKER:--version-script=${exports})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${exports})
  # Undefined symbols are an error at link time, not at dlopen time (but for the sanitizer build,
  # where a plugin takes the sanitizers' runtime from the executable that loads it).
  if(NOT DICEBENCH_SANITIZE)
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  endif()
  if(NOT ARG_NO_MANIFEST)
    if(TARGET dicebench)
      set(cli $<TARGET_FILE:dicebench>)
      add_dependencies(${target} dicebench)
    elseif(TARGET dicebench::dicebench)
      set(cli $<TARGET_FILE:dicebench::dicebench>)
    else()
      message(FATAL_ERROR "dicebench_add_plugin(${name}): no dicebench executable to write the manifest with")
    endif()
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${cli} plugin-manifest $<TARGET_FILE:${target}>
      COMMENT "Writing manifest of ${target}"
      VERBATIM)
  endif()
endfunction()
