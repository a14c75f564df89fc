/*
 * aotnn_error.c: error reporting for kernels and the model (a static message buffer).
 * Provides TVMFFIErrorSetRaisedFromCStrParts, the only symbol TVM kernels import.
 */
#include <string.h>

#include "aotnn_runtime.h"

static char aotnn_error_message[256];

void aotnn_set_error(const char* message) {
  size_t n = strlen(message);
  if (n >= sizeof(aotnn_error_message)) n = sizeof(aotnn_error_message) - 1;
  memcpy(aotnn_error_message, message, n);
  aotnn_error_message[n] = '\0';
}

const char* aotnn_last_error(void) { return aotnn_error_message; }

void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int num_parts) {
  size_t used = 0;
  int i;
  aotnn_error_message[0] = '\0';
  if (kind != NULL) {
    size_t n = strlen(kind);
    if (n > sizeof(aotnn_error_message) - 3) n = sizeof(aotnn_error_message) - 3;
    memcpy(aotnn_error_message, kind, n);
    used = n;
    aotnn_error_message[used++] = ':';
    aotnn_error_message[used++] = ' ';
  }
  for (i = 0; i < num_parts; ++i) {
    size_t n;
    if (parts[i] == NULL) continue;
    n = strlen(parts[i]);
    if (used + n >= sizeof(aotnn_error_message)) n = sizeof(aotnn_error_message) - 1 - used;
    memcpy(aotnn_error_message + used, parts[i], n);
    used += n;
  }
  aotnn_error_message[used] = '\0';
}
