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
 *   args[2] (optional): address of AotnnPrefetch[count], the weights to prefetch while step i
 *            runs (the next step's; see aotnn_prefetch_hint in aotnn_backend.c), or 0
 *   args[3] (optional): address of AotnnParallel[count], the extents of step i's parallel loops
 *            (see aotnn_parallel_hint in aotnn_backend.c)
 *
 * aotnn_run_steps_timed (the profiler) takes the same four arguments (0 for a missing table) and
 * args[4]: address of int64_t[count + 1], filled with CLOCK_MONOTONIC nanoseconds: [0] before the
 * first step, [i + 1] when step i returned. The untimed runner shares the loop, its clock reads
 * compiled out (the loop is inlined with a constant NULL timestamp array).
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "aotnn_abi.h"

typedef struct {
  AotnnKernel kernel;
  AotnnFFIAny* args;
  int64_t num_args;
} AotnnStep;

typedef struct {
  AotnnDLTensor* const* tensors;
  int64_t count;
} AotnnPrefetch;

typedef struct {
  const int32_t* extents;
  int64_t count;
} AotnnParallel;

enum { AOTNN_FFI_INT = 1, AOTNN_PREFETCH_MAX = 8 };

extern void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int num_parts);
extern void aotnn_prefetch_hint(const void* const* bases, const uint64_t* sizes, int count);
extern void aotnn_parallel_hint(const int32_t* extents, int count);

static void aotnn_hint(const AotnnPrefetch* prefetch) {
  const void* bases[AOTNN_PREFETCH_MAX];
  uint64_t sizes[AOTNN_PREFETCH_MAX];
  int count = 0;
  for (int64_t t = 0; t < prefetch->count && count < AOTNN_PREFETCH_MAX; ++t) {
    const AotnnDLTensor* tensor = prefetch->tensors[t];
    uint64_t bytes = (tensor->dtype.bits * (uint64_t)tensor->dtype.lanes + 7) / 8;
    for (int32_t d = 0; d < tensor->ndim; ++d) bytes *= (uint64_t)tensor->shape[d];
    bases[count] = (const char*)tensor->data + tensor->byte_offset;
    sizes[count++] = bytes;
  }
  aotnn_prefetch_hint(bases, sizes, count);
}

static int32_t aotnn_steps_error(const char* message) {
  const char* parts[] = {message};
  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 1);
  return -1;
}

static inline int64_t aotnn_now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Runs the steps; times (when not NULL) receives count + 1 timestamps. */
static inline int32_t aotnn_steps_loop(const AotnnStep* steps, int64_t count, const AotnnPrefetch* prefetch,
                                       const AotnnParallel* parallel, int64_t* times) {
  int64_t i;
  if (times != NULL) times[0] = aotnn_now_ns();
  for (i = 0; i < count; ++i) {
    AotnnFFIAny kernel_result = {AOTNN_FFI_NONE, 0, {0}};
    if (prefetch != NULL) aotnn_hint(&prefetch[i]);
    if (parallel != NULL) aotnn_parallel_hint(parallel[i].extents, (int)parallel[i].count);
    if (steps[i].kernel(NULL, steps[i].args, (int32_t)steps[i].num_args, &kernel_result) != 0) {
      if (parallel != NULL) aotnn_parallel_hint(NULL, 0);
      return -1;
    }
    if (times != NULL) times[i + 1] = aotnn_now_ns();
  }
  if (prefetch != NULL) aotnn_prefetch_hint(NULL, NULL, 0);
  if (parallel != NULL) aotnn_parallel_hint(NULL, 0);
  return 0;
}

static int32_t aotnn_steps_done(AotnnFFIAny* result) {
  result->type_index = AOTNN_FFI_NONE;
  result->zero_padding = 0;
  result->value.v_int64 = 0;
  return 0;
}

int32_t __tvm_ffi_aotnn_run_steps(void* self, const AotnnFFIAny* args, int32_t num_args, AotnnFFIAny* result) {
  const AotnnStep* steps;
  const AotnnPrefetch* prefetch = NULL;
  const AotnnParallel* parallel = NULL;
  int64_t count, i;
  (void)self;
  static const char usage[] = "aotnn_run_steps: expected (table address, step count[, prefetch table address"
                              "[, parallel table address]]) as integers";
  if (num_args < 2 || num_args > 4) return aotnn_steps_error(usage);
  for (i = 0; i < num_args; ++i) {
    if (args[i].type_index != AOTNN_FFI_INT) return aotnn_steps_error(usage);
  }
  steps = (const AotnnStep*)(uintptr_t)args[0].value.v_int64;
  count = args[1].value.v_int64;
  if (num_args >= 3) prefetch = (const AotnnPrefetch*)(uintptr_t)args[2].value.v_int64;
  if (num_args == 4) parallel = (const AotnnParallel*)(uintptr_t)args[3].value.v_int64;
  if (steps == NULL || count < 0) return aotnn_steps_error("aotnn_run_steps: NULL table or negative count");
  if (aotnn_steps_loop(steps, count, prefetch, parallel, NULL) != 0) return -1;
  return aotnn_steps_done(result);
}

int32_t __tvm_ffi_aotnn_run_steps_timed(void* self, const AotnnFFIAny* args, int32_t num_args,
                                        AotnnFFIAny* result) {
  const AotnnStep* steps;
  int64_t count, i;
  int64_t* times;
  (void)self;
  static const char usage[] = "aotnn_run_steps_timed: expected (table address, step count, prefetch table address "
                              "or 0, parallel table address or 0, timestamps address) as integers";
  if (num_args != 5) return aotnn_steps_error(usage);
  for (i = 0; i < num_args; ++i) {
    if (args[i].type_index != AOTNN_FFI_INT) return aotnn_steps_error(usage);
  }
  steps = (const AotnnStep*)(uintptr_t)args[0].value.v_int64;
  count = args[1].value.v_int64;
  times = (int64_t*)(uintptr_t)args[4].value.v_int64;
  if (steps == NULL || times == NULL || count < 0) {
    return aotnn_steps_error("aotnn_run_steps_timed: NULL table, NULL timestamps or negative count");
  }
  if (aotnn_steps_loop(steps, count, (const AotnnPrefetch*)(uintptr_t)args[2].value.v_int64,
                       (const AotnnParallel*)(uintptr_t)args[3].value.v_int64, times) != 0) {
    return -1;
  }
  return aotnn_steps_done(result);
}
