// The CUPTI recorder on a real GPU (label gpu): kernels (compiled with NVRTC), a memset and a copy
// on two streams are all recorded, with plausible figures. Without a visible GPU every test case
// exits with code 77, which ctest reports as skipped.
#include <cuda_runtime.h>
#include <doctest/doctest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "harness/timing/cupti_recorder.hpp"

using namespace dicebench::timing;

namespace {

// Ends the test executable with ctest's skip code when no GPU is visible.
void require_gpu() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("[skipped] no CUDA device visible: %s\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "cudaGetDeviceCount found 0 devices");
    std::fflush(stdout);
    std::_Exit(77);
  }
}

#define CUDA_OK(call)                                                                                 \
  do {                                                                                                \
    const cudaError_t cuda_ok_status_ = (call);                                                       \
    REQUIRE_MESSAGE(cuda_ok_status_ == cudaSuccess, #call ": ", cudaGetErrorString(cuda_ok_status_)); \
  } while (0)

constexpr const char* kernel_source = R"(
namespace dicebench_test {
template <int N>
__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= N;
}
}  // namespace dicebench_test

extern "C" __global__ void dicebench_spin(float* out, long long cycles) {
  __shared__ float tile[256];
  extern __shared__ float dynamic_tile[];
  const int t = threadIdx.x + blockDim.x * threadIdx.y;
  long long start = clock64();
  while (clock64() - start < cycles) {}
  tile[t % 256] = t;
  dynamic_tile[t % 256] = 2 * t;
  __syncthreads();
  if (t == 0) out[blockIdx.x] = tile[(t + 1) % 256] + dynamic_tile[(t + 3) % 256];
}
)";

struct Kernels {
  cudaKernel_t scale2 = nullptr;
  cudaKernel_t spin = nullptr;
  std::string scale2_mangled;
};

// Compiles kernel_source for the current device and loads it.
Kernels load_kernels() {
  int device = 0, major = 0, minor = 0;
  CUDA_OK(cudaGetDevice(&device));
  CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  nvrtcProgram program = nullptr;
  REQUIRE(nvrtcCreateProgram(&program, kernel_source, "dicebench_test.cu", 0, nullptr, nullptr) == NVRTC_SUCCESS);
  REQUIRE(nvrtcAddNameExpression(program, "dicebench_test::scale<2>") == NVRTC_SUCCESS);
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
  const char* options[] = {arch.c_str(), "-std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 2, options);
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(program, log.data());
  REQUIRE_MESSAGE(compiled == NVRTC_SUCCESS, "NVRTC: ", log);
  std::size_t cubin_size = 0;
  REQUIRE(nvrtcGetCUBINSize(program, &cubin_size) == NVRTC_SUCCESS);
  std::vector<char> cubin(cubin_size);
  REQUIRE(nvrtcGetCUBIN(program, cubin.data()) == NVRTC_SUCCESS);
  const char* lowered = nullptr;
  REQUIRE(nvrtcGetLoweredName(program, "dicebench_test::scale<2>", &lowered) == NVRTC_SUCCESS);
  Kernels kernels;
  kernels.scale2_mangled = lowered;
  nvrtcDestroyProgram(&program);

  cudaLibrary_t library = nullptr;  // kept loaded for the process
  CUDA_OK(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUDA_OK(cudaLibraryGetKernel(&kernels.scale2, library, kernels.scale2_mangled.c_str()));
  CUDA_OK(cudaLibraryGetKernel(&kernels.spin, library, "dicebench_spin"));
  return kernels;
}

CuptiRecorder& recorder() {
  auto made = CuptiRecorder::instance();
  REQUIRE_MESSAGE(made.ok(), (made.ok() ? std::string() : made.error().message));
  return *made.value();
}

}  // namespace

TEST_CASE("kernels, a memset and a copy on two streams are all recorded") {
  require_gpu();
  CUDA_OK(cudaFree(nullptr));  // a context exists before the recorder subscribes, as in the worker
  CuptiRecorder& rec = recorder();
  const Kernels kernels = load_kernels();

  constexpr std::size_t memset_bytes = std::size_t{256} << 20;
  constexpr std::size_t copy_bytes = std::size_t{16} << 20;
  constexpr int elements = 1 << 20;
  float* big = nullptr;
  float* small = nullptr;
  float* out = nullptr;
  void* host = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&big), memset_bytes));
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&small), copy_bytes));
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&out), 64 * sizeof(float)));
  CUDA_OK(cudaMallocHost(&host, copy_bytes));
  cudaStream_t main_stream = nullptr, side_stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&side_stream, cudaStreamNonBlocking));

  int n = elements;
  void* scale_args[] = {&big, &n};
  long long cycles = 2'000'000;  // about 1 ms at H200 clocks
  void* spin_args[] = {&out, &cycles};
  const dim3 scale_grid(elements / 256), scale_block(256);
  const dim3 spin_grid(2, 3, 1), spin_block(32, 2, 1);
  constexpr std::size_t spin_dynamic_shared = 1024;
  auto launch_all = [&] {
    CUDA_OK(cudaMemsetAsync(big, 0, memset_bytes, main_stream));
    CUDA_OK(cudaLaunchKernel(reinterpret_cast<const void*>(kernels.scale2), scale_grid, scale_block, scale_args, 0,
                             main_stream));
    CUDA_OK(cudaMemcpyAsync(small, host, copy_bytes, cudaMemcpyHostToDevice, side_stream));
    CUDA_OK(cudaLaunchKernel(reinterpret_cast<const void*>(kernels.spin), spin_grid, spin_block, spin_args,
                             spin_dynamic_shared, side_stream));
  };
  launch_all();  // warm-up: first-launch costs stay out of the timed call
  CUDA_OK(cudaDeviceSynchronize());

  cudaEvent_t memset_start = nullptr, memset_end = nullptr;
  CUDA_OK(cudaEventCreate(&memset_start));
  CUDA_OK(cudaEventCreate(&memset_end));
  const auto begun = rec.begin();
  REQUIRE_MESSAGE(begun.ok(), (begun.ok() ? std::string() : begun.error().message));
  CUDA_OK(cudaEventRecord(memset_start, main_stream));
  launch_all();
  CUDA_OK(cudaEventRecord(memset_end, main_stream));
  CUDA_OK(cudaDeviceSynchronize());
  const auto ended = rec.end();
  REQUIRE_MESSAGE(ended.ok(), (ended.ok() ? std::string() : ended.error().message));
  const CallRecord& call = ended.value();
  float events_ms = 0;
  CUDA_OK(cudaEventElapsedTime(&events_ms, memset_start, memset_end));

  CHECK(call.begin_ns == begun.value());
  CHECK(call.dropped == 0);
  CHECK(call.incomplete == 0);
  CHECK(call.device_work);
  REQUIRE(call.activity.kernels.size() == 2);
  REQUIRE(call.activity.memsets.size() == 1);
  REQUIRE(call.activity.memcpys.size() == 1);

  const MemsetRecord& memset = call.activity.memsets[0];
  const MemcpyRecord& copy = call.activity.memcpys[0];
  const KernelRecord* scale = nullptr;
  const KernelRecord* spin = nullptr;
  for (const KernelRecord& k : call.activity.kernels) (k.mangled == "dicebench_spin" ? spin : scale) = &k;
  REQUIRE(scale != nullptr);
  REQUIRE(spin != nullptr);

  // names, launch shapes, shared memory
  CHECK(scale->mangled == kernels.scale2_mangled);
  CHECK(scale->name == "void dicebench_test::scale<2>(float*, int)");
  CHECK(spin->name == "dicebench_spin");
  CHECK(scale->grid == std::array<std::int32_t, 3>{elements / 256, 1, 1});
  CHECK(scale->block == std::array<std::int32_t, 3>{256, 1, 1});
  CHECK(spin->grid == std::array<std::int32_t, 3>{2, 3, 1});
  CHECK(spin->block == std::array<std::int32_t, 3>{32, 2, 1});
  cudaFuncAttributes spin_attributes{};
  CUDA_OK(cudaFuncGetAttributes(&spin_attributes, reinterpret_cast<const void*>(kernels.spin)));
  CHECK(spin->shared_bytes == static_cast<std::int64_t>(spin_attributes.sharedSizeBytes + spin_dynamic_shared));
  CHECK(memset.bytes == memset_bytes);
  CHECK(copy.bytes == copy_bytes);
  CHECK(copy.kind == "HtoD");

  // both streams are there: the memset and scale on one, the copy and spin on the other
  CHECK(memset.stream == scale->stream);
  CHECK(copy.stream == spin->stream);
  CHECK(memset.stream != copy.stream);
  const auto main_id = CuptiRecorder::stream_id(reinterpret_cast<std::uintptr_t>(main_stream));
  const auto side_id = CuptiRecorder::stream_id(reinterpret_cast<std::uintptr_t>(side_stream));
  REQUIRE(main_id.ok());
  REQUIRE(side_id.ok());
  CHECK(memset.stream == main_id.value());
  CHECK(copy.stream == side_id.value());

  // figures
  const double memset_us = static_cast<double>(memset.end_ns - memset.start_ns) / 1e3;
  const double spin_us = static_cast<double>(spin->end_ns - spin->start_ns) / 1e3;
  MESSAGE("span ", call.span_ns / 1e3, " us, busy ", call.busy_ns / 1e3, " us, host ", call.host_ns / 1e3,
          " us; memset of 256 MiB ", memset_us, " us (events around memset+scale: ", events_ms * 1e3, " us); spin ",
          spin_us, " us");
  CHECK(memset_us > 10.0);
  CHECK(memset_us < 100000.0);
  CHECK(spin_us > 100.0);
  CHECK(call.span_ns >= call.busy_ns);
  CHECK(call.busy_ns >= spin->end_ns - spin->start_ns);
  CHECK(call.busy_ns >= memset.end_ns - memset.start_ns);
  CHECK(call.first_start_ns >= call.span_origin_ns);
  CHECK(call.last_end_ns <= call.host_end_ns);  // the host synchronized after the last device end
  CHECK(call.host_ns >= call.span_ns);
  CHECK(call.marker);
  CHECK(call.span_ns == call.last_end_ns - call.span_origin_ns);
  for (const KernelRecord& k : call.activity.kernels) CHECK(k.device == static_cast<std::uint32_t>(0));

  cudaEventDestroy(memset_start);
  cudaEventDestroy(memset_end);
  cudaStreamDestroy(main_stream);
  cudaStreamDestroy(side_stream);
  cudaFreeHost(host);
  cudaFree(big);
  cudaFree(small);
  cudaFree(out);
}

TEST_CASE("a call without device work spans its host time and earlier work is not counted") {
  require_gpu();
  CUDA_OK(cudaFree(nullptr));
  CuptiRecorder& rec = recorder();
  void* buffer = nullptr;
  CUDA_OK(cudaMalloc(&buffer, 1 << 20));
  CUDA_OK(cudaMemset(buffer, 1, 1 << 20));  // work before begin()
  CUDA_OK(cudaDeviceSynchronize());
  const auto begun = rec.begin();
  REQUIRE(begun.ok());
  CUDA_OK(cudaDeviceSynchronize());
  const auto ended = rec.end();
  REQUIRE_MESSAGE(ended.ok(), (ended.ok() ? std::string() : ended.error().message));
  const CallRecord& call = ended.value();
  CHECK_FALSE(call.device_work);
  CHECK(call.activity.memsets.empty());
  CHECK(call.activity.kernels.empty());
  CHECK(call.busy_ns == 0);
  CHECK(call.span_ns == call.host_ns);
  CHECK(call.host_ns > 0);
  CHECK(call.dropped == 0);
  cudaFree(buffer);
}

TEST_CASE("begin() inside an open call cannot move its start, and end() then fails") {
  require_gpu();
  CUDA_OK(cudaFree(nullptr));
  CuptiRecorder& rec = recorder();
  CHECK_FALSE(rec.end().ok());  // no open call
  const auto first = rec.begin();
  REQUIRE(first.ok());
  CHECK(rec.in_call());
  const auto second = rec.begin();
  REQUIRE(second.ok());
  CHECK(second.value() == first.value());
  const auto ended = rec.end();
  REQUIRE_FALSE(ended.ok());
  CHECK(ended.error().message.find("begin() was called again") != std::string::npos);
  CHECK_FALSE(rec.in_call());
  // the recorder works again afterwards, and cancel() closes a call
  REQUIRE(rec.begin().ok());
  CHECK(rec.cancel());
  CHECK_FALSE(rec.cancel());
  REQUIRE(rec.begin().ok());
  CHECK(rec.end().ok());
}

TEST_CASE("end() waits for the device itself, so a caller that skips its synchronize cannot cut the span short") {
  require_gpu();
  CUDA_OK(cudaFree(nullptr));
  CuptiRecorder& rec = recorder();
  const Kernels kernels = load_kernels();
  float* out = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&out), 64 * sizeof(float)));
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  long long cycles = 20'000'000;  // about 10 ms
  void* args[] = {&out, &cycles};
  REQUIRE(rec.begin().ok());
  CUDA_OK(cudaLaunchKernel(reinterpret_cast<const void*>(kernels.spin), dim3(1), dim3(32), args, 1024, stream));
  const auto ended = rec.end();  // no synchronize before it
  REQUIRE_MESSAGE(ended.ok(), (ended.ok() ? std::string() : ended.error().message));
  const CallRecord& call = ended.value();
  REQUIRE(call.activity.kernels.size() == 1);
  CHECK(call.incomplete == 0);
  CHECK(call.activity.kernels[0].end_ns - call.activity.kernels[0].start_ns > 2'000'000);  // > 2 ms
  CHECK(call.last_end_ns <= call.host_end_ns);
  CHECK(call.marker);
  CHECK(call.span_ns == call.last_end_ns - call.span_origin_ns);
  cudaStreamDestroy(stream);
  cudaFree(out);
}

// Last in the file: the fault poisons the process's CUDA context for any test case after it.
TEST_CASE("a device fault inside the call makes end() fail with the CUDA error") {
  require_gpu();
  CUDA_OK(cudaFree(nullptr));
  CuptiRecorder& rec = recorder();
  const Kernels kernels = load_kernels();
  float* out = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&out), 64 * sizeof(float)));
  long long cycles = 1000;
  void* args[] = {&out, &cycles};
  REQUIRE(rec.begin().ok());
  // no dynamic shared memory for a kernel that writes 256 floats of it: an out-of-range access
  CUDA_OK(cudaLaunchKernel(reinterpret_cast<const void*>(kernels.spin), dim3(1), dim3(256), args, 0, nullptr));
  const auto ended = rec.end();
  REQUIRE_FALSE(ended.ok());
  MESSAGE(ended.error().message);
  CHECK(ended.error().message.find("cudaDeviceSynchronize in end() failed") != std::string::npos);
  CHECK_FALSE(rec.in_call());
}
