import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# C = triu(A @ B) for upper-triangular A and B. For an output tile (row block by, column block bx)
# only K tiles by..bx can hold non-zero products (A[i, k] != 0 needs k >= i, B[k, j] != 0 needs
# k <= j), and tiles strictly below the diagonal are all zero, so they are written without any work.
triu_matmul_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

#define TILE 32
#define ROWS_PER_THREAD 4   // blockDim = (32, 8): each thread computes 4 rows of one column

__global__ void triu_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, int N) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];

    const int bx = blockIdx.x, by = blockIdx.y;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = bx * TILE + tx;

    if (by > bx) {  // entirely below the diagonal
#pragma unroll
        for (int r = 0; r < ROWS_PER_THREAD; ++r) {
            int row = by * TILE + ty + r * 8;
            if (row < N && col < N) C[(size_t)row * N + col] = 0.0f;
        }
        return;
    }

    float acc[ROWS_PER_THREAD] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int t = by; t <= bx; ++t) {
#pragma unroll
        for (int r = 0; r < ROWS_PER_THREAD; ++r) {
            int lr = ty + r * 8;
            int a_row = by * TILE + lr, a_col = t * TILE + tx;
            As[lr][tx] = (a_row < N && a_col < N) ? A[(size_t)a_row * N + a_col] : 0.0f;
            int b_row = t * TILE + lr;
            Bs[lr][tx] = (b_row < N && col < N) ? B[(size_t)b_row * N + col] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            float b = Bs[k][tx];
#pragma unroll
            for (int r = 0; r < ROWS_PER_THREAD; ++r) acc[r] += As[ty + r * 8][k] * b;
        }
        __syncthreads();
    }

#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r) {
        int row = by * TILE + ty + r * 8;
        if (row < N && col < N) C[(size_t)row * N + col] = (row <= col) ? acc[r] : 0.0f;
    }
}

torch::Tensor triu_matmul_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && A.size(0) == A.size(1) && A.sizes() == B.sizes(), "expected two N x N matrices");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int N = a.size(0);
    auto C = torch::empty_like(a);
    dim3 block(TILE, TILE / ROWS_PER_THREAD);
    dim3 grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    triu_matmul_kernel<<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

triu_matmul_cpp_source = "torch::Tensor triu_matmul_cuda(torch::Tensor A, torch::Tensor B);"

triu_matmul = load_inline(
    name="triu_matmul",
    cpp_sources=triu_matmul_cpp_source,
    cuda_sources=triu_matmul_source,
    functions=["triu_matmul_cuda"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.triu_matmul = triu_matmul

    def forward(self, A, B):
        return self.triu_matmul.triu_matmul_cuda(A, B)
