
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cfloat>

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

// One warp per row.
__global__ void row_max_kernel(const float* x, float* row_max, int rows, int cols) {
    int row = blockIdx.x;
    float m = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, x[(size_t)row * cols + c]);
    m = warp_max(m);
    if (threadIdx.x == 0) row_max[row] = m;
}

__global__ void exp_normalize_kernel(const float* x, const float* row_max, float* y, int rows, int cols) {
    int row = blockIdx.x;
    float m = row_max[row];
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += expf(x[(size_t)row * cols + c] - m);
    s = warp_sum(s);
    s = __shfl_sync(0xffffffff, s, 0);
    for (int c = threadIdx.x; c < cols; c += 32) y[(size_t)row * cols + c] = expf(x[(size_t)row * cols + c] - m) / s;
}

std::tuple<torch::Tensor, torch::Tensor> softmax_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    int rows = xc.size(0), cols = xc.size(1);
    auto row_max = torch::empty({rows}, xc.options());
    auto y = torch::empty_like(xc);
    row_max_kernel<<<rows, 32>>>(xc.data_ptr<float>(), row_max.data_ptr<float>(), rows, cols);
    exp_normalize_kernel<<<rows, 32>>>(xc.data_ptr<float>(), row_max.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return std::make_tuple(y, row_max);
}

torch::Tensor row_max_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    int rows = xc.size(0), cols = xc.size(1);
    auto row_max = torch::empty({rows}, xc.options());
    row_max_kernel<<<rows, 32>>>(xc.data_ptr<float>(), row_max.data_ptr<float>(), rows, cols);
    return row_max;
}
