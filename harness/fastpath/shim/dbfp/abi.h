/* The C boundary between the fast path's Python module (dicebench_fastpath_native, which links
 * libtorch) and a candidate's compiled host glue (which sees only the shim headers).
 *
 * The module hands the glue a dbfp_api table; every tensor operation of the shim goes through it
 * to real ATen. The glue exports a few extern "C" symbols (below) that list its bound functions
 * and its kernel slots. Nothing but C types crosses; errors are status codes plus a message.
 * Bump DBFP_ABI_VERSION on any change of a struct here. */
#ifndef DBFP_ABI_H
#define DBFP_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DBFP_ABI_VERSION 2u

/* A c10::TensorImpl*, reference-counted through retain/release; NULL is an undefined tensor. */
typedef struct dbfp_tensor_impl* dbfp_tensor;
/* A resolved ATen operator (c10::OperatorHandle). */
typedef const struct dbfp_op_impl* dbfp_op;

enum dbfp_tag {
  DBFP_NONE = 0,
  DBFP_TENSOR = 1,       /* u.tensor */
  DBFP_INT = 2,          /* u.i */
  DBFP_DOUBLE = 3,       /* u.d */
  DBFP_BOOL = 4,         /* u.i (0 or 1) */
  DBFP_INT_LIST = 5,     /* u.list: int64_t[] */
  DBFP_DOUBLE_LIST = 6,  /* u.list: double[] */
  DBFP_TENSOR_LIST = 7,  /* u.list: dbfp_tensor[] */
  DBFP_STRING = 8,       /* u.list: char[] (not terminated) */
  DBFP_SCALAR_TYPE = 9,  /* u.i: c10::ScalarType */
  DBFP_DEVICE = 10,      /* u.i: c10::DeviceType, aux: index (-1: none) */
  DBFP_LAYOUT = 11,      /* u.i: c10::Layout */
  DBFP_MEMORY_FORMAT = 12, /* u.i: c10::MemoryFormat */
  DBFP_TUPLE = 13,       /* u.list: dbfp_value[] */
  DBFP_BOOL_LIST = 14    /* u.list: uint8_t[] */
};

typedef struct dbfp_value {
  int32_t tag;
  int32_t aux;
  union {
    dbfp_tensor tensor;
    int64_t i;
    double d;
    struct {
      const void* data;
      int64_t size;
    } list;
  } u;
} dbfp_value;

/* Parameter types of bound functions, as the glue reports them. */
enum dbfp_type {
  DBFP_T_VOID = 0,
  DBFP_T_TENSOR = 1,
  DBFP_T_OPTIONAL_TENSOR = 2,
  DBFP_T_TENSOR_LIST = 3,   /* std::vector<at::Tensor> */
  DBFP_T_INT64 = 4,
  DBFP_T_INT32 = 5,
  DBFP_T_UINT64 = 6,
  DBFP_T_UINT32 = 7,
  DBFP_T_BOOL = 8,
  DBFP_T_DOUBLE = 9,
  DBFP_T_FLOAT = 10,
  DBFP_T_INT64_LIST = 11,   /* std::vector<int64_t> */
  DBFP_T_INT32_LIST = 12,   /* std::vector<int> */
  DBFP_T_DOUBLE_LIST = 13,  /* std::vector<double> */
  DBFP_T_FLOAT_LIST = 14,   /* std::vector<float> */
  DBFP_T_INT_ARRAY_REF = 15,/* at::IntArrayRef */
  DBFP_T_STRING = 16,       /* std::string */
  DBFP_T_OPTIONAL_INT64 = 17,
  DBFP_T_OPTIONAL_DOUBLE = 18,
  DBFP_T_SCALAR = 19,       /* c10::Scalar */
  DBFP_T_SCALAR_TYPE = 20,  /* at::ScalarType */
  DBFP_T_INT16 = 21,
  DBFP_T_TUPLE = 22,        /* return only: std::tuple<...> */
  DBFP_T_OPTIONAL_INT32 = 23,
  DBFP_T_OPTIONAL_BOOL = 24
};

/* What the module gives the glue. All functions are safe to call with the GIL held; those that
 * return int32_t return 0 on success and otherwise leave a message for last_error(). */
typedef struct dbfp_api {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* (*last_error)(void);

  void (*retain)(dbfp_tensor);
  void (*release)(dbfp_tensor);
  int64_t (*numel)(dbfp_tensor);
  int64_t (*dim)(dbfp_tensor);
  const int64_t* (*sizes)(dbfp_tensor);
  const int64_t* (*strides)(dbfp_tensor);
  int64_t (*storage_offset)(dbfp_tensor);
  int32_t (*scalar_type)(dbfp_tensor);
  int32_t (*device_type)(dbfp_tensor);
  int32_t (*device_index)(dbfp_tensor);
  int32_t (*layout)(dbfp_tensor);
  int32_t (*requires_grad)(dbfp_tensor);
  int64_t (*element_size)(dbfp_tensor);
  /* is_contiguous(memory_format): 1 or 0, or -1 on error. */
  int32_t (*is_contiguous)(dbfp_tensor, int32_t memory_format);
  /* data_ptr<T>(): expected_scalar_type -1 for the untyped data_ptr(); want_mutable selects
   * mutable_data_ptr (data_ptr, data_ptr<T>) or const_data_ptr. */
  int32_t (*data_ptr)(dbfp_tensor, int32_t expected_scalar_type, int32_t want_mutable, void** out);

  /* Any ATen operator through the dispatcher. find_op returns NULL on failure. call_op fills
   * outs[0..*nouts) with owned values (free them with free_value). Missing trailing arguments
   * take the schema's defaults. */
  dbfp_op (*find_op)(const char* name, const char* overload);
  int32_t (*call_op)(dbfp_op op, const dbfp_value* args, int32_t nargs, dbfp_value* outs, int32_t max_outs,
                     int32_t* nouts);
  void (*free_value)(dbfp_value* value);

  /* CUDA: the current stream of a device (-1: the current device) as cudaStream_t; devices. */
  int32_t (*current_stream)(int32_t device, void** out);
  int32_t (*current_device)(int32_t* out);
  int32_t (*set_device)(int32_t device);
  int32_t (*device_count)(void);
  int32_t (*current_blas_handle)(void** out);
  int32_t (*device_properties)(int32_t device, const void** out); /* const cudaDeviceProp* */
  const char* (*scalar_type_name)(int32_t scalar_type);
  void (*warn)(const char* message);

  /* Since ABI 2. torch's cuBLASLt handle (at::cuda::getCurrentCUDABlasLtHandle) and cuDNN handle
   * (at::native::getCudnnHandle: the current device's, set to the current stream). */
  int32_t (*current_blaslt_handle)(void** out);
  int32_t (*current_cudnn_handle)(void** out);
  /* torch.get_default_dtype() as a c10::ScalarType. */
  int32_t (*default_dtype)(void);
  /* torch's CUDA caching allocator. cuda_allocate is CUDACachingAllocator::get()->allocate(nbytes):
   * *data is the memory, *owner the c10::DataPtr that holds it (NULL when it holds nothing, as for
   * 0 bytes), which cuda_free_allocation destroys, giving the memory back as the DataPtr's own
   * deleter does; *device its device. cuda_raw_alloc is raw_alloc(nbytes), or with
   * with_stream != 0 raw_alloc_with_stream(nbytes, stream); cuda_raw_delete is raw_delete(ptr). */
  int32_t (*cuda_allocate)(uint64_t nbytes, void** data, void** owner, int32_t* device);
  void (*cuda_free_allocation)(void* owner);
  int32_t (*cuda_raw_alloc)(uint64_t nbytes, int32_t with_stream, void* stream, void** out);
  int32_t (*cuda_raw_delete)(void* ptr);
} dbfp_api;

/* A function the glue binds (one per name in load_inline's `functions`). invoke() takes the
 * arguments converted by the module as arg_types say, and fills *result with owned values;
 * non-zero is a C++ exception, described by dbfp_glue_error(). */
typedef struct dbfp_function_info {
  const char* name;
  int32_t num_args;
  const int32_t* arg_types;
  int32_t return_type;
  int32_t (*invoke)(const dbfp_value* args, dbfp_value* result);
} dbfp_function_info;

/* Error kinds invoke() returns (the Python exception the module raises). */
enum dbfp_error_kind {
  DBFP_ERROR_RUNTIME = 1,
  DBFP_ERROR_VALUE = 2,
  DBFP_ERROR_TYPE = 3,
  DBFP_ERROR_INDEX = 4,
  DBFP_ERROR_MEMORY = 5,
  DBFP_ERROR_NOT_IMPLEMENTED = 6
};

/* The glue's exports (extern "C", default visibility):
 *   uint32_t dbfp_glue_abi_version(void);
 *   void dbfp_glue_init(const dbfp_api* api);
 *   int32_t dbfp_glue_functions(const dbfp_function_info** functions);   -- the count
 *   const char* dbfp_glue_error(void);
 *   int32_t dbfp_glue_kernels(void*** slots, const char* const** names); -- only with cuda_sources
 * The module fills slots[i] with the cudaKernel_t of names[i] (an NVRTC name expression). */

#ifdef __cplusplus
}
#endif

#endif /* DBFP_ABI_H */
