// torch::tensor for the fast path's shim (torch/types.h: torch::tensor over
// torch::detail::TensorDataContainer): a value, a (nested) braced list of values, or an ArrayRef /
// std::vector of one of torch's scalar types, made into a tensor by the ATen calls torch makes, so
// with torch's dtypes: integers give kLong and float or double the default dtype unless the
// options name one; a list is filled on the CPU element by element and then moved to the options'
// device. Complex values are not taken (a candidate using them falls back).
#pragma once

namespace torch::detail {

enum class TensorDataContainerType { Scalar, InitList, Tensor };

inline c10::ScalarType compute_desired_dtype(c10::ScalarType scalar_type) {
  if (scalar_type == at::kInt || scalar_type == at::kLong) return at::kLong;
  if (scalar_type == at::kFloat || scalar_type == at::kDouble)
    return static_cast<c10::ScalarType>(dbfp::api().default_dtype());
  return scalar_type;
}

struct TensorDataContainer;
inline std::ostream& operator<<(std::ostream& stream, const TensorDataContainer& container);

// The sizes as c10's stream operator for std::vector prints them (into TORCH_CHECK messages).
inline std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::ostringstream out;
  for (std::size_t i = 0; i < sizes.size() && i < 100; ++i) out << (i ? " " : "") << sizes[i];
  if (sizes.size() > 100) out << " ...";
  return out.str();
}

// A value as torch streams it (c10's Half and BFloat16 print as float).
template <class T>
void print_value(std::ostream& out, const T& value) {
  if constexpr (std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>)
    out << static_cast<float>(value);
  else
    out << value;
}

// Calls f with a value of the C++ type of `type` (one of those the container takes).
template <class F>
void with_cpp_type(c10::ScalarType type, F&& f) {
  switch (type) {
    case c10::ScalarType::Byte: return f(uint8_t());
    case c10::ScalarType::Char: return f(int8_t());
    case c10::ScalarType::Short: return f(int16_t());
    case c10::ScalarType::Int: return f(int());
    case c10::ScalarType::Long: return f(int64_t());
    case c10::ScalarType::Float: return f(float());
    case c10::ScalarType::Double: return f(double());
    case c10::ScalarType::Bool: return f(bool());
    case c10::ScalarType::Half: return f(c10::Half());
    case c10::ScalarType::BFloat16: return f(c10::BFloat16());
    default: throw ::c10::Error(::c10::str("torch::tensor: unsupported scalar type ", type));
  }
}

struct TensorDataContainer {
  // {}: an empty list of the default dtype.
  TensorDataContainer()
      : sizes_({0}),
        scalar_type_(static_cast<c10::ScalarType>(dbfp::api().default_dtype())),
        type_(TensorDataContainerType::InitList) {}
#define DBFP_TENSOR_DATA(T, S)                                                                  \
  TensorDataContainer(T value) : scalar_type_(at::k##S), type_(TensorDataContainerType::Scalar), \
                                 scalar_(value) {}                                               \
  TensorDataContainer(at::ArrayRef<T> values)                                                   \
      : sizes_({static_cast<int64_t>(values.size())}),                                          \
        scalar_type_(at::k##S),                                                                 \
        type_(TensorDataContainerType::Tensor),                                                 \
        tensor_(cpu_tensor(values.data(), values.size(), at::k##S, sizeof(T))) {}
  DBFP_TENSOR_DATA(uint8_t, Byte)
  DBFP_TENSOR_DATA(int8_t, Char)
  DBFP_TENSOR_DATA(int16_t, Short)
  DBFP_TENSOR_DATA(int, Int)
  DBFP_TENSOR_DATA(int64_t, Long)
  DBFP_TENSOR_DATA(float, Float)
  DBFP_TENSOR_DATA(double, Double)
  DBFP_TENSOR_DATA(bool, Bool)
  DBFP_TENSOR_DATA(c10::Half, Half)
  DBFP_TENSOR_DATA(c10::BFloat16, BFloat16)
#undef DBFP_TENSOR_DATA
  // std::vector<bool> is not taken, as in torch (it has no ArrayRef).
#define DBFP_TENSOR_VECTOR(T) \
  TensorDataContainer(const std::vector<T>& values) : TensorDataContainer(at::ArrayRef<T>(values)) {}
  DBFP_TENSOR_VECTOR(uint8_t)
  DBFP_TENSOR_VECTOR(int8_t)
  DBFP_TENSOR_VECTOR(int16_t)
  DBFP_TENSOR_VECTOR(int)
  DBFP_TENSOR_VECTOR(int64_t)
  DBFP_TENSOR_VECTOR(float)
  DBFP_TENSOR_VECTOR(double)
  DBFP_TENSOR_VECTOR(c10::Half)
  DBFP_TENSOR_VECTOR(c10::BFloat16)
#undef DBFP_TENSOR_VECTOR
  TensorDataContainer(std::initializer_list<TensorDataContainer> init_list)
      : scalar_type_(init_list.begin()->scalar_type()), type_(TensorDataContainerType::InitList), init_list_(init_list) {
    const TensorDataContainer& first_elem = *(init_list.begin());
    for (const auto& elem : init_list) {
      TORCH_CHECK(elem.sizes() == first_elem.sizes(), "Expected all sub-lists to have sizes: ",
                  sizes_text(first_elem.sizes()), " (e.g. ", first_elem, "), ", "but got sub-list ", elem,
                  " with sizes: ", sizes_text(elem.sizes()));
      TORCH_CHECK(elem.scalar_type() == first_elem.scalar_type(),
                  "Expected all elements of the tensor to have the same scalar type: ", first_elem.scalar_type(),
                  ", but got element of scalar type: ", elem.scalar_type());
    }
    sizes_.reserve(first_elem.sizes().size() + 1);
    sizes_.push_back(static_cast<int64_t>(init_list.size()));
    sizes_.insert(sizes_.end(), first_elem.sizes().begin(), first_elem.sizes().end());
  }

  bool is_scalar() const { return type_ == TensorDataContainerType::Scalar; }
  bool is_init_list() const { return type_ == TensorDataContainerType::InitList; }
  bool is_tensor() const { return type_ == TensorDataContainerType::Tensor; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const c10::ScalarType& scalar_type() const { return scalar_type_; }

  at::Tensor convert_to_tensor(at::TensorOptions options) const {
    if (!options.has_dtype()) options = options.dtype(compute_desired_dtype(scalar_type_));
    if (is_scalar()) return dbfp::call<at::Tensor>(DBFP_OP("aten::scalar_tensor", ""), scalar_, DBFP_OPTIONS(options));
    if (is_init_list()) {
      // Filled on the CPU, then moved (one copy to a GPU rather than one launch per element).
      at::Tensor tensor = at::empty(sizes_, options.device(at::kCPU));
      fill_tensor(tensor);
      return tensor.to(at::TensorOptions(options.device()));
    }
    at::Tensor output = tensor_.to(options);
    TORCH_CHECK(!tensor_.is_complex() || output.is_complex(),
                "can not do torch::tensor(complex, dtype=non-complex) because complex can not be casted to real "
                "number without loss of information");
    return output;
  }

  void pretty_print_recursive(std::ostream& stream) const {
    if (is_scalar()) {
      with_cpp_type(scalar_type_, [&](auto v) { print_value(stream, scalar_.to<decltype(v)>()); });
    } else if (is_init_list()) {
      stream << '{';
      for (const TensorDataContainer* it = init_list_.begin(); it != init_list_.end(); it++) {
        stream << *it;
        if (std::next(it) != init_list_.end()) stream << ", ";
      }
      stream << '}';
    } else {
      stream << '{';
      for (int64_t i = 0; i < tensor_.sizes()[0]; ++i) {
        with_cpp_type(scalar_type_, [&](auto v) { print_value(stream, tensor_[i].item<decltype(v)>()); });
        if (i != tensor_.sizes()[0] - 1) stream << ", ";
      }
      stream << '}';
    }
  }

 private:
  // at::tensor(values, dtype(S).device(kCPU)): the values copied into a new CPU tensor.
  static at::Tensor cpu_tensor(const void* data, std::size_t n, c10::ScalarType type, std::size_t element_size) {
    at::Tensor t = at::empty({static_cast<int64_t>(n)}, at::dtype(type).device(at::kCPU));
    if (n) std::memcpy(t.data_ptr(), data, n * element_size);
    return t;
  }
  void fill_tensor(at::Tensor& tensor) const {
    if (is_scalar()) {
      TORCH_INTERNAL_ASSERT(tensor.dim() == 0, "Expected a 0-dim Tensor, but got Tensor with dimensions: ",
                            tensor.dim());
      tensor.fill_(scalar_);
    } else if (is_init_list()) {
      TORCH_INTERNAL_ASSERT(tensor.sizes()[0] == static_cast<int64_t>(init_list_.size()), "Expected a Tensor with size ",
                            init_list_.size(), " in its first dimension, but got Tensor with size ", tensor.sizes()[0],
                            " in its first dimension");
      int64_t index = 0;
      for (const auto& elem : init_list_) {
        at::Tensor slice = tensor[index];
        elem.fill_tensor(slice);
        index++;
      }
    } else {
      TORCH_INTERNAL_ASSERT(false, "TensorDataContainer is already a Tensor type, `fill_tensor` should not be called");
    }
  }

  std::vector<int64_t> sizes_;
  c10::ScalarType scalar_type_;
  TensorDataContainerType type_;
  c10::Scalar scalar_;
  std::initializer_list<TensorDataContainer> init_list_;
  at::Tensor tensor_;
};

inline std::ostream& operator<<(std::ostream& stream, const TensorDataContainer& container) {
  container.pretty_print_recursive(stream);
  return stream;
}

}  // namespace torch::detail

namespace torch {
// requires_grad is applied to the result (make_variable), not passed to the factories.
inline at::Tensor tensor(detail::TensorDataContainer tensor_data_container, const at::TensorOptions& options = {}) {
  at::TensorOptions without_grad = options.requires_grad(std::optional<bool>());
  return dbfp::apply_requires_grad(tensor_data_container.convert_to_tensor(without_grad), options);
}
}  // namespace torch
