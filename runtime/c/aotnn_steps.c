/*
 * aotnn_steps.c: runs an entry point's kernels in one call (host kernel libraries).
 *
 * Python calling each kernel in turn costs a few microseconds per kernel, most of it cache
 * misses: the kernels before it have evicted the interpreter's data. The runtime builds the
 * table below once per entry point (DLTensors whose data pointers it refreshes per call) and
 * calls this function instead, through the same tvm-ffi calling convention as a kernel, so a
 * kernel's error reaches Python as the kernel raised it.
 *
 *   args[0]: address of AotnnStep[count]   args[1]: count
 */
#include <stddef.h>
#include <stdint.h>

#include "aotnn_abi.h"

typedef struct {
  AotnnKernel kernel;
  AotnnFFIAny* args;
  int64_t num_args;
} AotnnStep;

enum { AOTNN_FFI_INT = 1 };

extern void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int num_parts);

static int32_t aotnn_steps_error(const char* message) {
  const char* parts[] = {message};
  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 1);
  return -1;
}

int32_t __tvm_ffi_aotnn_run_steps(void* self, const AotnnFFIAny* args, int32_t num_args, AotnnFFIAny* result) {
  const AotnnStep* steps;
  int64_t count, i;
  (void)self;
  if (num_args != 2 || args[0].type_index != AOTNN_FFI_INT || args[1].type_index != AOTNN_FFI_INT) {
    return aotnn_steps_error("aotnn_run_steps: expected (table address, step count) as two integers");
  }
  steps = (const AotnnStep*)(uintptr_t)args[0].value.v_int64;
  count = args[1].value.v_int64;
  if (steps == NULL || count < 0) return aotnn_steps_error("aotnn_run_steps: NULL table or negative count");
  for (i = 0; i < count; ++i) {
    AotnnFFIAny kernel_result = {AOTNN_FFI_NONE, 0, {0}};
    if (steps[i].kernel(NULL, steps[i].args, (int32_t)steps[i].num_args, &kernel_result) != 0) return -1;
  }
  result->type_index = AOTNN_FFI_NONE;
  result->zero_padding = 0;
  result->value.v_int64 = 0;
  return 0;
}
