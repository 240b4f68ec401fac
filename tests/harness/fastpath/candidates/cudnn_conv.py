# fastpath-test: functions=conv_relu_cuda,cudnn_error_cuda,check_gt_cuda expect=nvrtc requires=cudnn
# cuDNN on torch's handle (ATen/cudnn/Handle.h) from host code: a convolution with a fixed
# algorithm and an allocator workspace, then a ReLU kernel; AT_CUDNN_CHECK's error (torch's
# CuDNNError, a RuntimeError) and TORCH_CHECK_GT's, whose messages the model returns (without the
# logger's time and line). Needs cudnn.h and libcudnn.so in the CUDA toolkit's folders (where torch's
# build looks too); without them the fast path declines it (a g++ error naming cudnn.h).
import re

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/Exceptions.h>
#include <ATen/cudnn/Handle.h>
#include <c10/cuda/CUDACachingAllocator.h>

#define CHECK_CUDNN(status) AT_CUDNN_CHECK(status, " (conv_relu_cuda)")

__global__ void relu_kernel(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor conv_relu_cuda(torch::Tensor input, torch::Tensor weight, int64_t padding) {
    TORCH_CHECK_EQ(input.dim(), 4);
    TORCH_CHECK_GT(weight.size(0), 0) << "weight has no output channels";
    cudnnHandle_t handle = at::native::getCudnnHandle();
    cudnnTensorDescriptor_t in_desc, out_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&in_desc));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&out_desc));
    CHECK_CUDNN(cudnnCreateFilterDescriptor(&w_desc));
    CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&conv_desc));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(in_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, input.size(0), input.size(1),
                                           input.size(2), input.size(3)));
    CHECK_CUDNN(cudnnSetFilter4dDescriptor(w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, weight.size(0), weight.size(1),
                                           weight.size(2), weight.size(3)));
    CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv_desc, padding, padding, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    int n, c, h, w;
    CHECK_CUDNN(cudnnGetConvolution2dForwardOutputDim(conv_desc, in_desc, w_desc, &n, &c, &h, &w));
    auto out = torch::empty({n, c, h, w}, input.options());
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(out_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    size_t workspace_size = 0;
    CHECK_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(handle, in_desc, w_desc, conv_desc, out_desc, algo,
                                                        &workspace_size));
    auto workspace = c10::cuda::CUDACachingAllocator::get()->allocate(workspace_size);
    const float alpha = 1.f, beta = 0.f;
    CHECK_CUDNN(cudnnConvolutionForward(handle, &alpha, in_desc, input.data_ptr<float>(), w_desc,
                                        weight.data_ptr<float>(), conv_desc, algo, workspace.get(), workspace_size,
                                        &beta, out_desc, out.data_ptr<float>()));
    const int total = out.numel();
    relu_kernel<<<(total + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(out.data_ptr<float>(), total);
    CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(conv_desc));
    CHECK_CUDNN(cudnnDestroyFilterDescriptor(w_desc));
    CHECK_CUDNN(cudnnDestroyTensorDescriptor(out_desc));
    CHECK_CUDNN(cudnnDestroyTensorDescriptor(in_desc));
    return out;
}

void cudnn_error_cuda(int64_t code) {
    AT_CUDNN_CHECK(static_cast<cudnnStatus_t>(code), " (on purpose)");
}

void check_gt_cuda(int64_t a, int64_t b) {
    TORCH_CHECK_GT(a, b) << "and more";
}
"""

cpp_source = r"""
torch::Tensor conv_relu_cuda(torch::Tensor input, torch::Tensor weight, int64_t padding);
void cudnn_error_cuda(int64_t code);
void check_gt_cuda(int64_t a, int64_t b);
"""

module = load_inline(
    name="cudnn_conv",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["conv_relu_cuda", "cudnn_error_cuda", "check_gt_cuda"],
)


def error_of(call, *args) -> str:
    try:
        call(*args)
    except RuntimeError as e:
        # TORCH_CHECK_GT's message starts with the logger's time, file and line.
        return type(e).__name__ + ": " + re.sub(r"^\[F\S+ \S+ [^\]]*\] ", "", str(e))
    return "no error"


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, bias=False)

    def forward(self, x):
        y = module.conv_relu_cuda(x, self.conv.weight, 1)
        module.check_gt_cuda(2, 1)
        return (y, error_of(module.cudnn_error_cuda, 2000), error_of(module.cudnn_error_cuda, 3000),
                error_of(module.check_gt_cuda, 1, 2))


def get_inputs():
    return [torch.randn(4, 8, 32, 32, device="cuda")]


def get_init_inputs():
    return []
