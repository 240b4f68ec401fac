from torch.utils.cpp_extension import load_inline as b
src = r"""__global__ void k() {}"""  # c
m = b("m", "", src, functions=["f"]); x = (1,
  2) \
  + 3
