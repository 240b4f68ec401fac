import cutlass.cute as cute


@cute.kernel
def add_kernel(a, b, c):
    pass
