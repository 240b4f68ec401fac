// Binding of the functions named in load_inline's `functions`: their parameters are read from
// dbfp_value as the module converted them from Python (with pybind11's and torch's own casters,
// on the module's side), their results written back as owned dbfp_value. A parameter or result
// type not listed here does not compile, and the candidate falls back to torch's toolchain.
#pragma once

#include "dbfp/torch_api.h"

namespace dbfp {

inline thread_local std::string g_glue_error;

template <class T>
struct arg {
  static_assert(sizeof(T) == 0, "the fast path cannot bind a parameter of this type");
};
template <>
struct arg<at::Tensor> {
  static constexpr int32_t code = DBFP_T_TENSOR;
  static at::Tensor get(const dbfp_value& v) { return at::Tensor::borrow(v.tag == DBFP_TENSOR ? v.u.tensor : nullptr); }
};
template <>
struct arg<std::optional<at::Tensor>> {
  static constexpr int32_t code = DBFP_T_OPTIONAL_TENSOR;
  static std::optional<at::Tensor> get(const dbfp_value& v) {
    if (v.tag == DBFP_NONE) return std::nullopt;
    return at::Tensor::borrow(v.u.tensor);
  }
};
template <>
struct arg<std::vector<at::Tensor>> {
  static constexpr int32_t code = DBFP_T_TENSOR_LIST;
  static std::vector<at::Tensor> get(const dbfp_value& v) {
    std::vector<at::Tensor> out;
    auto* items = static_cast<const dbfp_tensor*>(v.u.list.data);
    for (int64_t i = 0; i < v.u.list.size; ++i) out.push_back(at::Tensor::borrow(items[i]));
    return out;
  }
};
#define DBFP_NUMBER_ARG(T, CODE, FIELD)                              \
  template <>                                                        \
  struct arg<T> {                                                    \
    static constexpr int32_t code = CODE;                            \
    static T get(const dbfp_value& v) { return static_cast<T>(v.u.FIELD); } \
  };
DBFP_NUMBER_ARG(long, DBFP_T_INT64, i)
DBFP_NUMBER_ARG(long long, DBFP_T_INT64, i)
DBFP_NUMBER_ARG(int, DBFP_T_INT32, i)
DBFP_NUMBER_ARG(short, DBFP_T_INT16, i)
DBFP_NUMBER_ARG(unsigned long, DBFP_T_UINT64, i)
DBFP_NUMBER_ARG(unsigned long long, DBFP_T_UINT64, i)
DBFP_NUMBER_ARG(unsigned int, DBFP_T_UINT32, i)
DBFP_NUMBER_ARG(double, DBFP_T_DOUBLE, d)
DBFP_NUMBER_ARG(float, DBFP_T_FLOAT, d)
#undef DBFP_NUMBER_ARG
template <>
struct arg<bool> {
  static constexpr int32_t code = DBFP_T_BOOL;
  static bool get(const dbfp_value& v) { return v.u.i != 0; }
};
template <class T, int32_t Code>
struct list_arg {
  static constexpr int32_t code = Code;
  static std::vector<T> get(const dbfp_value& v) {
    std::vector<T> out;
    if (v.tag == DBFP_INT_LIST) {
      auto* items = static_cast<const int64_t*>(v.u.list.data);
      for (int64_t i = 0; i < v.u.list.size; ++i) out.push_back(static_cast<T>(items[i]));
    } else {
      auto* items = static_cast<const double*>(v.u.list.data);
      for (int64_t i = 0; i < v.u.list.size; ++i) out.push_back(static_cast<T>(items[i]));
    }
    return out;
  }
};
template <>
struct arg<std::vector<int64_t>> : list_arg<int64_t, DBFP_T_INT64_LIST> {};
template <>
struct arg<std::vector<int>> : list_arg<int, DBFP_T_INT32_LIST> {};
template <>
struct arg<std::vector<double>> : list_arg<double, DBFP_T_DOUBLE_LIST> {};
template <>
struct arg<std::vector<float>> : list_arg<float, DBFP_T_FLOAT_LIST> {};
template <>
struct arg<c10::IntArrayRef> {
  static constexpr int32_t code = DBFP_T_INT_ARRAY_REF;
  // The module keeps the list alive for the call.
  static c10::IntArrayRef get(const dbfp_value& v) {
    return c10::IntArrayRef(static_cast<const int64_t*>(v.u.list.data), static_cast<std::size_t>(v.u.list.size));
  }
};
template <>
struct arg<std::string> {
  static constexpr int32_t code = DBFP_T_STRING;
  static std::string get(const dbfp_value& v) {
    return std::string(static_cast<const char*>(v.u.list.data), static_cast<std::size_t>(v.u.list.size));
  }
};
template <>
struct arg<std::optional<int64_t>> {
  static constexpr int32_t code = DBFP_T_OPTIONAL_INT64;
  static std::optional<int64_t> get(const dbfp_value& v) {
    return v.tag == DBFP_NONE ? std::nullopt : std::optional<int64_t>(v.u.i);
  }
};
template <>
struct arg<std::optional<int>> {
  static constexpr int32_t code = DBFP_T_OPTIONAL_INT32;
  static std::optional<int> get(const dbfp_value& v) {
    return v.tag == DBFP_NONE ? std::nullopt : std::optional<int>(static_cast<int>(v.u.i));
  }
};
template <>
struct arg<std::optional<double>> {
  static constexpr int32_t code = DBFP_T_OPTIONAL_DOUBLE;
  static std::optional<double> get(const dbfp_value& v) {
    return v.tag == DBFP_NONE ? std::nullopt : std::optional<double>(v.u.d);
  }
};
template <>
struct arg<std::optional<bool>> {
  static constexpr int32_t code = DBFP_T_OPTIONAL_BOOL;
  static std::optional<bool> get(const dbfp_value& v) {
    return v.tag == DBFP_NONE ? std::nullopt : std::optional<bool>(v.u.i != 0);
  }
};
template <>
struct arg<c10::Scalar> {
  static constexpr int32_t code = DBFP_T_SCALAR;
  static c10::Scalar get(const dbfp_value& v) {
    if (v.tag == DBFP_DOUBLE) return c10::Scalar(v.u.d);
    if (v.tag == DBFP_BOOL) return c10::Scalar(v.u.i != 0);
    return c10::Scalar(v.u.i);
  }
};
template <>
struct arg<c10::ScalarType> {
  static constexpr int32_t code = DBFP_T_SCALAR_TYPE;
  static c10::ScalarType get(const dbfp_value& v) { return static_cast<c10::ScalarType>(v.u.i); }
};

// Results.
template <class T>
struct result {
  static_assert(sizeof(T) == 0, "the fast path cannot bind a function returning this type");
};
template <>
struct result<void> {
  static constexpr int32_t code = DBFP_T_VOID;
};
template <>
struct result<at::Tensor> {
  static constexpr int32_t code = DBFP_T_TENSOR;
  static void set(dbfp_value& out, at::Tensor t) {
    out.tag = t.defined() ? DBFP_TENSOR : DBFP_NONE;
    out.u.tensor = t.release();
  }
};
template <>
struct result<std::vector<at::Tensor>> {
  static constexpr int32_t code = DBFP_T_TENSOR_LIST;
  static void set(dbfp_value& out, std::vector<at::Tensor> list) {
    auto* items = static_cast<dbfp_tensor*>(std::malloc(sizeof(dbfp_tensor) * (list.size() + 1)));
    for (std::size_t i = 0; i < list.size(); ++i) items[i] = list[i].release();
    out.tag = DBFP_TENSOR_LIST;
    out.u.list.data = items;
    out.u.list.size = static_cast<int64_t>(list.size());
  }
};
#define DBFP_NUMBER_RESULT(T, CODE, TAG, FIELD)         \
  template <>                                           \
  struct result<T> {                                    \
    static constexpr int32_t code = CODE;               \
    static void set(dbfp_value& out, T v) {             \
      out.tag = TAG;                                    \
      out.u.FIELD = v;                                  \
    }                                                   \
  };
DBFP_NUMBER_RESULT(long, DBFP_T_INT64, DBFP_INT, i)
DBFP_NUMBER_RESULT(long long, DBFP_T_INT64, DBFP_INT, i)
DBFP_NUMBER_RESULT(int, DBFP_T_INT32, DBFP_INT, i)
DBFP_NUMBER_RESULT(unsigned int, DBFP_T_UINT32, DBFP_INT, i)
DBFP_NUMBER_RESULT(unsigned long, DBFP_T_UINT64, DBFP_INT, i)
DBFP_NUMBER_RESULT(double, DBFP_T_DOUBLE, DBFP_DOUBLE, d)
DBFP_NUMBER_RESULT(float, DBFP_T_FLOAT, DBFP_DOUBLE, d)
#undef DBFP_NUMBER_RESULT
template <>
struct result<bool> {
  static constexpr int32_t code = DBFP_T_BOOL;
  static void set(dbfp_value& out, bool v) {
    out.tag = DBFP_BOOL;
    out.u.i = v ? 1 : 0;
  }
};
template <class... T>
struct result<std::tuple<T...>> {
  static constexpr int32_t code = DBFP_T_TUPLE;
  static void set(dbfp_value& out, std::tuple<T...> values) {
    auto* items = static_cast<dbfp_value*>(std::calloc(sizeof...(T) + 1, sizeof(dbfp_value)));
    set_items(items, std::move(values), std::index_sequence_for<T...>{});
    out.tag = DBFP_TUPLE;
    out.u.list.data = items;
    out.u.list.size = sizeof...(T);
  }
  template <std::size_t... I>
  static void set_items(dbfp_value* items, std::tuple<T...> values, std::index_sequence<I...>) {
    (result<std::decay_t<T>>::set(items[I], std::move(std::get<I>(values))), ...);
  }
};
template <class A, class B>
struct result<std::pair<A, B>> {
  static constexpr int32_t code = DBFP_T_TUPLE;
  static void set(dbfp_value& out, std::pair<A, B> values) {
    result<std::tuple<A, B>>::set(out, std::tuple<A, B>(std::move(values.first), std::move(values.second)));
  }
};

template <class F>
struct signature;
template <class R, class... P>
struct signature<R (*)(P...)> {
  using ret = std::decay_t<R>;
  static constexpr int32_t count = sizeof...(P);
  static constexpr int32_t codes[sizeof...(P) + 1] = {arg<std::decay_t<P>>::code..., 0};
};

inline int32_t error_kind_of_current_exception() {
  try {
    throw;
  } catch (const c10::NotImplementedError& e) {
    g_glue_error = e.what();
    return DBFP_ERROR_NOT_IMPLEMENTED;
  } catch (const c10::IndexError& e) {
    g_glue_error = e.what();
    return DBFP_ERROR_INDEX;
  } catch (const c10::ValueError& e) {
    g_glue_error = e.what();
    return DBFP_ERROR_VALUE;
  } catch (const c10::TypeError& e) {
    g_glue_error = e.what();
    return DBFP_ERROR_TYPE;
  } catch (const c10::Error& e) {
    g_glue_error = e.what();
    return DBFP_ERROR_RUNTIME;
  } catch (const std::bad_alloc& e) {
    g_glue_error = e.what();
    return DBFP_ERROR_MEMORY;
  } catch (const std::exception& e) {
    g_glue_error = e.what();
    return DBFP_ERROR_RUNTIME;
  } catch (...) {
    g_glue_error = "Caught an unknown exception!";
    return DBFP_ERROR_RUNTIME;
  }
}

template <auto F>
struct bound {
  using sig = signature<decltype(F)>;

  static int32_t invoke(const dbfp_value* args, dbfp_value* out) {
    try {
      call(args, out, std::make_index_sequence<sig::count>{});
      return 0;
    } catch (...) {
      return error_kind_of_current_exception();
    }
  }

  template <class R, class... P, std::size_t... I>
  static void call_with(R (*)(P...), const dbfp_value* args, dbfp_value* out, std::index_sequence<I...>) {
    // Converted values live here, so parameters of reference type bind to them.
    std::tuple<std::decay_t<P>...> values{arg<std::decay_t<P>>::get(args[I])...};
    (void)args;
    if constexpr (std::is_void_v<R>) {
      F(std::get<I>(values)...);
      out->tag = DBFP_NONE;
    } else {
      result<std::decay_t<R>>::set(*out, F(std::get<I>(values)...));
    }
  }
  template <std::size_t... I>
  static void call(const dbfp_value* args, dbfp_value* out, std::index_sequence<I...> seq) {
    call_with(F, args, out, seq);
  }
};

template <auto F>
constexpr dbfp_function_info describe(const char* name) {
  using sig = typename bound<F>::sig;
  return dbfp_function_info{name, sig::count, sig::codes, result<typename sig::ret>::code, &bound<F>::invoke};
}

}  // namespace dbfp
