import triton


@triton.jit
def add_kernel(a, b, c):
    pass
