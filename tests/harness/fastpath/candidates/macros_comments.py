# fastpath-test: functions=clamp_scale_cuda expect=nvrtc
# Macros, comments and string literals that hold `<<<`, braces and quotes, a __device__ helper,
# __launch_bounds__, a struct passed by value, an extern "C" kernel and a namespace.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) TORCH_CHECK((x).is_cuda(), #x " must be a CUDA tensor { not <<<cpu>>> }")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK((x).is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) \
    CHECK_CUDA(x);     \
    CHECK_CONTIGUOUS(x)
#define BLOCK_SIZE 128
#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : ((v) > (hi) ? (hi) : (v)))

/* A block comment with a fake launch: fake_kernel<<<1, 1>>>(); and an unbalanced brace {
   that the scanner must not count. */
// A line comment: another<<<2, 2>>>(x); }

struct ClampParams {
    float lo;
    float hi;
    float scale;
};

namespace fastpath_test {

__device__ inline float apply(float v, const ClampParams& p) {
    const char* note = "a string with } and { and <<< inside";
    (void)note;
    return CLAMP(v * p.scale, p.lo, p.hi);
}

__global__ void __launch_bounds__(BLOCK_SIZE) clamp_scale_kernel(const float* in, float* out, ClampParams p, int n) {
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    char brace = '}';
    if (i < n && brace == '}') out[i] = apply(in[i], p);
}

}  // namespace fastpath_test

extern "C" __global__ void fill_kernel(float* out, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

torch::Tensor clamp_scale_cuda(torch::Tensor input, double lo, double hi, double scale) {
    CHECK_INPUT(input);
    const char* message = "launching clamp_scale_kernel<<<blocks, BLOCK_SIZE>>>";  // not a launch
    (void)message;
    auto out = torch::empty_like(input);
    int n = input.numel();
    ClampParams p{(float)lo, (float)hi, (float)scale};
    int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    fill_kernel<<<blocks, BLOCK_SIZE>>>(out.data_ptr<float>(), -1.0f, n);
    fastpath_test::clamp_scale_kernel<<<blocks, BLOCK_SIZE>>>(input.data_ptr<float>(), out.data_ptr<float>(), p, n);
    return out;
}
"""

cpp_source = "torch::Tensor clamp_scale_cuda(torch::Tensor input, double lo, double hi, double scale);"

module = load_inline(
    name="macros_comments",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["clamp_scale_cuda"],
    extra_cuda_cflags=["-lineinfo", "-DFASTPATH_TEST=1"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.clamp_scale_cuda(x, -0.5, 0.75, 1.5)


def get_inputs():
    return [torch.randn(100003, device="cuda")]


def get_init_inputs():
    return []
