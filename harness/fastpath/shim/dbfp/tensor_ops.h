// ATen operators for the fast path's shim (dbfp/torch_core.h): each packs its arguments into
// dbfp_value and calls the operator through the dispatcher (dbfp_api::call_op), so the result is
// what ATen computes. Arguments left out take the schema's defaults on the module's side.
#pragma once

namespace dbfp {

struct None {};

// Arguments of an operator as dbfp_value (borrowed: valid for the call).
inline dbfp_value value_none() {
  dbfp_value v{};
  v.tag = DBFP_NONE;
  return v;
}
inline dbfp_value to_value(None) { return value_none(); }
inline dbfp_value to_value(std::nullopt_t) { return value_none(); }
inline dbfp_value to_value(const at::Tensor& t) {
  dbfp_value v{};
  v.tag = t.defined() ? DBFP_TENSOR : DBFP_NONE;
  v.u.tensor = t.handle();
  return v;
}
inline dbfp_value to_value(bool b) {
  dbfp_value v{};
  v.tag = DBFP_BOOL;
  v.u.i = b ? 1 : 0;
  return v;
}
inline dbfp_value to_value(int64_t i) {
  dbfp_value v{};
  v.tag = DBFP_INT;
  v.u.i = i;
  return v;
}
inline dbfp_value to_value(int i) { return to_value(static_cast<int64_t>(i)); }
inline dbfp_value to_value(double d) {
  dbfp_value v{};
  v.tag = DBFP_DOUBLE;
  v.u.d = d;
  return v;
}
inline dbfp_value to_value(const c10::Scalar& s) {
  dbfp_value v{};
  if (s.isFloatingPoint()) {
    v.tag = DBFP_DOUBLE;
    v.u.d = s.raw_double();
  } else {
    v.tag = s.isBoolean() ? DBFP_BOOL : DBFP_INT;
    v.u.i = s.raw_int();
  }
  return v;
}
inline dbfp_value to_value(c10::IntArrayRef list) {
  dbfp_value v{};
  v.tag = DBFP_INT_LIST;
  v.u.list.data = list.data();
  v.u.list.size = static_cast<int64_t>(list.size());
  return v;
}
// An at::Tensor is exactly one dbfp_tensor, so a TensorList is a dbfp_tensor array.
static_assert(sizeof(at::Tensor) == sizeof(dbfp_tensor), "at::Tensor must be one handle");
inline dbfp_value to_value(at::TensorList list) {
  dbfp_value v{};
  v.tag = DBFP_TENSOR_LIST;
  v.u.list.data = list.data();
  v.u.list.size = static_cast<int64_t>(list.size());
  return v;
}
inline dbfp_value to_value(c10::ScalarType t) {
  dbfp_value v{};
  v.tag = DBFP_SCALAR_TYPE;
  v.u.i = static_cast<int64_t>(t);
  return v;
}
inline dbfp_value to_value(c10::Device d) {
  dbfp_value v{};
  v.tag = DBFP_DEVICE;
  v.u.i = static_cast<int64_t>(d.type());
  v.aux = d.index();
  return v;
}
inline dbfp_value to_value(c10::Layout l) {
  dbfp_value v{};
  v.tag = DBFP_LAYOUT;
  v.u.i = static_cast<int64_t>(l);
  return v;
}
inline dbfp_value to_value(c10::MemoryFormat m) {
  dbfp_value v{};
  v.tag = DBFP_MEMORY_FORMAT;
  v.u.i = static_cast<int64_t>(m);
  return v;
}
inline dbfp_value to_value(std::string_view s) {
  dbfp_value v{};
  v.tag = DBFP_STRING;
  v.u.list.data = s.data();
  v.u.list.size = static_cast<int64_t>(s.size());
  return v;
}
#define DBFP_OPTIONAL_VALUE(T) \
  inline dbfp_value to_value(const std::optional<T>& x) { return x.has_value() ? to_value(*x) : value_none(); }
DBFP_OPTIONAL_VALUE(at::Tensor)
DBFP_OPTIONAL_VALUE(c10::Scalar)
DBFP_OPTIONAL_VALUE(c10::ScalarType)
DBFP_OPTIONAL_VALUE(c10::Device)
DBFP_OPTIONAL_VALUE(c10::Layout)
DBFP_OPTIONAL_VALUE(c10::MemoryFormat)
DBFP_OPTIONAL_VALUE(bool)
DBFP_OPTIONAL_VALUE(int64_t)
DBFP_OPTIONAL_VALUE(double)
#undef DBFP_OPTIONAL_VALUE

// Owned outputs of call_op; whatever is not taken is freed.
struct Outputs {
  dbfp_value values[4]{};
  int32_t count = 0;
  ~Outputs() {
    for (int32_t i = 0; i < count; ++i) api().free_value(&values[i]);
  }
  at::Tensor take_tensor(int32_t i) {
    if (i >= count) throw ::c10::Error("dbfp: operator returned fewer values than expected");
    if (values[i].tag == DBFP_NONE) return at::Tensor();
    if (values[i].tag != DBFP_TENSOR) throw ::c10::Error("dbfp: operator did not return a tensor");
    at::Tensor t = at::Tensor::adopt(values[i].u.tensor);
    values[i].tag = DBFP_NONE;
    return t;
  }
  std::vector<at::Tensor> take_tensor_list(int32_t i) {
    if (i >= count || values[i].tag != DBFP_TENSOR_LIST) throw ::c10::Error("dbfp: operator did not return a tensor list");
    std::vector<at::Tensor> out;
    auto* items = static_cast<dbfp_tensor*>(const_cast<void*>(values[i].u.list.data));
    for (int64_t k = 0; k < values[i].u.list.size; ++k) {
      out.push_back(at::Tensor::adopt(items[k]));
      items[k] = nullptr;
    }
    return out;
  }
  c10::Scalar take_scalar(int32_t i) {
    if (i >= count) throw ::c10::Error("dbfp: operator returned fewer values than expected");
    const dbfp_value& v = values[i];
    if (v.tag == DBFP_DOUBLE) return c10::Scalar(v.u.d);
    if (v.tag == DBFP_BOOL) return c10::Scalar(v.u.i != 0);
    if (v.tag == DBFP_INT) return c10::Scalar(v.u.i);
    throw ::c10::Error("dbfp: operator did not return a number");
  }
};

template <class R>
struct OpResult;
template <>
struct OpResult<void> {
  static void take(Outputs&) {}
};
template <>
struct OpResult<at::Tensor> {
  static at::Tensor take(Outputs& o) { return o.take_tensor(0); }
};
template <>
struct OpResult<std::tuple<at::Tensor, at::Tensor>> {
  static std::tuple<at::Tensor, at::Tensor> take(Outputs& o) { return {o.take_tensor(0), o.take_tensor(1)}; }
};
template <>
struct OpResult<std::tuple<at::Tensor, at::Tensor, at::Tensor>> {
  static std::tuple<at::Tensor, at::Tensor, at::Tensor> take(Outputs& o) {
    return {o.take_tensor(0), o.take_tensor(1), o.take_tensor(2)};
  }
};
template <>
struct OpResult<std::vector<at::Tensor>> {
  static std::vector<at::Tensor> take(Outputs& o) { return o.take_tensor_list(0); }
};
template <>
struct OpResult<c10::Scalar> {
  static c10::Scalar take(Outputs& o) { return o.take_scalar(0); }
};
template <>
struct OpResult<bool> {
  static bool take(Outputs& o) { return o.take_scalar(0).toBool(); }
};

template <class R>
R call_values(dbfp_op op, std::initializer_list<dbfp_value> args) {
  Outputs outputs;
  check_status(api().call_op(op, args.begin(), static_cast<int32_t>(args.size()), outputs.values, 4, &outputs.count));
  return OpResult<R>::take(outputs);
}
template <class R, class... A>
inline R call(dbfp_op op, const A&... args) {
  return call_values<R>(op, {to_value(args)...});
}

// The four optional factory arguments of a TensorOptions (dtype, layout, device, pin_memory).
#define DBFP_OPTIONS(o) (o).dtype_opt(), (o).layout_opt(), (o).device_opt(), (o).pinned_memory_opt()

inline at::Tensor apply_requires_grad(at::Tensor t, const at::TensorOptions& o) {
  if (o.requires_grad()) call<at::Tensor>(DBFP_OP("aten::requires_grad_", ""), t, true);
  return t;
}
inline std::optional<c10::MemoryFormat> merged_format(const at::TensorOptions& o, std::optional<c10::MemoryFormat> f) {
  if (f.has_value() && o.has_memory_format())
    throw ::c10::Error("Cannot set memory_format both in TensorOptions and explicit argument; please delete the redundant setter.");
  return f.has_value() ? f : o.memory_format_opt();
}

}  // namespace dbfp

namespace at {

// --- factories
inline Tensor empty(IntArrayRef size, TensorOptions o = {}, std::optional<MemoryFormat> f = std::nullopt) {
  return dbfp::apply_requires_grad(
      dbfp::call<Tensor>(DBFP_OP("aten::empty", "memory_format"), size, DBFP_OPTIONS(o), dbfp::merged_format(o, f)), o);
}
inline Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::empty_strided", ""), size, stride, DBFP_OPTIONS(o)), o);
}
inline Tensor zeros(IntArrayRef size, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::zeros", ""), size, DBFP_OPTIONS(o)), o);
}
inline Tensor ones(IntArrayRef size, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::ones", ""), size, DBFP_OPTIONS(o)), o);
}
inline Tensor full(IntArrayRef size, const Scalar& value, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::full", ""), size, value, DBFP_OPTIONS(o)), o);
}
inline Tensor rand(IntArrayRef size, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::rand", ""), size, DBFP_OPTIONS(o)), o);
}
inline Tensor randn(IntArrayRef size, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::randn", ""), size, DBFP_OPTIONS(o)), o);
}
inline Tensor arange(const Scalar& end, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::arange", ""), end, DBFP_OPTIONS(o)), o);
}
inline Tensor arange(const Scalar& start, const Scalar& end, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(dbfp::call<Tensor>(DBFP_OP("aten::arange", "start"), start, end, DBFP_OPTIONS(o)), o);
}
inline Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions o = {}) {
  return dbfp::apply_requires_grad(
      dbfp::call<Tensor>(DBFP_OP("aten::arange", "start_step"), start, end, step, DBFP_OPTIONS(o)), o);
}
#define DBFP_LIKE(fn, op)                                                                                  \
  inline Tensor fn(const Tensor& self, TensorOptions o = {}, std::optional<MemoryFormat> f = std::nullopt) { \
    return dbfp::apply_requires_grad(                                                                       \
        dbfp::call<Tensor>(DBFP_OP(op, ""), self, DBFP_OPTIONS(o), dbfp::merged_format(o, f)), o);          \
  }
DBFP_LIKE(empty_like, "aten::empty_like")
DBFP_LIKE(zeros_like, "aten::zeros_like")
DBFP_LIKE(ones_like, "aten::ones_like")
DBFP_LIKE(rand_like, "aten::rand_like")
DBFP_LIKE(randn_like, "aten::randn_like")
#undef DBFP_LIKE
inline Tensor full_like(const Tensor& self, const Scalar& value, TensorOptions o = {},
                        std::optional<MemoryFormat> f = std::nullopt) {
  return dbfp::apply_requires_grad(
      dbfp::call<Tensor>(DBFP_OP("aten::full_like", ""), self, value, DBFP_OPTIONS(o), dbfp::merged_format(o, f)), o);
}

// --- free functions that mirror methods
#define DBFP_UNARY(fn, op)                                                                     \
  inline Tensor fn(const Tensor& self) { return dbfp::call<Tensor>(DBFP_OP(op, ""), self); } \
  inline Tensor Tensor::fn() const { return dbfp::call<Tensor>(DBFP_OP(op, ""), *this); }
DBFP_UNARY(neg, "aten::neg")
DBFP_UNARY(abs, "aten::abs")
DBFP_UNARY(exp, "aten::exp")
DBFP_UNARY(log, "aten::log")
DBFP_UNARY(sqrt, "aten::sqrt")
DBFP_UNARY(rsqrt, "aten::rsqrt")
DBFP_UNARY(relu, "aten::relu")
DBFP_UNARY(sigmoid, "aten::sigmoid")
DBFP_UNARY(tanh, "aten::tanh")
DBFP_UNARY(sin, "aten::sin")
DBFP_UNARY(cos, "aten::cos")
DBFP_UNARY(reciprocal, "aten::reciprocal")
DBFP_UNARY(square, "aten::square")
DBFP_UNARY(t, "aten::t")
DBFP_UNARY(detach, "aten::detach")
DBFP_UNARY(all, "aten::all")
DBFP_UNARY(any, "aten::any")
#undef DBFP_UNARY
inline Tensor& Tensor::relu_() {
  dbfp::call<Tensor>(DBFP_OP("aten::relu_", ""), *this);
  return *this;
}
inline Tensor relu_(Tensor& self) { return self.relu_(); }
inline Tensor gelu(const Tensor& self, std::string_view approximate = "none") {
  return dbfp::call<Tensor>(DBFP_OP("aten::gelu", ""), self, approximate);
}
inline Tensor silu(const Tensor& self) { return dbfp::call<Tensor>(DBFP_OP("aten::silu", ""), self); }
inline Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20) {
  return dbfp::call<Tensor>(DBFP_OP("aten::softplus", ""), self, beta, threshold);
}
inline Tensor leaky_relu(const Tensor& self, const Scalar& slope = 0.01) {
  return dbfp::call<Tensor>(DBFP_OP("aten::leaky_relu", ""), self, slope);
}
inline Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1) {
  return dbfp::call<Tensor>(DBFP_OP("aten::hardtanh", ""), self, min_val, max_val);
}

// --- shape and copies
inline Tensor Tensor::contiguous(MemoryFormat f) const {
  if (is_contiguous(f)) return *this;
  return dbfp::call<Tensor>(DBFP_OP("aten::contiguous", ""), *this, f);
}
inline Tensor Tensor::clone(std::optional<MemoryFormat> f) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::clone", ""), *this, f);
}
inline Tensor clone(const Tensor& self, std::optional<MemoryFormat> f = std::nullopt) { return self.clone(f); }
inline Tensor Tensor::view(IntArrayRef size) const { return dbfp::call<Tensor>(DBFP_OP("aten::view", ""), *this, size); }
inline Tensor Tensor::view(ScalarType dtype) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::view", "dtype"), *this, dtype);
}
inline Tensor Tensor::reshape(IntArrayRef shape) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::reshape", ""), *this, shape);
}
inline Tensor reshape(const Tensor& self, IntArrayRef shape) { return self.reshape(shape); }
inline Tensor Tensor::flatten(int64_t start, int64_t end) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::flatten", "using_ints"), *this, start, end);
}
inline Tensor flatten(const Tensor& self, int64_t start = 0, int64_t end = -1) { return self.flatten(start, end); }
inline Tensor Tensor::unsqueeze(int64_t d) const { return dbfp::call<Tensor>(DBFP_OP("aten::unsqueeze", ""), *this, d); }
inline Tensor unsqueeze(const Tensor& self, int64_t d) { return self.unsqueeze(d); }
inline Tensor Tensor::squeeze() const { return dbfp::call<Tensor>(DBFP_OP("aten::squeeze", ""), *this); }
inline Tensor Tensor::squeeze(int64_t d) const { return dbfp::call<Tensor>(DBFP_OP("aten::squeeze", "dim"), *this, d); }
inline Tensor squeeze(const Tensor& self) { return self.squeeze(); }
inline Tensor squeeze(const Tensor& self, int64_t d) { return self.squeeze(d); }
inline Tensor Tensor::transpose(int64_t a, int64_t b) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::transpose", "int"), *this, a, b);
}
inline Tensor transpose(const Tensor& self, int64_t a, int64_t b) { return self.transpose(a, b); }
inline Tensor Tensor::permute(IntArrayRef dims) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::permute", ""), *this, dims);
}
inline Tensor permute(const Tensor& self, IntArrayRef dims) { return self.permute(dims); }
inline Tensor Tensor::expand(IntArrayRef size, bool implicit) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::expand", ""), *this, size, implicit);
}
inline Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.sizes()); }
inline Tensor Tensor::repeat(IntArrayRef repeats) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::repeat", ""), *this, repeats);
}
inline Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::narrow", ""), *this, d, start, length);
}
inline Tensor narrow(const Tensor& self, int64_t d, int64_t start, int64_t length) { return self.narrow(d, start, length); }
inline Tensor Tensor::select(int64_t d, int64_t index) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::select", "int"), *this, d, index);
}
inline Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::slice", "Tensor"), *this, d, start, end, step);
}
inline Tensor Tensor::index_select(int64_t d, const Tensor& index) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::index_select", ""), *this, d, index);
}
inline Tensor index_select(const Tensor& self, int64_t d, const Tensor& index) { return self.index_select(d, index); }
inline Tensor Tensor::to(ScalarType dtype, bool non_blocking, bool copy, std::optional<MemoryFormat> f) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::to", "dtype"), *this, dtype, non_blocking, copy, f);
}
inline Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy, std::optional<MemoryFormat> f) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::to", "device"), *this, device, dtype, non_blocking, copy, f);
}
inline Tensor Tensor::to(TensorOptions o, bool non_blocking, bool copy, std::optional<MemoryFormat> f) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::to", "dtype_layout"), *this, DBFP_OPTIONS(o), non_blocking, copy,
                            dbfp::merged_format(o, f));
}
inline Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy, std::optional<MemoryFormat> f) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::to", "other"), *this, other, non_blocking, copy, f);
}
inline Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  dbfp::call<Tensor>(DBFP_OP("aten::copy_", ""), *this, src, non_blocking);
  return *this;
}
inline const Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const {
  dbfp::call<Tensor>(DBFP_OP("aten::copy_", ""), *this, src, non_blocking);
  return *this;
}
inline Tensor& Tensor::fill_(const Scalar& value) {
  dbfp::call<Tensor>(DBFP_OP("aten::fill_", "Scalar"), *this, value);
  return *this;
}
inline const Tensor& Tensor::fill_(const Scalar& value) const {
  dbfp::call<Tensor>(DBFP_OP("aten::fill_", "Scalar"), *this, value);
  return *this;
}
inline Tensor& Tensor::zero_() {
  dbfp::call<Tensor>(DBFP_OP("aten::zero_", ""), *this);
  return *this;
}
inline const Tensor& Tensor::zero_() const {
  dbfp::call<Tensor>(DBFP_OP("aten::zero_", ""), *this);
  return *this;
}
inline Tensor& Tensor::resize_(IntArrayRef size) {
  dbfp::call<Tensor>(DBFP_OP("aten::resize_", ""), *this, size);
  return *this;
}
inline Scalar Tensor::item() const { return dbfp::call<Scalar>(DBFP_OP("aten::item", ""), *this); }
inline Tensor cat(TensorList tensors, int64_t d = 0) { return dbfp::call<Tensor>(DBFP_OP("aten::cat", ""), tensors, d); }
inline Tensor stack(TensorList tensors, int64_t d = 0) { return dbfp::call<Tensor>(DBFP_OP("aten::stack", ""), tensors, d); }
inline std::vector<Tensor> Tensor::split(int64_t size, int64_t d) const {
  return dbfp::call<std::vector<Tensor>>(DBFP_OP("aten::split", "Tensor"), *this, size, d);
}
inline std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const {
  return dbfp::call<std::vector<Tensor>>(DBFP_OP("aten::chunk", ""), *this, chunks, d);
}
inline std::vector<Tensor> Tensor::unbind(int64_t d) const {
  return dbfp::call<std::vector<Tensor>>(DBFP_OP("aten::unbind", "int"), *this, d);
}

// --- arithmetic
inline Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::add", "Tensor"), *this, o, alpha);
}
inline Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::add", "Scalar"), *this, o, alpha);
}
inline Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::sub", "Tensor"), *this, o, alpha);
}
inline Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::sub", "Scalar"), *this, o, alpha);
}
inline Tensor Tensor::mul(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::mul", "Tensor"), *this, o); }
inline Tensor Tensor::mul(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::mul", "Scalar"), *this, o); }
inline Tensor Tensor::div(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::div", "Tensor"), *this, o); }
inline Tensor Tensor::div(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::div", "Scalar"), *this, o); }
inline Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  dbfp::call<Tensor>(DBFP_OP("aten::add_", "Tensor"), *this, o, alpha);
  return *this;
}
inline Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  dbfp::call<Tensor>(DBFP_OP("aten::add_", "Scalar"), *this, o, alpha);
  return *this;
}
inline Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  dbfp::call<Tensor>(DBFP_OP("aten::sub_", "Tensor"), *this, o, alpha);
  return *this;
}
inline Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) {
  dbfp::call<Tensor>(DBFP_OP("aten::sub_", "Scalar"), *this, o, alpha);
  return *this;
}
inline Tensor& Tensor::mul_(const Tensor& o) {
  dbfp::call<Tensor>(DBFP_OP("aten::mul_", "Tensor"), *this, o);
  return *this;
}
inline Tensor& Tensor::mul_(const Scalar& o) {
  dbfp::call<Tensor>(DBFP_OP("aten::mul_", "Scalar"), *this, o);
  return *this;
}
inline Tensor& Tensor::div_(const Tensor& o) {
  dbfp::call<Tensor>(DBFP_OP("aten::div_", "Tensor"), *this, o);
  return *this;
}
inline Tensor& Tensor::div_(const Scalar& o) {
  dbfp::call<Tensor>(DBFP_OP("aten::div_", "Scalar"), *this, o);
  return *this;
}
inline Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return a.add(b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return b.add(a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return a.sub(b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) {
  return dbfp::call<Tensor>(DBFP_OP("aten::rsub", "Scalar"), b, a, Scalar(1));
}
inline Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return a.mul(b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return b.mul(a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return a.div(b); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return b.reciprocal().mul(a); }
inline Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) { return a.add(b, alpha); }
inline Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1) { return a.add(b, alpha); }
inline Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1) { return a.sub(b, alpha); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return a.mul(b); }
inline Tensor mul(const Tensor& a, const Scalar& b) { return a.mul(b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return a.div(b); }
inline Tensor div(const Tensor& a, const Scalar& b) { return a.div(b); }
inline Tensor Tensor::pow(const Scalar& e) const { return dbfp::call<Tensor>(DBFP_OP("aten::pow", "Tensor_Scalar"), *this, e); }
inline Tensor Tensor::pow(const Tensor& e) const { return dbfp::call<Tensor>(DBFP_OP("aten::pow", "Tensor_Tensor"), *this, e); }
inline Tensor pow(const Tensor& a, const Scalar& e) { return a.pow(e); }
inline Tensor pow(const Tensor& a, const Tensor& e) { return a.pow(e); }
inline Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::clamp", ""), *this, lo, hi);
}
inline Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  dbfp::call<Tensor>(DBFP_OP("aten::clamp_", ""), *this, lo, hi);
  return *this;
}
inline Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt) {
  return a.clamp(lo, hi);
}
inline Tensor Tensor::clamp_min(const Scalar& lo) const { return dbfp::call<Tensor>(DBFP_OP("aten::clamp_min", ""), *this, lo); }
inline Tensor Tensor::clamp_max(const Scalar& hi) const { return dbfp::call<Tensor>(DBFP_OP("aten::clamp_max", ""), *this, hi); }
inline Tensor clamp_min(const Tensor& a, const Scalar& lo) { return a.clamp_min(lo); }
inline Tensor clamp_max(const Tensor& a, const Scalar& hi) { return a.clamp_max(hi); }
inline Tensor Tensor::maximum(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::maximum", ""), *this, o); }
inline Tensor Tensor::minimum(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::minimum", ""), *this, o); }
inline Tensor maximum(const Tensor& a, const Tensor& b) { return a.maximum(b); }
inline Tensor minimum(const Tensor& a, const Tensor& b) { return a.minimum(b); }
inline Tensor Tensor::matmul(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::matmul", ""), *this, o); }
inline Tensor Tensor::mm(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::mm", ""), *this, o); }
inline Tensor Tensor::bmm(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::bmm", ""), *this, o); }
inline Tensor matmul(const Tensor& a, const Tensor& b) { return a.matmul(b); }
inline Tensor mm(const Tensor& a, const Tensor& b) { return a.mm(b); }
inline Tensor bmm(const Tensor& a, const Tensor& b) { return a.bmm(b); }
inline Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1) {
  return dbfp::call<Tensor>(DBFP_OP("aten::addmm", ""), self, m1, m2, beta, alpha);
}
inline Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt) {
  return dbfp::call<Tensor>(DBFP_OP("aten::linear", ""), input, weight, bias);
}
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                     IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1) {
  return dbfp::call<Tensor>(DBFP_OP("aten::conv2d", ""), input, weight, bias, stride, padding, dilation, groups);
}
inline Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                     IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1) {
  return dbfp::call<Tensor>(DBFP_OP("aten::conv1d", ""), input, weight, bias, stride, padding, dilation, groups);
}
inline Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                     IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1) {
  return dbfp::call<Tensor>(DBFP_OP("aten::conv3d", ""), input, weight, bias, stride, padding, dilation, groups);
}

// --- reductions
inline Tensor Tensor::sum(std::optional<ScalarType> dtype) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::sum", ""), *this, dtype);
}
inline Tensor Tensor::sum(IntArrayRef d, bool keepdim, std::optional<ScalarType> dtype) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::sum", "dim_IntList"), *this, d, keepdim, dtype);
}
inline Tensor sum(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt) { return a.sum(dtype); }
inline Tensor sum(const Tensor& a, IntArrayRef d, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return a.sum(d, keepdim, dtype);
}
inline Tensor Tensor::mean(std::optional<ScalarType> dtype) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::mean", ""), *this, dtype);
}
inline Tensor Tensor::mean(IntArrayRef d, bool keepdim, std::optional<ScalarType> dtype) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::mean", "dim"), *this, d, keepdim, dtype);
}
inline Tensor mean(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt) { return a.mean(dtype); }
inline Tensor mean(const Tensor& a, IntArrayRef d, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return a.mean(d, keepdim, dtype);
}
inline Tensor Tensor::max() const { return dbfp::call<Tensor>(DBFP_OP("aten::max", ""), *this); }
inline std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool keepdim) const {
  return dbfp::call<std::tuple<Tensor, Tensor>>(DBFP_OP("aten::max", "dim"), *this, d, keepdim);
}
inline Tensor Tensor::min() const { return dbfp::call<Tensor>(DBFP_OP("aten::min", ""), *this); }
inline std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool keepdim) const {
  return dbfp::call<std::tuple<Tensor, Tensor>>(DBFP_OP("aten::min", "dim"), *this, d, keepdim);
}
inline Tensor max(const Tensor& a) { return a.max(); }
inline std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t d, bool keepdim = false) { return a.max(d, keepdim); }
inline Tensor max(const Tensor& a, const Tensor& b) { return dbfp::call<Tensor>(DBFP_OP("aten::max", "other"), a, b); }
inline Tensor min(const Tensor& a) { return a.min(); }
inline std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t d, bool keepdim = false) { return a.min(d, keepdim); }
inline Tensor min(const Tensor& a, const Tensor& b) { return dbfp::call<Tensor>(DBFP_OP("aten::min", "other"), a, b); }
inline Tensor Tensor::amax(IntArrayRef d, bool keepdim) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::amax", ""), *this, d, keepdim);
}
inline Tensor Tensor::amin(IntArrayRef d, bool keepdim) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::amin", ""), *this, d, keepdim);
}
inline Tensor Tensor::argmax(std::optional<int64_t> d, bool keepdim) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::argmax", ""), *this, d, keepdim);
}
inline Tensor Tensor::argmin(std::optional<int64_t> d, bool keepdim) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::argmin", ""), *this, d, keepdim);
}
inline Tensor Tensor::softmax(int64_t d, std::optional<ScalarType> dtype) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::softmax", "int"), *this, d, dtype);
}
inline Tensor Tensor::log_softmax(int64_t d, std::optional<ScalarType> dtype) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::log_softmax", "int"), *this, d, dtype);
}
inline Tensor softmax(const Tensor& a, int64_t d, std::optional<ScalarType> dtype = std::nullopt) { return a.softmax(d, dtype); }
inline Tensor log_softmax(const Tensor& a, int64_t d, std::optional<ScalarType> dtype = std::nullopt) {
  return a.log_softmax(d, dtype);
}
inline Tensor Tensor::norm(const Scalar& p) const { return dbfp::call<Tensor>(DBFP_OP("aten::norm", "Scalar"), *this, p); }
inline Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return dbfp::call<Tensor>(DBFP_OP("aten::masked_fill", "Scalar"), *this, mask, value);
}
inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return dbfp::call<Tensor>(DBFP_OP("aten::where", "self"), cond, a, b);
}
inline Tensor Tensor::eq(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::eq", "Scalar"), *this, o); }
inline Tensor Tensor::eq(const Tensor& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::eq", "Tensor"), *this, o); }
inline Tensor Tensor::ne(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::ne", "Scalar"), *this, o); }
inline Tensor Tensor::gt(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::gt", "Scalar"), *this, o); }
inline Tensor Tensor::lt(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::lt", "Scalar"), *this, o); }
inline Tensor Tensor::ge(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::ge", "Scalar"), *this, o); }
inline Tensor Tensor::le(const Scalar& o) const { return dbfp::call<Tensor>(DBFP_OP("aten::le", "Scalar"), *this, o); }
inline bool Tensor::equal(const Tensor& o) const { return dbfp::call<bool>(DBFP_OP("aten::equal", ""), *this, o); }
inline bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return dbfp::call<bool>(DBFP_OP("aten::allclose", ""), *this, o, rtol, atol, equal_nan);
}
inline bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) {
  return a.allclose(b, rtol, atol, equal_nan);
}

inline std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  if (!t.defined()) return out << "[ Tensor (undefined) ]";
  return out << "[ Tensor " << t.scalar_type() << " " << t.sizes() << " on " << t.device() << " ]";
}

}  // namespace at
