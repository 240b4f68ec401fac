import torch.nn as nn

ADD_SOURCE = """
__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { c[i] = a[i] + b[i]; }
}
"""


class ModelNew(nn.Module):
    def forward(self, a, b):
        return fused_add(a, b)  # {not_a_placeholder}
