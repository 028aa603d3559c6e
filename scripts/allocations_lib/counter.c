// Counts heap allocations per thread of the process it is preloaded into
// (LD_PRELOAD), and every 200 ms writes "tid name count" lines for each thread that has
// allocated to the file named by INTERCOM_ALLOCATIONS_REPORT (replaced whole, through a
// temporary file and rename). Allocations are passed on to glibc's own functions.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define SLOTS 256

struct slot {
    _Atomic pid_t tid;
    _Atomic uint64_t count;
};

static struct slot slots[SLOTS];
static _Atomic int used;
static __thread struct slot *mine;
static __thread int overflowed;

static void counted(void) {
    if (!mine && !overflowed) {
        int index = atomic_fetch_add(&used, 1);
        if (index >= SLOTS) {
            overflowed = 1;
            return;
        }
        mine = &slots[index];
        atomic_store(&mine->tid, (pid_t)syscall(SYS_gettid));
    }
    if (mine) atomic_fetch_add_explicit(&mine->count, 1, memory_order_relaxed);
}

void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { counted(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { counted(); return __libc_realloc(pointer, size); }
void free(void *pointer) { __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    counted();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return 12; // ENOMEM
    *out = pointer;
    return 0;
}

// The reporter formats into fixed buffers with snprintf, which does not allocate for these
// conversions; its own thread's allocations, if any, are counted like any other's.
static void report(const char *path) {
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    int file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (file < 0) return;
    int count = atomic_load(&used);
    if (count > SLOTS) count = SLOTS;
    for (int i = 0; i < count; i++) {
        pid_t tid = atomic_load(&slots[i].tid);
        if (!tid) continue;
        char comm_path[64], name[64] = "?";
        snprintf(comm_path, sizeof comm_path, "/proc/self/task/%d/comm", (int)tid);
        int comm = open(comm_path, O_RDONLY | O_CLOEXEC);
        if (comm >= 0) {
            ssize_t n = read(comm, name, sizeof name - 1);
            close(comm);
            if (n > 0) {
                name[n] = 0;
                name[strcspn(name, "\n")] = 0;
            } else {
                strcpy(name, "?");
            }
        } else {
            strcpy(name, "(ended)");
        }
        char line[160];
        int length = snprintf(line, sizeof line, "%d %s %llu\n", (int)tid, name,
                              (unsigned long long)atomic_load_explicit(&slots[i].count, memory_order_relaxed));
        if (write(file, line, (size_t)length) != length) break;
    }
    close(file);
    rename(temporary, path);
}

static void *reporter(void *path) {
    for (;;) {
        report(path);
        usleep(200000);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("INTERCOM_ALLOCATIONS_REPORT");
    if (!path || !*path) return;
    static char kept[4000];
    snprintf(kept, sizeof kept, "%s", path);
    pthread_t thread;
    if (pthread_create(&thread, NULL, reporter, kept) == 0) pthread_detach(thread);
}
