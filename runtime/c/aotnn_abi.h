/*
 * aotnn_abi.h: the few C ABI definitions TVM-generated kernels use (DLPack's DLTensor and
 * tvm-ffi's TVMFFIAny), declared here so runtime/c needs no other headers.
 */
#ifndef AOTNN_ABI_H_
#define AOTNN_ABI_H_
#include <stdint.h>

typedef struct { int32_t device_type; int32_t device_id; } AotnnDLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } AotnnDLDataType;
typedef struct {
  void* data;
  AotnnDLDevice device;
  int32_t ndim;
  AotnnDLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} AotnnDLTensor;

typedef struct {
  int32_t type_index;
  uint32_t zero_padding;
  union { int64_t v_int64; double v_float64; void* v_ptr; } value;
} AotnnFFIAny;

enum { AOTNN_FFI_NONE = 0, AOTNN_FFI_DLTENSOR_PTR = 7 };
enum { AOTNN_DL_INT = 0, AOTNN_DL_UINT = 1, AOTNN_DL_FLOAT = 2, AOTNN_DL_BOOL = 6 };
enum { AOTNN_DL_CPU = 1 };

typedef int32_t (*AotnnKernel)(void* self, void* args, int32_t num_args, void* result);

#endif  /* AOTNN_ABI_H_ */
