# Finds libtorch's C++ parts in the project's Python (torch's wheel ships its headers and shared
# libraries) and defines the INTERFACE target dicebench_torch for the few targets that link it
# (the model engine and its plugins; never the dicebench host). Sets DICEBENCH_TORCH_FOUND and,
# when torch was built with CUDA, DICEBENCH_TORCH_CUDA.
# Explicit targets instead of find_package(Torch): TorchConfig.cmake of a CUDA wheel insists on
# finding a matching CUDA toolkit, cuDNN and NVTX even for code that only calls ATen.
if(TARGET dicebench_torch)  # found already, from another folder: the same results here
  get_property(DICEBENCH_TORCH_RPATH GLOBAL PROPERTY DICEBENCH_TORCH_RPATH)
  get_property(DICEBENCH_TORCH_CUDA GLOBAL PROPERTY DICEBENCH_TORCH_CUDA)
  set(DICEBENCH_TORCH_FOUND ON)
  return()
endif()
set(DICEBENCH_TORCH_FOUND OFF)
set(DICEBENCH_TORCH_CUDA OFF)
if(NOT Python3_EXECUTABLE)
  message(STATUS "dicebench: no Python; libtorch is not used")
  return()
endif()
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c "import os, torch, torch.utils.cpp_extension as c; print('|'.join(c.include_paths())); print(os.path.join(os.path.dirname(torch.__file__), 'lib')); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__); print(int(torch.version.cuda is not None))"
  OUTPUT_VARIABLE _torch_info RESULT_VARIABLE _torch_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _torch_rc EQUAL 0)
  message(STATUS "dicebench: ${Python3_EXECUTABLE} has no torch; the model engine is not built")
  return()
endif()
string(REPLACE "\n" ";" _torch_lines "${_torch_info}")
list(GET _torch_lines 0 _torch_includes)
list(GET _torch_lines 1 _torch_libdir)
list(GET _torch_lines 2 _torch_cxx11_abi)
list(GET _torch_lines 3 _torch_version)
list(GET _torch_lines 4 _torch_cuda)
string(REPLACE "|" ";" _torch_includes "${_torch_includes}")
find_library(DICEBENCH_TORCH_CPU_LIBRARY torch_cpu PATHS ${_torch_libdir} NO_DEFAULT_PATH)
find_library(DICEBENCH_C10_LIBRARY c10 PATHS ${_torch_libdir} NO_DEFAULT_PATH)
if(NOT DICEBENCH_TORCH_CPU_LIBRARY OR NOT DICEBENCH_C10_LIBRARY OR NOT EXISTS "${_torch_libdir}/../include/ATen/core/Tensor.h")
  message(STATUS "dicebench: torch ${_torch_version} in ${_torch_libdir} lacks its C++ headers or libraries; the model engine is not built")
  return()
endif()

add_library(dicebench_torch INTERFACE)
target_include_directories(dicebench_torch SYSTEM INTERFACE ${_torch_includes})
target_compile_definitions(dicebench_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${_torch_cxx11_abi})
target_link_libraries(dicebench_torch INTERFACE ${DICEBENCH_TORCH_CPU_LIBRARY} ${DICEBENCH_C10_LIBRARY})
if(_torch_cuda)
  find_library(DICEBENCH_TORCH_CUDA_LIBRARY torch_cuda PATHS ${_torch_libdir} NO_DEFAULT_PATH)
  find_library(DICEBENCH_C10_CUDA_LIBRARY c10_cuda PATHS ${_torch_libdir} NO_DEFAULT_PATH)
  if(DICEBENCH_TORCH_CUDA_LIBRARY AND DICEBENCH_C10_CUDA_LIBRARY)
    # Nothing references libtorch_cuda's symbols directly: it registers the CUDA kernels when
    # loaded, so it must stay linked where the toolchain drops unused libraries (Ubuntu).
    target_link_libraries(dicebench_torch INTERFACE "-Wl,--no-as-needed" ${DICEBENCH_TORCH_CUDA_LIBRARY}
                          ${DICEBENCH_C10_CUDA_LIBRARY} "-Wl,--as-needed")
    # The CUDA runtime libtorch_cuda loads (the wheel's own), for code that includes torch's CUDA
    # headers: their inline functions call it directly.
    file(GLOB _torch_cudart "${_torch_libdir}/../../nvidia/*/lib/libcudart.so*" "${_torch_libdir}/libcudart*.so*")
    if(_torch_cudart)
      list(GET _torch_cudart 0 DICEBENCH_TORCH_CUDART)
      target_link_libraries(dicebench_torch INTERFACE ${DICEBENCH_TORCH_CUDART})
    endif()
    set(DICEBENCH_TORCH_CUDA ON)
  endif()
endif()
# Executables find torch where the wheel keeps it (its libraries find their CUDA ones themselves).
set(DICEBENCH_TORCH_RPATH "${_torch_libdir}")
set(DICEBENCH_TORCH_FOUND ON)
set_property(GLOBAL PROPERTY DICEBENCH_TORCH_RPATH "${DICEBENCH_TORCH_RPATH}")
set_property(GLOBAL PROPERTY DICEBENCH_TORCH_CUDA ${DICEBENCH_TORCH_CUDA})
message(STATUS "dicebench: libtorch ${_torch_version} (CUDA: ${DICEBENCH_TORCH_CUDA}) in ${_torch_libdir}")
