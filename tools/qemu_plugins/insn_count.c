/* A QEMU TCG plugin (plugin API version 1, QEMU 7.x) that counts executed guest instructions.
 *
 * Arguments: mark=ADDR (hex, repeatable). Each time the instruction at a marked address runs, the
 * count of instructions executed before it is recorded. At exit it prints
 *   insn_count total N
 *   insn_count mark ADDR N        (one line per execution of a marked instruction, in order)
 * so the instructions between two marks are the difference of their counts.
 * With the argument profile=1 it also counts each guest instruction address and prints
 *   insn_count pc ADDR N          (one line per executed address; an address translated twice may
 *                                  appear twice: sum them)
 *
 * Only the handful of API entry points it uses are declared here (their C ABI is stable within
 * plugin API version 1); QEMU checks qemu_plugin_version when it loads the plugin.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu_index, void* userdata);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void* userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn* insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn* insn, enum qemu_plugin_op op,
                                                void* ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn* insn, vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void* userdata);
void qemu_plugin_outs(const char* string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

enum { MAX_MARKS = 16, MAX_HITS = 4096 };
static uint64_t executed;  /* one guest CPU (the Cortex-M models and qemu-user's main thread) */
static uint64_t marks[MAX_MARKS];
static int n_marks;
static uint64_t hit_addr[MAX_HITS], hit_count[MAX_HITS];
static int n_hits;

/* profile=1: one counter per translated instruction, kept in chunks so that their addresses stay fixed */
enum { PROFILE_CHUNK = 65536 };
struct pc_count { uint64_t vaddr, count; };
struct profile_chunk { struct pc_count slots[PROFILE_CHUNK]; int used; struct profile_chunk* next; };
static int profiling;
static struct profile_chunk* profile_head;

static uint64_t* profile_slot(uint64_t vaddr) {
  struct profile_chunk* chunk = profile_head;
  if (chunk == NULL || chunk->used == PROFILE_CHUNK) {
    chunk = calloc(1, sizeof *chunk);
    if (chunk == NULL) return NULL;
    chunk->next = profile_head;
    profile_head = chunk;
  }
  chunk->slots[chunk->used].vaddr = vaddr;
  return &chunk->slots[chunk->used++].count;
}

static void on_mark(unsigned int vcpu_index, void* userdata) {
  (void)vcpu_index;
  if (n_hits < MAX_HITS) {
    hit_addr[n_hits] = (uint64_t)(uintptr_t)userdata;
    hit_count[n_hits++] = executed;
  }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  size_t i, n = qemu_plugin_tb_n_insns(tb);
  int m;
  (void)id;
  for (i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
    for (m = 0; m < n_marks; ++m)
      if (marks[m] == vaddr)  /* before the count of this instruction: the mark sees what ran before */
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, (void*)(uintptr_t)vaddr);
    qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &executed, 1);
    if (profiling) {
      uint64_t* slot = profile_slot(vaddr);
      if (slot != NULL) qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, slot, 1);
    }
  }
}

static void report_counts(qemu_plugin_id_t id, void* userdata) {
  char line[96];
  int i;
  (void)id;
  (void)userdata;
  snprintf(line, sizeof line, "insn_count total %" PRIu64 "\n", executed);
  qemu_plugin_outs(line);
  for (i = 0; i < n_hits; ++i) {
    snprintf(line, sizeof line, "insn_count mark 0x%" PRIx64 " %" PRIu64 "\n", hit_addr[i], hit_count[i]);
    qemu_plugin_outs(line);
  }
  for (struct profile_chunk* chunk = profile_head; chunk != NULL; chunk = chunk->next)
    for (i = 0; i < chunk->used; ++i)
      if (chunk->slots[i].count != 0) {
        snprintf(line, sizeof line, "insn_count pc 0x%" PRIx64 " %" PRIu64 "\n", chunk->slots[i].vaddr,
                 chunk->slots[i].count);
        qemu_plugin_outs(line);
      }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                               int argc, char** argv) {
  int i;
  (void)info;
  for (i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "profile=1") == 0) {
      profiling = 1;
      continue;
    }
    if (strncmp(argv[i], "mark=", 5) != 0 || n_marks == MAX_MARKS) {
      fprintf(stderr, "insn_count: unknown or too many arguments at %s (expected mark=HEXADDR, at most %d, "
              "or profile=1)\n", argv[i], MAX_MARKS);
      return -1;
    }
    marks[n_marks++] = strtoull(argv[i] + 5, NULL, 16);
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, report_counts, NULL);
  return 0;
}
