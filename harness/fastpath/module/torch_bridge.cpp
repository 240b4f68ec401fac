// The libtorch side of the fast path (torch_bridge.hpp). The only translation unit of dicebench
// that includes torch's headers for the fast path: everything a candidate's glue does with
// tensors comes through the dbfp_api table defined here, onto real ATen and the dispatcher.
#include "harness/fastpath/module/torch_bridge.hpp"
#include "core/base/whole_file.hpp"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/core/DefaultDtype.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/fastpath/shim/dbfp/abi.h"

namespace py = pybind11;

// torch's cuDNN handle (ATen/cudnn/Handle.h, which would need cudnn.h here): cudnnHandle_t is
// `struct cudnnContext*`. Weak, so a torch built without cuDNN still loads this module; the glue
// then gets an error instead of a handle.
struct cudnnContext;
namespace at::native {
__attribute__((weak)) cudnnContext* getCudnnHandle();
}  // namespace at::native

namespace dicebench::fastpath {
namespace {

// The shim's enums are torch's numbers.
static_assert(static_cast<int>(c10::ScalarType::Float) == 6 && static_cast<int>(c10::ScalarType::BFloat16) == 15 &&
              static_cast<int>(c10::ScalarType::UInt64) == 29);
static_assert(static_cast<int>(c10::DeviceType::CUDA) == 1 && static_cast<int>(c10::DeviceType::Meta) == 14);
static_assert(static_cast<int>(c10::MemoryFormat::ChannelsLast) == 2 && static_cast<int>(c10::Layout::Sparse) == 1);

thread_local std::string g_last_error;

int32_t fail(const std::string& message) {
  g_last_error = message;
  return 1;
}

c10::TensorImpl* impl_of(dbfp_tensor t) { return reinterpret_cast<c10::TensorImpl*>(t); }
dbfp_tensor handle_of(c10::TensorImpl* impl) { return reinterpret_cast<dbfp_tensor>(impl); }

// A new reference to the tensor behind a handle.
at::Tensor tensor_of(dbfp_tensor t) {
  return at::Tensor(c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::reclaim_copy(impl_of(t)));
}
// Gives up one reference of `t` as a handle (NULL for an undefined tensor).
dbfp_tensor release_tensor(at::Tensor t) {
  if (!t.defined()) return nullptr;
  return handle_of(t.unsafeReleaseTensorImpl());
}

template <class F>
int32_t guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown C++ exception");
  }
}

// ---------------------------------------------------------------------------------- the table

const char* api_last_error() { return g_last_error.c_str(); }
void api_retain(dbfp_tensor t) {
  if (t) c10::raw::intrusive_ptr::incref(impl_of(t));
}
void api_release(dbfp_tensor t) {
  if (t) c10::raw::intrusive_ptr::decref(impl_of(t));
}
int64_t api_numel(dbfp_tensor t) { return impl_of(t)->numel(); }
int64_t api_dim(dbfp_tensor t) { return impl_of(t)->dim(); }
const int64_t* api_sizes(dbfp_tensor t) { return impl_of(t)->sizes().data(); }
const int64_t* api_strides(dbfp_tensor t) { return impl_of(t)->strides().data(); }
int64_t api_storage_offset(dbfp_tensor t) { return impl_of(t)->storage_offset(); }
int32_t api_scalar_type(dbfp_tensor t) { return static_cast<int32_t>(impl_of(t)->dtype().toScalarType()); }
int32_t api_device_type(dbfp_tensor t) { return static_cast<int32_t>(impl_of(t)->device_type()); }
int32_t api_device_index(dbfp_tensor t) { return impl_of(t)->device().index(); }
int32_t api_layout(dbfp_tensor t) { return static_cast<int32_t>(impl_of(t)->layout()); }
int32_t api_requires_grad(dbfp_tensor t) { return impl_of(t)->requires_grad() ? 1 : 0; }
int64_t api_element_size(dbfp_tensor t) { return static_cast<int64_t>(impl_of(t)->itemsize()); }
int32_t api_is_contiguous(dbfp_tensor t, int32_t format) {
  int32_t result = -1;
  guarded([&] { result = impl_of(t)->is_contiguous(static_cast<c10::MemoryFormat>(format)) ? 1 : 0; });
  return result;
}
int32_t api_data_ptr(dbfp_tensor t, int32_t expected, int32_t want_mutable, void** out) {
  return guarded([&] {
    at::Tensor tensor = tensor_of(t);
    if (expected >= 0) {
      auto wanted = static_cast<c10::ScalarType>(expected);
      TORCH_CHECK(tensor.scalar_type() == wanted, "expected scalar type ", wanted, " but found ", tensor.scalar_type());
    }
    *out = want_mutable ? tensor.mutable_data_ptr() : const_cast<void*>(tensor.const_data_ptr());
  });
}

// Operators, resolved once and kept for the process.
struct OpEntry {
  c10::OperatorHandle handle;
};
std::mutex g_ops_mutex;
std::map<std::string, std::unique_ptr<OpEntry>> g_ops;

dbfp_op api_find_op(const char* name, const char* overload) {
  try {
    std::lock_guard<std::mutex> lock(g_ops_mutex);
    std::string key = std::string(name) + "." + overload;
    auto it = g_ops.find(key);
    if (it != g_ops.end()) return reinterpret_cast<dbfp_op>(it->second.get());
    auto handle = c10::Dispatcher::singleton().findSchema({name, overload});
    if (!handle.has_value()) {
      g_last_error = "no ATen operator " + key;
      return nullptr;
    }
    auto entry = std::make_unique<OpEntry>(OpEntry{*handle});
    dbfp_op op = reinterpret_cast<dbfp_op>(entry.get());
    g_ops.emplace(key, std::move(entry));
    return op;
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return nullptr;
  }
}

c10::IValue to_ivalue(const dbfp_value& v, const c10::TypePtr& type);

c10::IValue list_to_ivalue(const dbfp_value& v, const c10::TypePtr& element) {
  auto kind = element->kind();
  if (kind == c10::TypeKind::IntType || kind == c10::TypeKind::SymIntType) {
    if (v.tag == DBFP_INT || v.tag == DBFP_BOOL) return c10::IValue(c10::List<int64_t>({v.u.i}));
    TORCH_CHECK(v.tag == DBFP_INT_LIST, "expected a list of ints");
    auto* items = static_cast<const int64_t*>(v.u.list.data);
    return c10::IValue(c10::List<int64_t>(std::vector<int64_t>(items, items + v.u.list.size)));
  }
  if (kind == c10::TypeKind::FloatType) {
    c10::List<double> list;
    if (v.tag == DBFP_DOUBLE_LIST) {
      auto* items = static_cast<const double*>(v.u.list.data);
      for (int64_t i = 0; i < v.u.list.size; ++i) list.push_back(items[i]);
    } else if (v.tag == DBFP_INT_LIST) {
      auto* items = static_cast<const int64_t*>(v.u.list.data);
      for (int64_t i = 0; i < v.u.list.size; ++i) list.push_back(static_cast<double>(items[i]));
    } else {
      TORCH_CHECK(false, "expected a list of floats");
    }
    return c10::IValue(list);
  }
  if (kind == c10::TypeKind::BoolType) {
    TORCH_CHECK(v.tag == DBFP_BOOL_LIST, "expected a list of bools");
    c10::List<bool> list;
    auto* items = static_cast<const uint8_t*>(v.u.list.data);
    for (int64_t i = 0; i < v.u.list.size; ++i) list.push_back(items[i] != 0);
    return c10::IValue(list);
  }
  TORCH_CHECK(v.tag == DBFP_TENSOR_LIST, "expected a list of tensors");
  auto* items = static_cast<const dbfp_tensor*>(v.u.list.data);
  if (kind == c10::TypeKind::TensorType) {
    c10::List<at::Tensor> list;
    for (int64_t i = 0; i < v.u.list.size; ++i) list.push_back(items[i] ? tensor_of(items[i]) : at::Tensor());
    return c10::IValue(list);
  }
  if (kind == c10::TypeKind::OptionalType) {
    c10::List<std::optional<at::Tensor>> list;
    for (int64_t i = 0; i < v.u.list.size; ++i)
      list.push_back(items[i] ? std::optional<at::Tensor>(tensor_of(items[i])) : std::nullopt);
    return c10::IValue(list);
  }
  TORCH_CHECK(false, "unsupported list argument type ", element->str());
}

c10::IValue to_ivalue(const dbfp_value& v, const c10::TypePtr& type) {
  if (v.tag == DBFP_NONE) return c10::IValue();
  switch (type->kind()) {
    case c10::TypeKind::OptionalType:
      return to_ivalue(v, type->expectRef<c10::OptionalType>().getElementType());
    case c10::TypeKind::TensorType:
      TORCH_CHECK(v.tag == DBFP_TENSOR, "expected a tensor argument");
      return c10::IValue(tensor_of(v.u.tensor));
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
      TORCH_CHECK(v.tag != DBFP_DOUBLE && v.tag != DBFP_TENSOR, "expected an int argument");
      return c10::IValue(static_cast<int64_t>(v.u.i));
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType:
      return c10::IValue(v.tag == DBFP_DOUBLE ? v.u.d : static_cast<double>(v.u.i));
    case c10::TypeKind::BoolType:
      return c10::IValue(v.tag == DBFP_DOUBLE ? v.u.d != 0 : v.u.i != 0);
    case c10::TypeKind::NumberType:
      if (v.tag == DBFP_DOUBLE) return c10::IValue(v.u.d);
      if (v.tag == DBFP_BOOL) return c10::IValue(v.u.i != 0);
      return c10::IValue(static_cast<int64_t>(v.u.i));
    case c10::TypeKind::DeviceObjType:
      return c10::IValue(c10::Device(static_cast<c10::DeviceType>(v.u.i), static_cast<c10::DeviceIndex>(v.aux)));
    case c10::TypeKind::StringType:
      return c10::IValue(std::string(static_cast<const char*>(v.u.list.data), static_cast<std::size_t>(v.u.list.size)));
    case c10::TypeKind::ListType:
      return list_to_ivalue(v, type->expectRef<c10::ListType>().getElementType());
    default:
      TORCH_CHECK(false, "unsupported operator argument type ", type->str());
  }
}

dbfp_value from_ivalue(c10::IValue value) {
  dbfp_value v{};
  if (value.isNone()) {
    v.tag = DBFP_NONE;
  } else if (value.isTensor()) {
    v.u.tensor = release_tensor(std::move(value).toTensor());
    v.tag = v.u.tensor ? DBFP_TENSOR : DBFP_NONE;
  } else if (value.isBool()) {
    v.tag = DBFP_BOOL;
    v.u.i = value.toBool() ? 1 : 0;
  } else if (value.isInt()) {
    v.tag = DBFP_INT;
    v.u.i = value.toInt();
  } else if (value.isDouble()) {
    v.tag = DBFP_DOUBLE;
    v.u.d = value.toDouble();
  } else if (value.isTensorList()) {
    auto list = value.toTensorVector();
    auto* items = static_cast<dbfp_tensor*>(std::malloc(sizeof(dbfp_tensor) * (list.size() + 1)));
    for (std::size_t i = 0; i < list.size(); ++i) items[i] = release_tensor(list[i]);
    v.tag = DBFP_TENSOR_LIST;
    v.u.list.data = items;
    v.u.list.size = static_cast<int64_t>(list.size());
  } else if (value.isIntList()) {
    auto list = value.toIntVector();
    auto* items = static_cast<int64_t*>(std::malloc(sizeof(int64_t) * (list.size() + 1)));
    std::copy(list.begin(), list.end(), items);
    v.tag = DBFP_INT_LIST;
    v.u.list.data = items;
    v.u.list.size = static_cast<int64_t>(list.size());
  } else {
    TORCH_CHECK(false, "unsupported operator result ", value.tagKind());
  }
  return v;
}

void api_free_value(dbfp_value* v) {
  if (!v) return;
  switch (v->tag) {
    case DBFP_TENSOR:
      api_release(v->u.tensor);
      break;
    case DBFP_TENSOR_LIST: {
      auto* items = static_cast<dbfp_tensor*>(const_cast<void*>(v->u.list.data));
      for (int64_t i = 0; i < v->u.list.size; ++i) api_release(items[i]);
      std::free(items);
      break;
    }
    case DBFP_TUPLE: {
      auto* items = static_cast<dbfp_value*>(const_cast<void*>(v->u.list.data));
      for (int64_t i = 0; i < v->u.list.size; ++i) api_free_value(&items[i]);
      std::free(items);
      break;
    }
    case DBFP_INT_LIST:
    case DBFP_DOUBLE_LIST:
    case DBFP_BOOL_LIST:
      std::free(const_cast<void*>(v->u.list.data));
      break;
    default:
      break;
  }
  v->tag = DBFP_NONE;
}

int32_t api_call_op(dbfp_op op, const dbfp_value* args, int32_t nargs, dbfp_value* outs, int32_t max_outs,
                    int32_t* nouts) {
  *nouts = 0;
  return guarded([&] {
    const c10::OperatorHandle& handle = reinterpret_cast<const OpEntry*>(op)->handle;
    const c10::FunctionSchema& schema = handle.schema();
    const auto& arguments = schema.arguments();
    TORCH_CHECK(static_cast<std::size_t>(nargs) <= arguments.size(), schema.name(), ": too many arguments");
    torch::jit::Stack stack;
    stack.reserve(arguments.size());
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      if (i < static_cast<std::size_t>(nargs)) {
        stack.push_back(to_ivalue(args[i], arguments[i].type()));
      } else {
        TORCH_CHECK(arguments[i].default_value().has_value(), schema.name(), ": missing argument ",
                    arguments[i].name());
        stack.push_back(*arguments[i].default_value());
      }
    }
    handle.callBoxed(stack);
    TORCH_CHECK(static_cast<int32_t>(stack.size()) <= max_outs, schema.name(), ": too many results");
    for (auto& value : stack) outs[(*nouts)++] = from_ivalue(std::move(value));
  });
}

int32_t api_current_stream(int32_t device, void** out) {
  return guarded([&] { *out = at::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream(); });
}
int32_t api_current_device(int32_t* out) {
  return guarded([&] { *out = c10::cuda::current_device(); });
}
int32_t api_set_device(int32_t device) {
  return guarded([&] { c10::cuda::set_device(static_cast<c10::DeviceIndex>(device)); });
}
int32_t api_device_count() { return c10::cuda::device_count(); }
int32_t api_current_blas_handle(void** out) {
  return guarded([&] { *out = at::cuda::getCurrentCUDABlasHandle(); });
}
int32_t api_device_properties(int32_t device, const void** out) {
  return guarded([&] {
    *out = device < 0 ? at::cuda::getCurrentDeviceProperties()
                      : at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(device));
  });
}
int32_t api_current_blaslt_handle(void** out) {
  return guarded([&] { *out = at::cuda::getCurrentCUDABlasLtHandle(); });
}
int32_t api_current_cudnn_handle(void** out) {
  return guarded([&] {
    TORCH_CHECK(at::native::getCudnnHandle != nullptr, "this torch is built without cuDNN");
    *out = at::native::getCudnnHandle();
  });
}
int32_t api_default_dtype() { return static_cast<int32_t>(c10::typeMetaToScalarType(c10::get_default_dtype())); }
// The DataPtr of an allocation lives here until the glue's DataPtr lets it go: destroying it runs
// the deleter the allocator chose, as it would in the candidate's own process under torch's build.
int32_t api_cuda_allocate(uint64_t nbytes, void** data, void** owner, int32_t* device) {
  return guarded([&] {
    auto held = std::make_unique<c10::DataPtr>(c10::cuda::CUDACachingAllocator::get()->allocate(nbytes));
    *data = held->get();
    *device = held->device().index();
    *owner = *held ? held.release() : nullptr;
  });
}
void api_cuda_free_allocation(void* owner) { delete static_cast<c10::DataPtr*>(owner); }
int32_t api_cuda_raw_alloc(uint64_t nbytes, int32_t with_stream, void* stream, void** out) {
  return guarded([&] {
    *out = with_stream
               ? c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(nbytes, static_cast<cudaStream_t>(stream))
               : c10::cuda::CUDACachingAllocator::raw_alloc(nbytes);
  });
}
int32_t api_cuda_raw_delete(void* ptr) {
  return guarded([&] { c10::cuda::CUDACachingAllocator::raw_delete(ptr); });
}
const char* api_scalar_type_name(int32_t t) { return c10::toString(static_cast<c10::ScalarType>(t)); }
void api_warn(const char* message) { TORCH_WARN(message); }

const dbfp_api g_api = {
    DBFP_ABI_VERSION,
    sizeof(dbfp_api),
    api_last_error,
    api_retain,
    api_release,
    api_numel,
    api_dim,
    api_sizes,
    api_strides,
    api_storage_offset,
    api_scalar_type,
    api_device_type,
    api_device_index,
    api_layout,
    api_requires_grad,
    api_element_size,
    api_is_contiguous,
    api_data_ptr,
    api_find_op,
    api_call_op,
    api_free_value,
    api_current_stream,
    api_current_device,
    api_set_device,
    api_device_count,
    api_current_blas_handle,
    api_device_properties,
    api_scalar_type_name,
    api_warn,
    api_current_blaslt_handle,
    api_current_cudnn_handle,
    api_default_dtype,
    api_cuda_allocate,
    api_cuda_free_allocation,
    api_cuda_raw_alloc,
    api_cuda_raw_delete,
};

// ------------------------------------------------------------------------- Python arguments

// Storage for converted arguments while a bound function runs. The glue reads lists and strings
// through the pointers in `values`, so what they point into never moves: a std::deque keeps its
// elements in place as more are appended (a std::vector would move them when it grows, and a
// short string's characters, stored inside the std::string, with them).
struct Arguments {
  std::vector<dbfp_value> values;
  std::deque<at::Tensor> tensors;
  std::deque<std::vector<dbfp_tensor>> tensor_lists;
  std::deque<std::vector<int64_t>> int_lists;
  std::deque<std::vector<double>> double_lists;
  std::deque<std::string> strings;
};

[[noreturn]] void argument_error(const std::string& function, std::size_t index, const char* expected, py::handle obj) {
  throw py::type_error(function + "(): incompatible function arguments: argument " + std::to_string(index) +
                       " must be " + expected + ", not " + std::string(py::str(py::type::of(obj).attr("__name__"))));
}

// Types whose values point into storage they do not own. torch's casters for at::IntArrayRef and
// at::SymIntArrayRef copy the Python list or tuple into a std::vector inside the caster and
// return an ArrayRef to it; pybind11's casters for std::string_view and const char* likewise.
template <class T>
struct is_view : std::false_type {};
template <class T>
struct is_view<c10::ArrayRef<T>> : std::true_type {};
template <class T>
struct is_view<c10::OptionalArrayRef<T>> : std::true_type {};
template <class C, class Traits>
struct is_view<std::basic_string_view<C, Traits>> : std::true_type {};
template <class T>
struct is_view<T*> : std::true_type {};

// Converts `obj` as a stock module converts an argument for a parameter of type T: with the caster
// pybind11 uses for T (torch's own for torch's types), in convert mode. The result is an Owned
// value, made while the caster is alive: a view type T must name an owning Owned (its elements
// are copied), since the view dies with the caster that holds its data.
template <class T, class Owned = T>
Owned load_as(py::handle obj, const std::string& function, std::size_t index, const char* expected) {
  static_assert(!is_view<Owned>::value, "a view would outlive the caster that holds its data: name an owning type");
  py::detail::make_caster<T> caster;
  if (!caster.load(obj, true)) argument_error(function, index, expected, obj);
  if constexpr (std::is_same_v<T, Owned>) {
    return py::detail::cast_op<T>(std::move(caster));
  } else {
    const T view = py::detail::cast_op<T>(caster);
    return Owned(view.begin(), view.end());
  }
}

dbfp_value tensor_value(Arguments& a, at::Tensor t) {
  dbfp_value v{};
  v.tag = DBFP_TENSOR;
  v.u.tensor = handle_of(t.unsafeGetTensorImpl());
  a.tensors.push_back(std::move(t));
  return v;
}

dbfp_value int_list_value(Arguments& a, std::vector<int64_t> list) {
  a.int_lists.push_back(std::move(list));
  dbfp_value v{};
  v.tag = DBFP_INT_LIST;
  v.u.list.data = a.int_lists.back().data();
  v.u.list.size = static_cast<int64_t>(a.int_lists.back().size());
  return v;
}

dbfp_value double_list_value(Arguments& a, std::vector<double> list) {
  a.double_lists.push_back(std::move(list));
  dbfp_value v{};
  v.tag = DBFP_DOUBLE_LIST;
  v.u.list.data = a.double_lists.back().data();
  v.u.list.size = static_cast<int64_t>(a.double_lists.back().size());
  return v;
}

dbfp_value convert_argument(Arguments& a, py::handle obj, int32_t type, const std::string& fn, std::size_t i) {
  dbfp_value v{};
  auto number = [&](int64_t value, int32_t tag) {
    v.tag = tag;
    v.u.i = value;
    return v;
  };
  auto floating = [&](double value) {
    v.tag = DBFP_DOUBLE;
    v.u.d = value;
    return v;
  };
  bool optional = type == DBFP_T_OPTIONAL_TENSOR || type == DBFP_T_OPTIONAL_INT64 || type == DBFP_T_OPTIONAL_INT32 ||
                  type == DBFP_T_OPTIONAL_DOUBLE || type == DBFP_T_OPTIONAL_BOOL;
  if (optional && obj.is_none()) {
    v.tag = DBFP_NONE;
    return v;
  }
  switch (type) {
    case DBFP_T_TENSOR:
    case DBFP_T_OPTIONAL_TENSOR:
      return tensor_value(a, load_as<at::Tensor>(obj, fn, i, "Tensor"));
    case DBFP_T_TENSOR_LIST: {
      auto list = load_as<std::vector<at::Tensor>>(obj, fn, i, "List[Tensor]");
      a.tensor_lists.emplace_back();
      for (auto& t : list) {
        a.tensor_lists.back().push_back(handle_of(t.unsafeGetTensorImpl()));
        a.tensors.push_back(std::move(t));
      }
      v.tag = DBFP_TENSOR_LIST;
      v.u.list.data = a.tensor_lists.back().data();
      v.u.list.size = static_cast<int64_t>(a.tensor_lists.back().size());
      return v;
    }
    case DBFP_T_INT64:
    case DBFP_T_OPTIONAL_INT64:
      return number(load_as<int64_t>(obj, fn, i, "int"), DBFP_INT);
    case DBFP_T_INT32:
    case DBFP_T_OPTIONAL_INT32:
      return number(load_as<int>(obj, fn, i, "int"), DBFP_INT);
    case DBFP_T_INT16:
      return number(load_as<short>(obj, fn, i, "int"), DBFP_INT);
    case DBFP_T_UINT64:
      return number(static_cast<int64_t>(load_as<uint64_t>(obj, fn, i, "int")), DBFP_INT);
    case DBFP_T_UINT32:
      return number(load_as<unsigned>(obj, fn, i, "int"), DBFP_INT);
    case DBFP_T_BOOL:
    case DBFP_T_OPTIONAL_BOOL:
      return number(load_as<bool>(obj, fn, i, "bool") ? 1 : 0, DBFP_BOOL);
    case DBFP_T_DOUBLE:
    case DBFP_T_OPTIONAL_DOUBLE:
      return floating(load_as<double>(obj, fn, i, "float"));
    case DBFP_T_FLOAT:
      return floating(load_as<float>(obj, fn, i, "float"));
    case DBFP_T_INT64_LIST:
      return int_list_value(a, load_as<std::vector<int64_t>>(obj, fn, i, "List[int]"));
    case DBFP_T_INT32_LIST: {
      auto list = load_as<std::vector<int>>(obj, fn, i, "List[int]");
      return int_list_value(a, std::vector<int64_t>(list.begin(), list.end()));
    }
    case DBFP_T_INT_ARRAY_REF:
      return int_list_value(a, load_as<at::IntArrayRef, std::vector<int64_t>>(obj, fn, i, "List[int]"));
    case DBFP_T_DOUBLE_LIST:
      return double_list_value(a, load_as<std::vector<double>>(obj, fn, i, "List[float]"));
    case DBFP_T_FLOAT_LIST: {
      auto list = load_as<std::vector<float>>(obj, fn, i, "List[float]");
      return double_list_value(a, std::vector<double>(list.begin(), list.end()));
    }
    case DBFP_T_STRING: {
      a.strings.push_back(load_as<std::string>(obj, fn, i, "str"));
      v.tag = DBFP_STRING;
      v.u.list.data = a.strings.back().data();
      v.u.list.size = static_cast<int64_t>(a.strings.back().size());
      return v;
    }
    case DBFP_T_SCALAR: {
      c10::Scalar s = load_as<c10::Scalar>(obj, fn, i, "Number");
      if (s.isFloatingPoint()) return floating(s.toDouble());
      if (s.isBoolean()) return number(s.toBool() ? 1 : 0, DBFP_BOOL);
      TORCH_CHECK(s.isIntegral(false), fn, "(): complex scalars are not supported");
      return number(s.toLong(), DBFP_INT);
    }
    case DBFP_T_SCALAR_TYPE:
      return number(static_cast<int64_t>(load_as<at::ScalarType>(obj, fn, i, "torch.dtype")), DBFP_SCALAR_TYPE);
    default:
      throw py::type_error(fn + "(): unsupported parameter type code " + std::to_string(type));
  }
}

// Converts an owned result of the glue to Python, freeing it.
py::object result_to_python(dbfp_value& v) {
  switch (v.tag) {
    case DBFP_NONE:
      return py::none();
    case DBFP_TENSOR: {
      at::Tensor t(c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>::reclaim(impl_of(v.u.tensor)));
      v.tag = DBFP_NONE;
      return py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(t)));
    }
    case DBFP_INT:
      return py::int_(v.u.i);
    case DBFP_BOOL:
      return py::bool_(v.u.i != 0);
    case DBFP_DOUBLE:
      return py::float_(v.u.d);
    case DBFP_TENSOR_LIST: {
      py::list out;
      auto* items = static_cast<dbfp_tensor*>(const_cast<void*>(v.u.list.data));
      for (int64_t i = 0; i < v.u.list.size; ++i) {
        dbfp_value item{};
        item.tag = items[i] ? DBFP_TENSOR : DBFP_NONE;
        item.u.tensor = items[i];
        items[i] = nullptr;
        out.append(result_to_python(item));
      }
      api_free_value(&v);
      return out;
    }
    case DBFP_TUPLE: {
      auto* items = static_cast<dbfp_value*>(const_cast<void*>(v.u.list.data));
      py::tuple out(static_cast<std::size_t>(v.u.list.size));
      for (int64_t i = 0; i < v.u.list.size; ++i) out[static_cast<std::size_t>(i)] = result_to_python(items[i]);
      api_free_value(&v);
      return out;
    }
    default:
      api_free_value(&v);
      throw std::runtime_error("dicebench_fastpath: unexpected result kind from the glue");
  }
}

// ------------------------------------------------------------------------------------ loading

struct LoadedGlue {
  void* library = nullptr;
  const dbfp_function_info* functions = nullptr;
  int32_t function_count = 0;
  const char* (*error)(void) = nullptr;
  cudaLibrary_t kernels = nullptr;
};

std::mutex g_loaded_mutex;
std::map<std::string, std::shared_ptr<LoadedGlue>> g_loaded;  // by entry folder; never unloaded

std::string read_bytes(const std::string& path) {
  auto bytes = read_whole_file(path);
  if (!bytes) throw std::runtime_error(bytes.error().message);
  return std::move(*bytes);
}

template <class T>
T symbol(void* library, const char* name, bool required = true) {
  void* s = dlsym(library, name);
  if (!s && required) throw std::runtime_error(std::string("glue without ") + name);
  return reinterpret_cast<T>(s);
}

std::shared_ptr<LoadedGlue> load_entry(const std::string& entry_dir,
                                       const std::vector<std::pair<std::string, std::string>>& kernels,
                                       bool load_kernels) {
  std::lock_guard<std::mutex> lock(g_loaded_mutex);
  std::string memo_key = entry_dir + (load_kernels ? "" : "#without-kernels");
  auto it = g_loaded.find(memo_key);
  if (it != g_loaded.end()) return it->second;
  auto glue = std::make_shared<LoadedGlue>();
  std::string path = entry_dir + "/glue.so";
  glue->library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!glue->library) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto abi = symbol<uint32_t (*)()>(glue->library, "dbfp_glue_abi_version");
  if (abi() != DBFP_ABI_VERSION)
    throw std::runtime_error("glue of ABI " + std::to_string(abi()) + ", module of ABI " +
                             std::to_string(DBFP_ABI_VERSION));
  symbol<void (*)(const dbfp_api*)>(glue->library, "dbfp_glue_init")(&g_api);
  glue->error = symbol<const char* (*)()>(glue->library, "dbfp_glue_error");
  glue->function_count =
      symbol<int32_t (*)(const dbfp_function_info**)>(glue->library, "dbfp_glue_functions")(&glue->functions);
  auto kernel_table = symbol<int32_t (*)(void***, const char* const**)>(glue->library, "dbfp_glue_kernels", false);
  if (kernel_table) {
    void** slots = nullptr;
    const char* const* names = nullptr;
    int32_t count = kernel_table(&slots, &names);
    if (count > 0 && load_kernels) {
      std::string cubin = read_bytes(entry_dir + "/kernels.cubin");
      cudaError_t rc = cudaLibraryLoadData(&glue->kernels, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
      if (rc != cudaSuccess) {
        cudaGetLastError();  // leave no error behind for the candidate's own checks
        throw std::runtime_error(std::string("cudaLibraryLoadData: ") + cudaGetErrorString(rc));
      }
      std::map<std::string, std::string> lowered(kernels.begin(), kernels.end());
      for (int32_t i = 0; i < count; ++i) {
        auto found = lowered.find(names[i]);
        if (found == lowered.end()) throw std::runtime_error(std::string("no lowered name for ") + names[i]);
        cudaKernel_t kernel = nullptr;
        rc = cudaLibraryGetKernel(&kernel, glue->kernels, found->second.c_str());
        if (rc != cudaSuccess) {
          cudaGetLastError();
          throw std::runtime_error("cudaLibraryGetKernel(" + found->second + "): " + cudaGetErrorString(rc));
        }
        slots[i] = reinterpret_cast<void*>(kernel);
      }
    }
  }
  g_loaded.emplace(memo_key, glue);
  return glue;
}

PyObject* exception_for(int32_t kind) {
  switch (kind) {
    case DBFP_ERROR_VALUE:
      return PyExc_ValueError;
    case DBFP_ERROR_TYPE:
      return PyExc_TypeError;
    case DBFP_ERROR_INDEX:
      return PyExc_IndexError;
    case DBFP_ERROR_MEMORY:
      return PyExc_MemoryError;
    case DBFP_ERROR_NOT_IMPLEMENTED:
      return PyExc_NotImplementedError;
    default:
      return PyExc_RuntimeError;
  }
}

// Calls of loaded functions in this process that got past the argument count (which torch's own
// module checks alike: its bindings take exactly the declared parameters, no keywords): until the
// first, nothing the fast path built has run, so a failure before it cannot be the fast path's.
std::atomic<uint64_t> g_calls{0};

py::object call_bound(const std::shared_ptr<LoadedGlue>& glue, const dbfp_function_info* info, py::args args,
                      py::kwargs kwargs) {
  std::string name = info->name;
  if (kwargs && py::len(kwargs) > 0)
    throw py::type_error(name + "(): incompatible function arguments: keyword arguments are not accepted");
  if (static_cast<int32_t>(py::len(args)) != info->num_args)
    throw py::type_error(name + "(): incompatible function arguments: takes " + std::to_string(info->num_args) +
                         " positional arguments but " + std::to_string(py::len(args)) + " were given");
  g_calls.fetch_add(1, std::memory_order_relaxed);  // from here on, the fast path's conversions and glue run
  Arguments a;
  a.values.reserve(static_cast<std::size_t>(info->num_args));
  for (std::size_t i = 0; i < static_cast<std::size_t>(info->num_args); ++i)
    a.values.push_back(convert_argument(a, args[i], info->arg_types[i], name, i));
  dbfp_value result{};
  int32_t status = info->invoke(a.values.data(), &result);
  if (status != 0) {
    PyErr_SetString(exception_for(status), glue->error());
    throw py::error_already_set();
  }
  return result_to_python(result);
}

py::dict load(const std::string& entry_dir, const std::vector<std::pair<std::string, std::string>>& kernels,
              bool load_kernels) {
  std::shared_ptr<LoadedGlue> glue = load_entry(entry_dir, kernels, load_kernels);
  py::dict functions;
  for (int32_t i = 0; i < glue->function_count; ++i) {
    const dbfp_function_info* info = &glue->functions[i];
    py::cpp_function callable(
        [glue, info](py::args args, py::kwargs kwargs) {
          return call_bound(glue, info, std::move(args), std::move(kwargs));
        },
        py::name(info->name));
    functions[py::str(info->name)] = callable;
  }
  return functions;
}

}  // namespace

void add_torch_bridge(py::module_& module) {
  // Where glue code that runs during dlopen (static initializers) finds the table.
  char address[32];
  std::snprintf(address, sizeof(address), "%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(&g_api)));
  setenv("DICEBENCH_FASTPATH_API", address, 1);
  module.def("load", &load, py::arg("entry_dir"), py::arg("kernels"), py::arg("load_kernels") = true,
             "Loads a compiled cache entry: dlopens its glue, loads its cubin, returns {name: callable}.\n"
             "load_kernels=False leaves the kernel table empty (tests of the host glue without a GPU:\n"
             "launches then fail as launches do, through cudaGetLastError).");
  module.def("abi_version", [] { return DBFP_ABI_VERSION; });
  module.def(
      "calls", [] { return g_calls.load(std::memory_order_relaxed); },
      "Calls of functions loaded on the fast path in this process so far.");
}

}  // namespace dicebench::fastpath
