/*
 * aotnn_backend.c: the hooks TVM-generated kernels call, with libc and pthreads only.
 *
 * TVM kernels reach workspace allocation and parallel launch through function-pointer
 * variables defined inside the kernel library (__TVMBackendAllocWorkspace, ...). This
 * file fills them in when the library is loaded, so a kernel library needs neither
 * libtvm_runtime nor any other runtime. Linked into host kernel libraries by aotnn and
 * compiled into embedded bundles as part of runtime/c.
 *
 * Build options for embedded use:
 *   -DAOTNN_STATIC_WORKSPACE  kernels' scratch memory comes from a static pool that the
 *                             generated model defines (aotnn_workspace_pool), or from the
 *                             block of the arena the model places per kernel
 *                             (aotnn_workspace_place), used as a stack (TVM frees in
 *                             reverse order): no heap at all.
 *   -DAOTNN_NO_THREADS        parallel loops run on the calling thread; no pthreads.
 *   -DAOTNN_NO_CONSTRUCTOR    no constructor installs the hooks (bare metal); the generated
 *                             model calls aotnn_install_backend() itself.
 */
#define _POSIX_C_SOURCE 200112L
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#ifndef AOTNN_NO_THREADS
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#endif

typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

extern void* (*__TVMBackendAllocWorkspace)(int, int, uint64_t, int, int) __attribute__((weak));
extern int (*__TVMBackendFreeWorkspace)(int, int, void*) __attribute__((weak));
extern int (*__TVMBackendParallelLaunch)(FTVMParallelLambda, void*, int) __attribute__((weak));
extern int (*__TVMBackendParallelBarrier)(int, TVMParallelGroupEnv*) __attribute__((weak));

#define AOTNN_MAX_THREADS 64

#ifdef AOTNN_STATIC_WORKSPACE
extern uint8_t aotnn_workspace_pool[];
extern const size_t aotnn_workspace_pool_bytes;
static size_t aotnn_workspace_top = 0;
static uint8_t* aotnn_workspace_base = 0;   /* 0: the pool */
static size_t aotnn_workspace_bytes = 0;

void aotnn_workspace_reset(void) {
  aotnn_workspace_top = 0;
  aotnn_workspace_base = aotnn_workspace_pool;
  aotnn_workspace_bytes = aotnn_workspace_pool_bytes;
}

void aotnn_workspace_place(void* base, size_t bytes) {
  aotnn_workspace_top = 0;
  aotnn_workspace_base = (uint8_t*)base;
  aotnn_workspace_bytes = bytes;
}

static void* aotnn_alloc_workspace(int device_type, int device_id, uint64_t nbytes, int code, int bits) {
  size_t size = (size_t)((nbytes + 63) & ~(uint64_t)63);
  void* ptr;
  (void)device_type; (void)device_id; (void)code; (void)bits;
  if (aotnn_workspace_base == 0) aotnn_workspace_reset();
  if (aotnn_workspace_top + size + sizeof(size_t) * 8 > aotnn_workspace_bytes) return NULL;
  ptr = aotnn_workspace_base + aotnn_workspace_top;
  aotnn_workspace_top += size;
  return ptr;
}

static int aotnn_free_workspace(int device_type, int device_id, void* ptr) {
  (void)device_type; (void)device_id;
  /* stack discipline: freeing a block releases it and everything allocated after it */
  if (ptr != NULL) aotnn_workspace_top = (size_t)((uint8_t*)ptr - aotnn_workspace_base);
  return 0;
}
#else
void aotnn_workspace_reset(void) {}
void aotnn_workspace_place(void* base, size_t bytes) { (void)base; (void)bytes; }

/* Kernels allocate their scratch buffers per parallel task and free them at its end. Blocks
 * above glibc's mmap threshold would be mapped and unmapped each time, a page fault per 4 KB
 * touched: each thread keeps a few freed blocks for the next task instead. A block carries its
 * size in a 64-byte header (the data stays 64-byte aligned). */
#define AOTNN_KEPT_BLOCKS 4
#define AOTNN_HEADER 64
#ifdef AOTNN_NO_THREADS
#define AOTNN_THREAD_LOCAL
#else
#define AOTNN_THREAD_LOCAL __thread
#endif
static AOTNN_THREAD_LOCAL void* aotnn_kept[AOTNN_KEPT_BLOCKS];

static size_t aotnn_block_size(void* block) { return *(size_t*)block; }

static void* aotnn_alloc_workspace(int device_type, int device_id, uint64_t nbytes, int code, int bits) {
  size_t size = (size_t)((nbytes + 4095) & ~(uint64_t)4095);
  void* block = NULL;
  int i, best = -1;
  (void)device_type; (void)device_id; (void)code; (void)bits;
  for (i = 0; i < AOTNN_KEPT_BLOCKS; ++i) {  /* the smallest kept block that is large enough */
    if (aotnn_kept[i] != NULL && aotnn_block_size(aotnn_kept[i]) >= size &&
        (best < 0 || aotnn_block_size(aotnn_kept[i]) < aotnn_block_size(aotnn_kept[best]))) best = i;
  }
  if (best >= 0) {
    block = aotnn_kept[best];
    aotnn_kept[best] = NULL;
    return (uint8_t*)block + AOTNN_HEADER;
  }
  if (posix_memalign(&block, 64, size + AOTNN_HEADER) != 0) return NULL;
  *(size_t*)block = size;
  return (uint8_t*)block + AOTNN_HEADER;
}

static int aotnn_free_workspace(int device_type, int device_id, void* ptr) {
  void* block;
  int i, smallest = 0;
  (void)device_type; (void)device_id;
  if (ptr == NULL) return 0;
  block = (uint8_t*)ptr - AOTNN_HEADER;
  for (i = 0; i < AOTNN_KEPT_BLOCKS; ++i) {
    if (aotnn_kept[i] == NULL) {
      aotnn_kept[i] = block;
      return 0;
    }
    if (aotnn_block_size(aotnn_kept[i]) < aotnn_block_size(aotnn_kept[smallest])) smallest = i;
  }
  /* all slots taken: keep the larger of this block and the smallest kept one */
  if (aotnn_block_size(aotnn_kept[smallest]) < aotnn_block_size(block)) {
    void* evicted = aotnn_kept[smallest];
    aotnn_kept[smallest] = block;
    block = evicted;
  }
  free(block);
  return 0;
}
#endif

#ifdef AOTNN_NO_THREADS
int aotnn_get_num_threads(void) { return 1; }
void aotnn_set_num_threads(int count) { (void)count; }
void aotnn_wake_workers(void) {}
void aotnn_prefetch_hint(const void* const* bases, const uint64_t* sizes, int count) {
  (void)bases; (void)sizes; (void)count;
}
void aotnn_parallel_hint(const int32_t* extents, int count) { (void)extents; (void)count; }

static int aotnn_parallel_launch(FTVMParallelLambda job, void* cdata, int num_task) {
  TVMParallelGroupEnv env = {NULL, 1};
  (void)num_task;
  return job(0, &env, cdata);
}

static int aotnn_parallel_barrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id; (void)penv;
  return 0;
}
#else

/* A persistent pool: workers poll for a while after a launch, then sleep on a condition variable.
 *
 * A launch cuts the kernel's parallel loop into tasks and gives each thread, the caller included,
 * an equal run of them: a thread claims tasks from the front of its own run, and a thread whose
 * run is done takes tasks from the back of another's. Balanced threads thus keep the same rows
 * from kernel to kernel (what one wrote is in its cache when the next kernel reads it), and a
 * thread slowed down by a neighbour on a shared machine hands its last tasks to the other; a
 * worker that has not started when the caller runs out of work leaves all of its run to the
 * caller, which never waits for a worker that has not started. A run is one 64-bit word,
 * (generation << 32 | first << 16 | end), claimed by compare-and-swap, so a worker that wakes up
 * late cannot claim a task of a later launch with this one's job. Kernels see the tasks as
 * (task_id, num_task); the default schedules use no barriers, which need all tasks to run at once.
 *
 * How many tasks: TVM cuts a loop of n iterations into chunks of ceil(n / num_task) and the
 * launch does not say n. The step runner (aotnn_steps.c) does: it names the extents of the next
 * kernel's parallel loops (aotnn_parallel_hint), and a launch with a known extent cuts it into up
 * to AOTNN_TASKS_PER_THREAD tasks per thread. Without one, one task per thread: more would split
 * small loops unevenly (14 rows in 8 chunks of 2 leave one thread 8 rows and the other 6;
 * MobileNetV2's 14- and 28-row kernels ran 12-17% faster with one chunk per thread than with four).
 * Measured on MobileNetV2 (2 vCPUs, a busy hour, alternating runs): the caller's wait for the
 * worker 300 -> 170 us per inference (median), the inference 0.975 of its time. */
#ifndef AOTNN_TASKS_PER_THREAD
#define AOTNN_TASKS_PER_THREAD 32
#endif

/* A model is a run of kernels launched back to back. Sleeping on a condition variable between
 * them costs a futex wake-up per launch (tens of microseconds in a virtual machine, where the
 * idle vCPU must be woken too), so a thread that runs out of work first polls for
 * AOTNN_SPIN_NS - long enough to cover a single-threaded kernel and the caller's dispatch
 * between two parallel ones - then sleeps. The bound keeps an idle pool off a shared machine's
 * cores. Measured on MobileNetV2 (2 vCPUs, alternating runs): about 7.0 -> 6.5 ms per inference. */
#ifndef AOTNN_SPIN_NS
#define AOTNN_SPIN_NS 200000L
#endif
#define AOTNN_POLLS_PER_CLOCK 64
#if defined(__x86_64__) || defined(__i386__)
#define AOTNN_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__) || defined(__arm__)
#define AOTNN_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define AOTNN_CPU_RELAX() ((void)0)
#endif

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_cond_t done;
  pthread_t threads[AOTNN_MAX_THREADS];
  int started;            /* worker threads created */
  int num_threads;        /* threads a launch uses, the caller included */
  unsigned long generation;
  FTVMParallelLambda job;
  void* cdata;
  TVMParallelGroupEnv env;
  int workers;            /* workers the current launch may use */
  int launch_threads;     /* threads the current launch uses, the caller included */
  int finished;           /* tasks done */
  int status;
  /* barrier state */
  int barrier_count;
  unsigned long barrier_generation;
  pthread_cond_t barrier_cond;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          {0}, 0, 0, 0, NULL, NULL, {NULL, 0}, 0, 0, 0, 0, 0, 0, PTHREAD_COND_INITIALIZER};

/* Each thread's run of tasks, (generation << 32 | first << 16 | end), one cache line each. */
static struct {
  uint64_t word;
  char pad[64 - sizeof(uint64_t)];
} aotnn_runs[AOTNN_MAX_THREADS] __attribute__((aligned(64)));

/* The next task of launch `tag` for thread `self`: the front of its own run, else the back of
 * another's; -1 when none is left. */
static int aotnn_claim(uint32_t tag, int self, int threads) {
  for (int k = 0; k < threads; k++) {
    int owner = (self + k) % threads;
    uint64_t seen = __atomic_load_n(&aotnn_runs[owner].word, __ATOMIC_ACQUIRE);
    for (;;) {
      uint32_t first = (uint32_t)(seen >> 16) & 0xffff, end = (uint32_t)seen & 0xffff;
      if ((uint32_t)(seen >> 32) != tag || first >= end) break;
      uint64_t claimed = k == 0 ? seen + ((uint64_t)1 << 16) : seen - 1;
      if (__atomic_compare_exchange_n(&aotnn_runs[owner].word, &seen, claimed, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        return k == 0 ? (int)first : (int)end - 1;
      }
    }
  }
  return -1;
}

/* Claims and runs tasks of launch `tag` until none is left; returns how many it ran. The count
 * of finished tasks is shared by all threads: each adds its own once, when it runs out. */
static int aotnn_run_tasks(uint32_t tag, int self, int threads, FTVMParallelLambda job, void* cdata,
                            TVMParallelGroupEnv* env) {
  int ran = 0, task;
  while ((task = aotnn_claim(tag, self, threads)) >= 0) {
    int rc = job(task, env, cdata);
    if (rc != 0) __atomic_store_n(&pool.status, rc, __ATOMIC_RELAXED);
    ran++;
  }
  if (ran > 0 && __atomic_add_fetch(&pool.finished, ran, __ATOMIC_ACQ_REL) == env->num_task) {
    pthread_mutex_lock(&pool.lock);
    pthread_cond_signal(&pool.done);
    pthread_mutex_unlock(&pool.lock);
  }
  return ran;
}

static long aotnn_now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long)now.tv_sec * 1000000000L + now.tv_nsec;
}

static int aotnn_generation_moved(long seen) {
  return __atomic_load_n(&pool.generation, __ATOMIC_ACQUIRE) != (unsigned long)seen;
}

static int aotnn_tasks_finished(long count) {
  return __atomic_load_n(&pool.finished, __ATOMIC_ACQUIRE) >= (int)count;
}

/* Idle threads prefetch the next kernel's weights.
 *
 * A model's weights do not stay in the caches from one inference to the next (MobileNetV2:
 * 14 MB), and a kernel that starts on weights in DRAM waits for them: MobileNetV2's 7x7 1x1
 * convolutions and classifier ran 15-30% faster on weights read just before. The step runner
 * (aotnn_steps.c) names the next kernel's weights before each launch; a thread polling for
 * work (a worker between launches, the caller waiting for the workers' chunks, a worker left
 * idle by a single-threaded kernel) prefetches them a few cache lines at a time. Prefetches
 * never fault, so a stale range read while the runner replaces it is harmless. */
#define AOTNN_PREFETCH_RANGES 8
#define AOTNN_PREFETCH_CLAIM 512  /* bytes per claim: 8 cache lines */
static const char* aotnn_prefetch_base[AOTNN_PREFETCH_RANGES];
static uint64_t aotnn_prefetch_size[AOTNN_PREFETCH_RANGES];
static int aotnn_prefetch_count;
static uint64_t aotnn_prefetch_total;   /* bytes in the ranges */
static uint64_t aotnn_prefetch_cursor;  /* bytes claimed so far, over the ranges in order */

void aotnn_prefetch_hint(const void* const* bases, const uint64_t* sizes, int count) {
  uint64_t total = 0;
  if (count > AOTNN_PREFETCH_RANGES) count = AOTNN_PREFETCH_RANGES;
  __atomic_store_n(&aotnn_prefetch_count, 0, __ATOMIC_RELEASE);
  for (int i = 0; i < count; i++) {
    aotnn_prefetch_base[i] = (const char*)bases[i];
    aotnn_prefetch_size[i] = sizes[i];
    total += sizes[i];
  }
  __atomic_store_n(&aotnn_prefetch_total, total, __ATOMIC_RELAXED);
  __atomic_store_n(&aotnn_prefetch_cursor, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&aotnn_prefetch_count, count, __ATOMIC_RELEASE);
}

/* Prefetches the next unclaimed piece of the hinted ranges; 0 when nothing is left. */
static int aotnn_prefetch_some(void) {
  int count = __atomic_load_n(&aotnn_prefetch_count, __ATOMIC_ACQUIRE);
  if (count == 0) return 0;
  if (__atomic_load_n(&aotnn_prefetch_cursor, __ATOMIC_RELAXED) >= __atomic_load_n(&aotnn_prefetch_total, __ATOMIC_RELAXED)) {
    return 0;
  }
  uint64_t offset = __atomic_fetch_add(&aotnn_prefetch_cursor, AOTNN_PREFETCH_CLAIM, __ATOMIC_RELAXED);
  for (int i = 0; i < count; i++) {
    uint64_t size = aotnn_prefetch_size[i];
    if (offset < size) {
      const char* at = aotnn_prefetch_base[i] + offset;
      uint64_t left = size - offset < AOTNN_PREFETCH_CLAIM ? size - offset : AOTNN_PREFETCH_CLAIM;
      for (uint64_t line = 0; line < left; line += 64) __builtin_prefetch(at + line, 0, 2);
      return 1;
    }
    offset -= size;
  }
  return 0;
}

/* Polls `ready(arg)` until it holds (1) or AOTNN_SPIN_NS pass (0), prefetching while it waits. */
static int aotnn_poll(int (*ready)(long), long arg) {
  long deadline = aotnn_now_ns() + AOTNN_SPIN_NS;
  for (;;) {
    for (int i = 0; i < AOTNN_POLLS_PER_CLOCK; i++) {
      if (ready(arg)) return 1;
      if (!aotnn_prefetch_some()) AOTNN_CPU_RELAX();
    }
    if (aotnn_now_ns() > deadline) return 0;
  }
}

static void* aotnn_worker(void* arg) {
  int worker_id = (int)(intptr_t)arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    while (pool.generation == seen || worker_id > pool.workers) {
      if (pool.generation != seen) seen = pool.generation; /* launch that does not need us */
      pthread_cond_wait(&pool.wake, &pool.lock);
    }
    seen = pool.generation;
    FTVMParallelLambda job = pool.job;
    void* cdata = pool.cdata;
    TVMParallelGroupEnv env = pool.env;
    int threads = pool.launch_threads;
    pthread_mutex_unlock(&pool.lock);
    if (job != NULL) aotnn_run_tasks((uint32_t)seen, worker_id, threads, job, cdata, &env);
    aotnn_poll(aotnn_generation_moved, (long)seen);  /* the next launch, or sleep */
    pthread_mutex_lock(&pool.lock);
  }
  return NULL;
}

int aotnn_get_num_threads(void) {
  if (pool.num_threads <= 0) {
    const char* env = getenv("AOTNN_NUM_THREADS");
    long count = env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (count < 1) count = 1;
    if (count > AOTNN_MAX_THREADS) count = AOTNN_MAX_THREADS;
    pool.num_threads = (int)count;
  }
  return pool.num_threads;
}

void aotnn_set_num_threads(int count) {
  if (count < 1) count = 1;
  if (count > AOTNN_MAX_THREADS) count = AOTNN_MAX_THREADS;
  pthread_mutex_lock(&pool.lock);
  pool.num_threads = count;
  pthread_mutex_unlock(&pool.lock);
}

/* One launch at a time: a process may run kernels of one library from several threads (two
 * models of one artifact, a server's request threads), and a launch owns the pool's job, claim
 * and finish count until its last chunk is done. */
static pthread_mutex_t aotnn_launch_lock = PTHREAD_MUTEX_INITIALIZER;

/* Called when a model run is about to start (the runtime does so before checking and copying its
 * inputs): workers asleep since the last run start polling now, so the first kernel's launch finds
 * them awake instead of paying a futex wake-up (tens of microseconds in a virtual machine, most of
 * which the first kernel's caller would spend waiting for the late worker's chunk). A launch with
 * no chunks: workers wake, find nothing to claim, and poll for the next launch. */
void aotnn_wake_workers(void) {
  if (pthread_mutex_trylock(&aotnn_launch_lock) != 0) return;  /* a launch is running: they are awake */
  pthread_mutex_lock(&pool.lock);
  int workers = aotnn_get_num_threads() - 1;
  if (workers > pool.started) workers = pool.started;
  if (workers > 0) {
    __atomic_store_n(&pool.generation, pool.generation + 1, __ATOMIC_RELEASE);
    pool.job = NULL;
    pool.cdata = NULL;
    pool.env.num_task = 0;
    pool.workers = workers;
    pool.launch_threads = 0;
    pthread_cond_broadcast(&pool.wake);
  }
  pthread_mutex_unlock(&pool.lock);
  pthread_mutex_unlock(&aotnn_launch_lock);
}

/* The extents of the parallel loops of the kernel this thread runs next, in launch order. */
static __thread const int32_t* aotnn_hint_extents;
static __thread int aotnn_hint_count;

void aotnn_parallel_hint(const int32_t* extents, int count) {
  aotnn_hint_extents = count > 0 ? extents : NULL;
  aotnn_hint_count = count > 0 ? count : 0;
}

static int aotnn_next_extent(void) {
  if (aotnn_hint_count <= 0) return 0;
  aotnn_hint_count--;
  return *aotnn_hint_extents++;
}

/* Tasks for a loop of `extent` iterations (0: unknown) on `threads` threads: one per thread
 * without an extent, else chunks of ceil(extent / tasks) iterations, at most
 * AOTNN_TASKS_PER_THREAD per thread, none of them empty. */
static int aotnn_task_count(int extent, int threads) {
  if (extent <= 0) return threads;
  int most = AOTNN_TASKS_PER_THREAD * threads;
  int tasks = extent < most ? extent : most;
  int step = (extent + tasks - 1) / tasks;
  return (extent + step - 1) / step;
}

static int aotnn_pooled_launch(FTVMParallelLambda job, void* cdata, int threads, int extent);

static int aotnn_parallel_launch(FTVMParallelLambda job, void* cdata, int num_task) {
  int extent = aotnn_next_extent();
  int threads = aotnn_get_num_threads();
  if (num_task <= 0 || num_task > threads) num_task = threads;
  if (num_task == 1 || extent == 1) {
    TVMParallelGroupEnv env = {NULL, 1};
    return job(0, &env, cdata);
  }
  pthread_mutex_lock(&aotnn_launch_lock);
  int rc = aotnn_pooled_launch(job, cdata, num_task, extent);
  pthread_mutex_unlock(&aotnn_launch_lock);
  return rc;
}

static int aotnn_pooled_launch(FTVMParallelLambda job, void* cdata, int threads, int extent) {
  pthread_mutex_lock(&pool.lock);
  while (pool.started < threads - 1) {
    int id = pool.started + 1;
    if (pthread_create(&pool.threads[pool.started], NULL, aotnn_worker, (void*)(intptr_t)id) != 0) break;
    pool.started++;
  }
  if (threads > pool.started + 1) threads = pool.started + 1;
  if (threads == 1) {
    pthread_mutex_unlock(&pool.lock);
    TVMParallelGroupEnv env = {NULL, 1};
    return job(0, &env, cdata);
  }
  __atomic_store_n(&pool.generation, pool.generation + 1, __ATOMIC_RELEASE);
  uint32_t tag = (uint32_t)pool.generation;
  int tasks = aotnn_task_count(extent, threads);
  for (int t = 0; t < threads; t++) {
    uint64_t first = (uint64_t)tasks * t / threads, end = (uint64_t)tasks * (t + 1) / threads;
    __atomic_store_n(&aotnn_runs[t].word, (uint64_t)tag << 32 | first << 16 | end, __ATOMIC_RELEASE);
  }
  pool.job = job;
  pool.cdata = cdata;
  pool.env.num_task = tasks;
  pool.env.sync_handle = NULL;
  pool.workers = threads - 1;
  pool.launch_threads = threads;
  pool.status = 0;
  pool.barrier_count = 0;
  __atomic_store_n(&pool.finished, 0, __ATOMIC_RELAXED);
  TVMParallelGroupEnv env = pool.env;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);

  aotnn_run_tasks(tag, 0, threads, job, cdata, &env);

  aotnn_poll(aotnn_tasks_finished, env.num_task);  /* the workers' tasks, or sleep */
  pthread_mutex_lock(&pool.lock);
  while (__atomic_load_n(&pool.finished, __ATOMIC_ACQUIRE) < env.num_task) pthread_cond_wait(&pool.done, &pool.lock);
  int rc = pool.status;
  pthread_mutex_unlock(&pool.lock);
  return rc;
}

static int aotnn_parallel_barrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id;
  pthread_mutex_lock(&pool.lock);
  unsigned long generation = pool.barrier_generation;
  if (++pool.barrier_count == penv->num_task) {
    pool.barrier_count = 0;
    pool.barrier_generation++;
    pthread_cond_broadcast(&pool.barrier_cond);
  } else {
    while (generation == pool.barrier_generation) pthread_cond_wait(&pool.barrier_cond, &pool.lock);
  }
  pthread_mutex_unlock(&pool.lock);
  return 0;
}

#endif  /* AOTNN_NO_THREADS */

/* Exported too: in a process that has libtvm_runtime loaded (the compiler's), TVM's library loader
 * overwrites these hooks with its own thread pool (half the cores by default) after our constructor
 * ran; calling this again after loading puts this file's pool back. */
void aotnn_install_backend(void) {
  if (&__TVMBackendAllocWorkspace) __TVMBackendAllocWorkspace = aotnn_alloc_workspace;
  if (&__TVMBackendFreeWorkspace) __TVMBackendFreeWorkspace = aotnn_free_workspace;
  if (&__TVMBackendParallelLaunch) __TVMBackendParallelLaunch = aotnn_parallel_launch;
  if (&__TVMBackendParallelBarrier) __TVMBackendParallelBarrier = aotnn_parallel_barrier;
}

#ifndef AOTNN_NO_CONSTRUCTOR  /* bare metal: start-up code runs no .init_array; the model calls it */
__attribute__((constructor)) static void aotnn_install_backend_on_load(void) { aotnn_install_backend(); }
#endif
