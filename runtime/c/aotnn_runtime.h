/*
 * aotnn_runtime.h: the C API of an aotnn model bundle (C99, no heap on the inference path).
 *
 *   float x[1*1*32*32], y[10];
 *   const void* inputs[] = {x};
 *   void* outputs[] = {y};
 *   if (aotnn_model_run(inputs, outputs) != AOTNN_OK) puts(aotnn_last_error());
 *
 * Weight re-layouts (packing, batch-norm folding) were done at compile time: weights.bin holds
 * their results, read in place from read-only memory.
 */
#ifndef AOTNN_RUNTIME_H_
#define AOTNN_RUNTIME_H_
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  AOTNN_OK = 0,
  AOTNN_ERR_ARGUMENT = 1,   /* a NULL or misaligned input or output pointer */
  AOTNN_ERR_KERNEL = 2,     /* a kernel reported an error; see aotnn_last_error() */
  AOTNN_ERR_WEIGHTS = 3     /* weights missing, of the wrong size, or linked in */
} aotnn_status;

/* Runs the model. inputs[i] points at input i's bytes (C order, the dtype of the bundle's
 * manifest); outputs[i] at room for output i. Neither needs any alignment: data is copied. */
aotnn_status aotnn_model_run(const void* const* inputs, void* const* outputs);

/* Runs the model on the caller's buffers, without copies: inputs[i] and outputs[i] aligned to
 * their element size (4 bytes for float32); outputs must not overlap inputs. The bundle then
 * needs no RAM for them (a linker that collects unused sections drops aotnn_model_run's copies). */
aotnn_status aotnn_model_run_in_place(const void* const* inputs, void* const* outputs);

/* For builds with -DAOTNN_WEIGHTS_FROM_FILE (weights not linked in): points the model at weights
 * in memory (a copy of the bundle's weights.bin, 64-byte aligned); size is checked. Builds that
 * link weights.bin in keep their tensor tables in read-only memory and refuse the call. */
aotnn_status aotnn_model_set_weights(const void* data, size_t size);

size_t aotnn_model_num_inputs(void);
size_t aotnn_model_num_outputs(void);
size_t aotnn_model_input_bytes(size_t index);
size_t aotnn_model_output_bytes(size_t index);
size_t aotnn_model_arena_bytes(void);

/* A training step's state (the parameters it updates, optimizer state: RAM), in the manifest's
 * param_updates order; 0 states for inference bundles. */
size_t aotnn_model_num_states(void);
const void* aotnn_model_state(size_t index);
size_t aotnn_model_state_bytes(size_t index);

/* The message of the last error, or "" if none. */
const char* aotnn_last_error(void);

/* Used by the generated model and by the backend. */
void aotnn_set_error(const char* message);
void aotnn_workspace_reset(void);
/* The next kernel's scratch memory: `bytes` at `base` (a block of the arena planned for it). */
void aotnn_workspace_place(void* base, size_t bytes);
/* Points the kernels' backend hooks at runtime/c's (also done by a constructor where there are
 * constructors; bare-metal builds define AOTNN_NO_CONSTRUCTOR and rely on this call). */
void aotnn_install_backend(void);

#ifdef __cplusplus
}
#endif
#endif  /* AOTNN_RUNTIME_H_ */
