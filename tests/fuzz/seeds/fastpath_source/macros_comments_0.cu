
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
