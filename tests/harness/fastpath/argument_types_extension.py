"""One extension whose functions take every parameter type the fast path converts from Python, the
calls the argument tests make of it, and what each call returns, computed with torch in Python.

Parameter types: at::Tensor, optional Tensor (given and None), at::IntArrayRef (from a list and
from a tuple), std::vector<int64_t>, int64_t, int, double, float, bool, at::ScalarType,
std::vector<at::Tensor>, optional int64_t and int (given and None), std::string (short and long,
several in one call), std::vector<int|double|float>, short, unsigned, uint64_t, optional double
and bool, c10::Scalar (which torch's caster refuses), and host functions that compute an output shape from such arguments and
allocate it with torch::empty / torch::zeros (the pooling and ConvTranspose3d candidates whose
IntArrayRef arguments once reached their code as freed memory).

test_fastpath_arguments.py builds CPP_SOURCE on the fast path and checks CPU_CALLS on CPU tensors;
test_fastpath_arguments_gpu.py builds CPP_SOURCE with CUDA_SOURCE on the fast path and with torch's
own load_inline and requires the same results from both for CPU_CALLS and CUDA_CALLS on CUDA tensors.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any, Callable, Optional

import torch
import torch.nn.functional as F

CPP_SOURCE = r"""
#include <torch/extension.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

// A list of integers as a 1-d int64 tensor on `device` (lists are not results a binding returns).
static torch::Tensor int_tensor(const std::vector<int64_t>& values, torch::Device device) {
    auto out = torch::empty({static_cast<int64_t>(values.size())}, torch::dtype(torch::kInt64));
    int64_t* data = out.data_ptr<int64_t>();
    for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
    return out.to(device);
}

static void append_bytes(std::vector<int64_t>& out, const std::string& s) {
    for (unsigned char c : s) out.push_back(c);
    out.push_back(-1);
}

torch::Tensor int_array_ref_values(torch::IntArrayRef values) { return int_tensor(values.vec(), torch::kCPU); }

torch::Tensor int_vector_values(std::vector<int64_t> values, int64_t scale) {
    for (auto& v : values) v *= scale;
    return int_tensor(values, torch::kCPU);
}

// A pooling candidate's output shape: the extents divided by the strides it was given.
torch::Tensor pooled_zeros(torch::Tensor x, torch::IntArrayRef kernel_size, torch::IntArrayRef stride) {
    TORCH_CHECK(x.dim() == 4 && kernel_size.size() == 2 && stride.size() == 2, "pooled_zeros: bad arguments");
    const int64_t out_h = (x.size(2) - kernel_size[0]) / stride[0] + 1;
    const int64_t out_w = (x.size(3) - kernel_size[1]) / stride[1] + 1;
    return torch::zeros({x.size(0), x.size(1), out_h, out_w}, x.options());
}

// A ConvTranspose3d candidate's output shape, allocated with torch::empty from a vector and with
// torch::zeros from a braced list.
std::tuple<torch::Tensor, torch::Tensor> conv_transpose3d_outputs(torch::Tensor x, torch::Tensor weight,
                                                                  torch::IntArrayRef stride,
                                                                  torch::IntArrayRef padding,
                                                                  torch::IntArrayRef output_padding,
                                                                  torch::IntArrayRef dilation, int64_t groups) {
    TORCH_CHECK(x.dim() == 5 && weight.dim() == 5, "conv_transpose3d_outputs: 5-d input and weight");
    std::vector<int64_t> sizes = {x.size(0), weight.size(1) * groups};
    for (int64_t d = 0; d < 3; ++d) {
        sizes.push_back((x.size(d + 2) - 1) * stride[d] - 2 * padding[d] + dilation[d] * (weight.size(d + 2) - 1) +
                        output_padding[d] + 1);
    }
    auto filled = torch::empty(sizes, x.options());
    filled.fill_(0.5);
    auto zeros = torch::zeros({sizes[0], sizes[1], sizes[2], sizes[3], sizes[4]}, x.options());
    return {filled, zeros};
}

torch::Tensor add_optional_bias(torch::Tensor x, c10::optional<torch::Tensor> bias, double alpha) {
    if (bias.has_value()) return x.add(*bias, alpha);
    return x * alpha;
}

torch::Tensor scale_shift(torch::Tensor x, double scale, float shift) { return x * scale + shift; }

std::tuple<double, double> floating_values(double d, float f) { return {d, f}; }

std::tuple<int64_t, int64_t, int64_t> integer_values(int64_t a, int b) {
    return {a + b, a * b, static_cast<int64_t>(b)};
}

std::tuple<bool, int64_t> bool_values(bool a, bool b) { return {a && !b, (a ? 1 : 0) + (b ? 2 : 0)}; }

torch::Tensor cast_to(torch::Tensor x, torch::ScalarType dtype) { return x.to(dtype); }

torch::Tensor stack_tensors(std::vector<torch::Tensor> xs, int64_t dim) { return torch::stack(xs, dim); }

std::tuple<int64_t, int64_t> optional_ints(std::optional<int64_t> a, c10::optional<int> b) {
    return {a.value_or(-1), b.has_value() ? static_cast<int64_t>(*b) * 2 : -7};
}

torch::Tensor string_bytes(std::string a, const std::string& b, std::string c) {
    std::vector<int64_t> out;
    append_bytes(out, a);
    append_bytes(out, b);
    append_bytes(out, c);
    return int_tensor(out, torch::kCPU);
}

static torch::Tensor double_tensor(const std::vector<double>& values) {
    auto out = torch::empty({static_cast<int64_t>(values.size())}, torch::dtype(torch::kFloat64));
    double* data = out.data_ptr<double>();
    for (size_t i = 0; i < values.size(); ++i) data[i] = values[i];
    return out;
}

// The other number types a bound function may take.
std::tuple<torch::Tensor, torch::Tensor, int64_t, int64_t, int64_t, int64_t, double, int64_t>
other_numbers(std::vector<int> ints, std::vector<double> doubles, const std::vector<float>& floats, short s,
              unsigned u, uint64_t big, std::optional<double> maybe_double, std::optional<bool> maybe_flag) {
    std::vector<double> reals(doubles.begin(), doubles.end());
    reals.insert(reals.end(), floats.begin(), floats.end());
    return {int_tensor(std::vector<int64_t>(ints.begin(), ints.end()), torch::kCPU), double_tensor(reals), s, u,
            static_cast<int64_t>(big % 1000003), static_cast<int64_t>(big >> 32), maybe_double.value_or(-0.5),
            maybe_flag.has_value() ? (*maybe_flag ? 1 : 0) : -1};
}

// torch's pybind11 caster for c10::Scalar does not load ("pybind11 loading for c10::Scalar NYI"):
// every call raises, from torch's build and so from the fast path.
torch::Tensor scalar_fill(c10::Scalar value) { return torch::full({1}, value); }

// Every converted type in one call, lists and strings interleaved.
std::tuple<torch::Tensor, torch::Tensor> every_type(torch::Tensor x, c10::optional<torch::Tensor> y,
                                                    torch::IntArrayRef first, std::vector<int64_t> second,
                                                    std::string short_text, torch::IntArrayRef third,
                                                    std::string long_text, std::vector<torch::Tensor> addends,
                                                    int64_t i, int j, double d, float f, bool flag,
                                                    torch::ScalarType dtype, std::optional<int64_t> maybe,
                                                    std::string last_text) {
    auto h = y.has_value() ? x + *y : x.clone();
    for (const auto& t : addends) h = h + t;
    h = (h * d + f).to(dtype);
    std::vector<int64_t> ints(first.begin(), first.end());
    ints.push_back(-2);
    ints.insert(ints.end(), second.begin(), second.end());
    ints.push_back(-2);
    ints.insert(ints.end(), third.begin(), third.end());
    ints.push_back(-2);
    append_bytes(ints, short_text);
    append_bytes(ints, long_text);
    append_bytes(ints, last_text);
    ints.insert(ints.end(), {i, j, flag ? 1 : 0, maybe.value_or(-3), static_cast<int64_t>(addends.size())});
    return {h, int_tensor(ints, x.device())};
}
"""

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

__global__ void max_pool2d_kernel(const float* x, float* out, int64_t planes, int64_t h, int64_t w, int64_t out_h,
                                  int64_t out_w, int64_t kernel_h, int64_t kernel_w, int64_t stride_h,
                                  int64_t stride_w) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= planes * out_h * out_w) return;
    const int64_t ox = i % out_w, oy = (i / out_w) % out_h, plane = i / (out_w * out_h);
    const float* in = x + plane * h * w;
    float best = -INFINITY;
    for (int64_t ky = 0; ky < kernel_h; ++ky)
        for (int64_t kx = 0; kx < kernel_w; ++kx) best = fmaxf(best, in[(oy * stride_h + ky) * w + ox * stride_w + kx]);
    out[i] = best;
}

torch::Tensor max_pool2d_cuda(torch::Tensor x, torch::IntArrayRef kernel_size, torch::IntArrayRef stride) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.scalar_type() == torch::kFloat32, "max_pool2d_cuda: 4-d float CUDA x");
    auto input = x.contiguous();
    const int64_t out_h = (x.size(2) - kernel_size[0]) / stride[0] + 1;
    const int64_t out_w = (x.size(3) - kernel_size[1]) / stride[1] + 1;
    auto out = torch::empty({x.size(0), x.size(1), out_h, out_w}, x.options());
    const int64_t total = out.numel();
    const int threads = 256;
    const int blocks = static_cast<int>((total + threads - 1) / threads);
    max_pool2d_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<float>(), out.data_ptr<float>(), x.size(0) * x.size(1), x.size(2), x.size(3), out_h, out_w,
        kernel_size[0], kernel_size[1], stride[0], stride[1]);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// A direct (gather) transposed 3-d convolution; weight is (in_channels, out_channels / groups, kd, kh, kw).
__global__ void conv_transpose3d_kernel(const float* x, const float* weight, const float* bias, float* out,
                                        int64_t batch, int64_t in_channels, int64_t in_d, int64_t in_h, int64_t in_w,
                                        int64_t out_channels, int64_t out_d, int64_t out_h, int64_t out_w,
                                        int64_t kernel_d, int64_t kernel_h, int64_t kernel_w, int64_t stride_d,
                                        int64_t stride_h, int64_t stride_w, int64_t pad_d, int64_t pad_h,
                                        int64_t pad_w, int64_t groups) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= batch * out_channels * out_d * out_h * out_w) return;
    const int64_t ow = i % out_w, oh = (i / out_w) % out_h, od = (i / (out_w * out_h)) % out_d;
    const int64_t oc = (i / (out_w * out_h * out_d)) % out_channels, n = i / (out_w * out_h * out_d * out_channels);
    const int64_t out_per_group = out_channels / groups, in_per_group = in_channels / groups;
    const int64_t group = oc / out_per_group, oc_in_group = oc % out_per_group;
    float sum = bias ? bias[oc] : 0.0f;
    for (int64_t ic = group * in_per_group; ic < (group + 1) * in_per_group; ++ic)
        for (int64_t kd = 0; kd < kernel_d; ++kd) {
            const int64_t td = od + pad_d - kd;
            if (td < 0 || td % stride_d != 0 || td / stride_d >= in_d) continue;
            for (int64_t kh = 0; kh < kernel_h; ++kh) {
                const int64_t th = oh + pad_h - kh;
                if (th < 0 || th % stride_h != 0 || th / stride_h >= in_h) continue;
                for (int64_t kw = 0; kw < kernel_w; ++kw) {
                    const int64_t tw = ow + pad_w - kw;
                    if (tw < 0 || tw % stride_w != 0 || tw / stride_w >= in_w) continue;
                    const float xv = x[(((n * in_channels + ic) * in_d + td / stride_d) * in_h + th / stride_h) * in_w +
                                       tw / stride_w];
                    const float wv =
                        weight[(((ic * out_per_group + oc_in_group) * kernel_d + kd) * kernel_h + kh) * kernel_w + kw];
                    sum += xv * wv;
                }
            }
        }
    out[i] = sum;
}

torch::Tensor conv_transpose3d_cuda(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                                    torch::IntArrayRef stride, torch::IntArrayRef padding,
                                    torch::IntArrayRef output_padding, int64_t groups) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 5 && weight.dim() == 5, "conv_transpose3d_cuda: 5-d CUDA tensors");
    auto input = x.contiguous();
    auto w = weight.contiguous();
    std::vector<int64_t> sizes = {x.size(0), w.size(1) * groups};
    for (int64_t d = 0; d < 3; ++d)
        sizes.push_back((x.size(d + 2) - 1) * stride[d] - 2 * padding[d] + w.size(d + 2) + output_padding[d]);
    auto out = torch::empty(sizes, x.options());
    const int64_t total = out.numel();
    const int threads = 128;
    const int blocks = static_cast<int>((total + threads - 1) / threads);
    conv_transpose3d_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        input.data_ptr<float>(), w.data_ptr<float>(), bias.has_value() ? bias->contiguous().data_ptr<float>() : nullptr,
        out.data_ptr<float>(), sizes[0], x.size(1), x.size(2), x.size(3), x.size(4), sizes[1], sizes[2], sizes[3],
        sizes[4], w.size(2), w.size(3), w.size(4), stride[0], stride[1], stride[2], padding[0], padding[1],
        padding[2], groups);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

# What cpp_sources must declare for the functions CUDA_SOURCE defines (load_inline binds from it).
CUDA_DECLARATIONS = r"""
torch::Tensor max_pool2d_cuda(torch::Tensor x, torch::IntArrayRef kernel_size, torch::IntArrayRef stride);
torch::Tensor conv_transpose3d_cuda(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias,
                                    torch::IntArrayRef stride, torch::IntArrayRef padding,
                                    torch::IntArrayRef output_padding, int64_t groups);
"""

CPP_FUNCTIONS = ["int_array_ref_values", "int_vector_values", "pooled_zeros", "conv_transpose3d_outputs",
                 "add_optional_bias", "scale_shift", "floating_values", "integer_values", "bool_values", "cast_to",
                 "stack_tensors", "optional_ints", "string_bytes", "other_numbers", "scalar_fill",
                 "every_type"]
CUDA_FUNCTIONS = ["max_pool2d_cuda", "conv_transpose3d_cuda"]


@dataclasses.dataclass
class Call:
    """One call of a bound function: its arguments, made for a device, and either the result the same
    computation gives in Python or the exception a stock module raises for them."""

    function: str
    arguments: Callable[[str], tuple]
    expected: Optional[Callable[..., Any]] = None
    raises: Optional[type] = None
    tolerance: float = 0.0  # for results of a kernel compared with torch's own operator

    def describe(self, arguments: tuple) -> str:
        return f"{self.function}({', '.join(shown(a) for a in arguments)})"


def shown(value: Any) -> str:
    """An argument for messages: tensors by shape, long strings shortened."""
    if isinstance(value, torch.Tensor):
        return f"tensor{tuple(value.shape)}" if value.dim() else f"tensor({value.item()})"
    if isinstance(value, (list, tuple)):
        items = ", ".join(shown(v) for v in value)
        return f"[{items}]" if isinstance(value, list) else f"({items}{',' if len(value) == 1 else ''})"
    if isinstance(value, str) and len(value) > 24:
        return repr(value[:16] + f"...({len(value)} characters)")
    return repr(value)


def float32(value: float) -> float:
    """A Python float rounded to float32, as a C++ float parameter holds it."""
    return struct.unpack("f", struct.pack("f", value))[0]


def int_tensor(values: list, device: str = "cpu") -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int64, device=device)


def string_codes(*texts: str) -> list:
    codes = []
    for text in texts:
        codes += list(text.encode("utf-8")) + [-1]
    return codes


def randn(*shape: int, device: str, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator).to(device)


def conv_transpose3d_outputs(x, weight, stride, padding, output_padding, dilation, groups):
    shape = F.conv_transpose3d(x, weight, stride=stride, padding=padding, output_padding=output_padding,
                               dilation=dilation, groups=groups).shape
    return torch.full(shape, 0.5, device=x.device), torch.zeros(shape, device=x.device)


def every_type(x, y, first, second, short_text, third, long_text, addends, i, j, d, f, flag, dtype, maybe, last_text):
    h = x + y if y is not None else x
    for t in addends:
        h = h + t
    h = (h * d + float32(f)).to(dtype)
    ints = list(first) + [-2] + list(second) + [-2] + list(third) + [-2]
    ints += string_codes(short_text, long_text, last_text)
    ints += [i, j, int(flag), -3 if maybe is None else maybe, len(addends)]
    return h, int_tensor(ints, str(x.device))


def other_numbers(ints, doubles, floats, s, u, big, maybe_double, maybe_flag):
    reals = [float(d) for d in doubles] + [float32(f) for f in floats]
    return (int_tensor(list(ints)), torch.tensor(reals, dtype=torch.float64), s, u, big % 1000003, big >> 32,
            -0.5 if maybe_double is None else float(maybe_double), -1 if maybe_flag is None else int(maybe_flag))


LONG_TEXT = "a string well past the small-string buffer of std::string, " * 3


def cpu_calls() -> list:
    """Calls of CPP_SOURCE's functions; arguments on the device the call is made for."""
    calls = []
    for values in ([3, 1, 4], (3, 1, 4), [], (7,), [-5, 2 ** 40, 0, 9, 11, 13, 17, 19], (2, 2), [0, 0]):
        calls.append(Call("int_array_ref_values", lambda device, v=values: (v,), lambda v: int_tensor(list(v))))
    calls.append(Call("int_array_ref_values", lambda device: ((torch.tensor(6), 7),),
                      lambda v: int_tensor([6, 7])))  # a 0-dim tensor in the sequence, as torch's caster allows
    for values, scale in (([1, 2, 3], 2), ((4, 5), -1), ([], 3), ((2 ** 33,), 1)):
        calls.append(Call("int_vector_values", lambda device, v=values, s=scale: (v, s),
                          lambda v, s: int_tensor([x * s for x in v])))
    for shape, kernel, stride in (((2, 3, 8, 8), (2, 2), (2, 2)), ((1, 2, 9, 7), [3, 2], [2, 1]),
                                  ((2, 1, 5, 6), (5, 3), [1, 3]), ((1, 1, 4, 4), [2, 2], (2, 2))):
        calls.append(Call("pooled_zeros", lambda device, s=shape, k=kernel, t=stride: (
            randn(*s, device=device, seed=1), k, t),
            lambda x, k, t: torch.zeros_like(F.max_pool2d(x, k, t))))
    for x_shape, w_shape, stride, padding, output_padding, dilation, groups in (
            ((2, 4, 3, 4, 5), (4, 3, 3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
            ((1, 4, 2, 3, 2), (4, 2, 2, 3, 1), [1, 2, 3], [0, 1, 0], [0, 1, 2], [1, 1, 1], 2),
            ((1, 2, 3, 3, 3), (2, 1, 3, 2, 3), (3, 1, 2), (2, 0, 1), (0, 0, 1), (2, 1, 1), 1)):
        calls.append(Call("conv_transpose3d_outputs", lambda device, xs=x_shape, ws=w_shape, a=stride, b=padding,
                          c=output_padding, e=dilation, g=groups: (
            randn(*xs, device=device, seed=2), randn(*ws, device=device, seed=3), a, b, c, e, g),
            conv_transpose3d_outputs))
    for with_bias, alpha in ((True, 0.5), (False, -2.0), (True, 3)):
        calls.append(Call("add_optional_bias", lambda device, b=with_bias, a=alpha: (
            randn(3, 5, device=device, seed=4), randn(3, 5, device=device, seed=5) if b else None, a),
            lambda x, bias, a: x.add(bias, alpha=a) if bias is not None else x * a))
    for scale, shift in ((0.5, 0.25), (-3.0, 0.1), (2, -7)):
        calls.append(Call("scale_shift", lambda device, s=scale, t=shift: (randn(4, 4, device=device, seed=6), s, t),
                          lambda x, s, t: x * s + float32(t)))
    for d, f in ((0.1, 0.1), (1e300, 1e-30), (-2, 3), (float("inf"), -1.5)):
        calls.append(Call("floating_values", lambda device, a=d, b=f: (a, b), lambda a, b: (float(a), float32(b))))
    calls.append(Call("floating_values", lambda device: (0.5, "0.5"), raises=TypeError))
    for a, b in ((3, 4), (-(2 ** 30), 2 ** 31 - 1), (7, -(2 ** 31)), (2 ** 40, -3), (0, torch.tensor(5))):
        calls.append(Call("integer_values", lambda device, x=a, y=b: (x, y),
                          lambda x, y: (x + int(y), x * int(y), int(y))))
    calls.append(Call("integer_values", lambda device: (1, 2 ** 31), raises=TypeError))  # past int's range
    calls.append(Call("integer_values", lambda device: (1.5, 2), raises=TypeError))
    for a, b in ((True, False), (False, True), (True, True), (1, 0)):
        calls.append(Call("bool_values", lambda device, x=a, y=b: (x, y),
                          lambda x, y: (bool(x) and not bool(y), int(bool(x)) + 2 * int(bool(y)))))
    for dtype in (torch.float64, torch.int32, torch.float16, torch.bool, torch.bfloat16):
        calls.append(Call("cast_to", lambda device, t=dtype: (randn(2, 3, device=device, seed=7) * 4, t),
                          lambda x, t: x.to(t)))
    calls.append(Call("cast_to", lambda device: (torch.ones(2, device=device), "float32"), raises=TypeError))
    for count, dim, as_tuple in ((3, 0, False), (2, 1, True), (1, -1, False)):
        calls.append(Call("stack_tensors", lambda device, n=count, d=dim, t=as_tuple: (
            (tuple if t else list)(randn(2, 3, device=device, seed=10 + k) for k in range(n)), d),
            lambda xs, d: torch.stack(list(xs), d)))
    for a, b in ((5, 6), (None, 6), (5, None), (None, None), (-(2 ** 50), -(2 ** 31))):
        calls.append(Call("optional_ints", lambda device, x=a, y=b: (x, y),
                          lambda x, y: (-1 if x is None else x, -7 if y is None else 2 * y)))
    for a, b, c in (("", "ab", LONG_TEXT), (LONG_TEXT, "x" * 15, "y" * 16), ("héllo", LONG_TEXT * 2, "z")):
        calls.append(Call("string_bytes", lambda device, x=a, y=b, z=c: (x, y, z),
                          lambda x, y, z: int_tensor(string_codes(x, y, z))))
    for numbers in (([1, -2, 2 ** 31 - 1], (0.1, 2.5), [0.1, 1e-3], -32768, 2 ** 32 - 1, 2 ** 64 - 1, None, True),
                    ((), [], (), 7, 0, 2 ** 63, 1.25, None),
                    ([5], [1], [2], 1, 1, 1, 3, False)):
        calls.append(Call("other_numbers", lambda device, n=numbers: n, other_numbers))
    for refused in (([2 ** 31], [], [], 0, 0, 0, None, None),  # past int's range
                    ([], [], [], 2 ** 15, 0, 0, None, None),  # past short's
                    ([], [], [], 0, -1, 0, None, None),  # negative for unsigned
                    ([], [], [], 0, 0, -1, None, None),
                    ([], ["x"], [], 0, 0, 0, None, None),
                    ([], [], [], 0, 0, 0, "1", None)):
        calls.append(Call("other_numbers", lambda device, n=refused: n, raises=TypeError))
    for value in (3, 2.5, True):
        calls.append(Call("scalar_fill", lambda device, v=value: (v,), raises=RuntimeError))
    for with_y, dtype in ((True, torch.float32), (False, torch.float64)):
        calls.append(Call("every_type", lambda device, w=with_y, t=dtype: (
            randn(2, 3, device=device, seed=20), randn(2, 3, device=device, seed=21) if w else None,
            (1, 2, 3), [4, 5], "short", [6, 7, 8, 9], LONG_TEXT,
            (randn(2, 3, device=device, seed=22), randn(2, 3, device=device, seed=23)), 2 ** 35, -12, 0.5, 0.3,
            w, t, None if w else 41, "tail"), every_type))
    return calls


def cuda_calls() -> list:
    """Calls of CUDA_SOURCE's functions (CUDA tensors only)."""
    calls = []
    for shape, kernel, stride in (((2, 3, 9, 8), (2, 2), (2, 2)), ((1, 2, 9, 7), [3, 2], (2, 1)),
                                  ((2, 4, 6, 6), [3, 3], [3, 3])):
        calls.append(Call("max_pool2d_cuda", lambda device, s=shape, k=kernel, t=stride: (
            randn(*s, device=device, seed=30), k, t),
            lambda x, k, t: F.max_pool2d(x, list(k), list(t))))
    for x_shape, w_shape, with_bias, stride, padding, output_padding, groups in (
            ((2, 4, 3, 4, 5), (4, 3, 3, 3, 3), True, (2, 2, 2), (1, 1, 1), (1, 1, 1), 1),
            ((1, 4, 2, 3, 2), (4, 2, 2, 3, 1), False, [1, 2, 3], [0, 1, 0], [0, 1, 2], 2),
            ((2, 2, 4, 3, 3), (2, 3, 3, 2, 3), True, (3, 1, 2), [1, 0, 1], (2, 0, 1), 1)):
        calls.append(Call("conv_transpose3d_cuda", lambda device, xs=x_shape, ws=w_shape, b=with_bias, a=stride,
                          p=padding, o=output_padding, g=groups: (
            randn(*xs, device=device, seed=31), randn(*ws, device=device, seed=32),
            randn(ws[1] * g, device=device, seed=33) if b else None, a, p, o, g),
            lambda x, w, b, a, p, o, g: F.conv_transpose3d(x, w, b, stride=a, padding=p, output_padding=o, groups=g),
            tolerance=1e-4))
    return calls


def same_result(got: Any, want: Any, tolerance: float = 0.0) -> Optional[str]:
    """None where `got` is `want` (tensors: same dtype, shape, device type and values, NaN equal to
    NaN; within `tolerance` where given), else what differs."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"a {type(got).__name__}, not a tensor"
        if (got.dtype, tuple(got.shape), got.device.type) != (want.dtype, tuple(want.shape), want.device.type):
            return (f"tensor {got.dtype} {tuple(got.shape)} on {got.device.type}, "
                    f"expected {want.dtype} {tuple(want.shape)} on {want.device.type}")
        if tolerance:
            same = torch.allclose(got, want, rtol=tolerance, atol=tolerance)
        else:
            same = torch.equal(got, want) or (want.is_floating_point() and
                                              bool(torch.all((got == want) | (got.isnan() & want.isnan()))))
        return None if same else f"tensor values differ: {got.flatten()[:8].tolist()} vs {want.flatten()[:8].tolist()}"
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"{got!r}, expected a tuple of {len(want)}"
        for index, (g, w) in enumerate(zip(got, want)):
            problem = same_result(g, w, tolerance)
            if problem:
                return f"item {index}: {problem}"
        return None
    if type(got) is not type(want) or got != want:
        return f"{got!r}, expected {want!r}"
    return None
