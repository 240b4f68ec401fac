# Install rules and the exported CMake package. Layout under the prefix:
#   bin/dicebench, bin/dicebench-worker, bin/dicebench-sandbox  the executables
#   share/dicebench/python/            the worker's Python harness
#   lib/dicebench/python/              dicebench_cuda and dicebench_fastpath_native, where CUDA was found
#   lib/dicebench/plugins/             plugins and their manifests (the host looks beside itself)
#   include/dicebench/                 the plugin SDK headers
#   lib/cmake/dicebench/               dicebenchConfig.cmake: find_package(dicebench) gives
#                                      dicebench::sdk, dicebench::dicebench and dicebench_add_plugin()
# Paths are fixed (not GNUInstallDirs) because the host finds its plugins relative to itself.
include(CMakePackageConfigHelpers)

get_filename_component(DICEBENCH_SOURCE_ROOT ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)

set(DICEBENCH_INSTALL_BIN_DIR bin)
set(DICEBENCH_INSTALL_PLUGIN_DIR lib/dicebench/plugins)
set(DICEBENCH_INSTALL_INCLUDE_DIR include)
set(DICEBENCH_INSTALL_CMAKE_DIR lib/cmake/dicebench)

# The product's plugins; the example plugin is a template for users and stays out.
set(DICEBENCH_INSTALLED_PLUGINS dicebench-suite-kernelbench dicebench-suite-dice-infill dicebench-model-replay dicebench-model-openai)
if(TARGET dicebench-model-local)  # built where torch has its C++ parts
  list(APPEND DICEBENCH_INSTALLED_PLUGINS dicebench-model-local)
endif()

install(TARGETS dicebench dicebench-worker dicebench-sandbox RUNTIME DESTINATION ${DICEBENCH_INSTALL_BIN_DIR})
if(TARGET dicebench-compile)
  install(TARGETS dicebench-compile RUNTIME DESTINATION ${DICEBENCH_INSTALL_BIN_DIR})
endif()
# The worker's Python, gathered from the harness's concerns into one folder (the worker's package,
# CUPTI timing and the fast path's package), and the compiled modules where they were built.
install(DIRECTORY ${DICEBENCH_SOURCE_ROOT}/harness/worker/python/dicebench_harness
                  ${DICEBENCH_SOURCE_ROOT}/harness/fastpath/python/dicebench_fastpath
        DESTINATION share/dicebench/python PATTERN __pycache__ EXCLUDE)
install(FILES ${DICEBENCH_SOURCE_ROOT}/harness/timing/python/dicebench_timing.py DESTINATION share/dicebench/python)
foreach(module dicebench_cuda dicebench_fastpath_native)
  if(TARGET ${module})
    install(TARGETS ${module} LIBRARY DESTINATION lib/dicebench/python)
  endif()
endforeach()

foreach(plugin IN LISTS DICEBENCH_INSTALLED_PLUGINS)
  if(NOT TARGET ${plugin})
    message(WARNING "dicebench install: plugin target ${plugin} does not exist; not installed")
    continue()
  endif()
  install(TARGETS ${plugin} LIBRARY DESTINATION ${DICEBENCH_INSTALL_PLUGIN_DIR})
  # The manifest records the library's size and modification time, which installing may change
  # (RPATH edits), so it is written afresh for the installed copy rather than copied.
  install(CODE "
    set(library \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${DICEBENCH_INSTALL_PLUGIN_DIR}/$<TARGET_FILE_NAME:${plugin}>\")
    message(STATUS \"Writing manifest of \${library}\")
    execute_process(COMMAND \"$<TARGET_FILE:dicebench>\" plugin-manifest \"\${library}\" RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR \"dicebench plugin-manifest \${library} failed\")
    endif()")
endforeach()

# The SDK: headers and the INTERFACE target, exported as dicebench::sdk.
install(DIRECTORY ${DICEBENCH_SOURCE_ROOT}/plugins/include/dicebench DESTINATION ${DICEBENCH_INSTALL_INCLUDE_DIR})
set_target_properties(dicebench_sdk PROPERTIES EXPORT_NAME sdk)
install(TARGETS dicebench_sdk EXPORT dicebenchTargets)
install(EXPORT dicebenchTargets NAMESPACE dicebench:: DESTINATION ${DICEBENCH_INSTALL_CMAKE_DIR})

# The package config (which also defines the imported dicebench::dicebench), its version file,
# and dicebench_add_plugin().
configure_package_config_file(${DICEBENCH_SOURCE_ROOT}/cmake/dicebenchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/dicebenchConfig.cmake
  INSTALL_DESTINATION ${DICEBENCH_INSTALL_CMAKE_DIR}
  PATH_VARS DICEBENCH_INSTALL_BIN_DIR DICEBENCH_INSTALL_PLUGIN_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/dicebenchConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/dicebenchConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/dicebenchConfigVersion.cmake
  ${DICEBENCH_SOURCE_ROOT}/cmake/DicebenchPlugin.cmake
  DESTINATION ${DICEBENCH_INSTALL_CMAKE_DIR})

# The example plugin's sources, to copy as the start of a new backend.
install(FILES
  ${DICEBENCH_SOURCE_ROOT}/plugins/example/CMakeLists.txt
  ${DICEBENCH_SOURCE_ROOT}/plugins/example/example_model.cpp
  ${DICEBENCH_SOURCE_ROOT}/plugins/example/README.md
  DESTINATION share/dicebench/example-plugin)
