/* SPDX-License-Identifier: Apache-2.0 */
/* The library's allocator: the VM's ddmc_allocator if it gave one, libc otherwise.
 * All library allocations go through here so a VM can account for them and tests can fail the
 * Nth one. ddmc__free keeps errno because callers often free on an error path and then report
 * errno. */
#include <sys/mman.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "common.h"

static void *libc_malloc(void *ud, size_t n) {
  (void)ud;
  return malloc(n);
}
static void *libc_realloc(void *ud, void *p, size_t n) {
  (void)ud;
  return realloc(p, n);
}
static void libc_free(void *ud, void *p) {
  (void)ud;
  free(p);
}

void ddmc__mem_init(ddmc__mem *m, const ddmc_allocator *user) {
  if (user != NULL && user->malloc != NULL && user->realloc != NULL && user->free != NULL) {
    m->a = *user;
  } else {
    m->a.ud = NULL;
    m->a.malloc = libc_malloc;
    m->a.realloc = libc_realloc;
    m->a.free = libc_free;
  }
}

void *ddmc__big_alloc(const ddmc__mem *m, size_t n) {
  if (m->a.malloc != libc_malloc) return ddmc__malloc(m, n); /* the VM's allocator sees it all */
  /* Fresh pages faulted in one at a time were 45 % of a heap dump on a paravirtualized guest
   * (each first touch traps to the hypervisor); MAP_POPULATE maps them in one call. */
  void *p = mmap(NULL, n == 0 ? 1 : n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void ddmc__big_free(const ddmc__mem *m, void *p, size_t n) {
  if (p == NULL) return;
  if (m->a.malloc != libc_malloc) {
    ddmc__free(m, p);
    return;
  }
  int saved = errno;
  munmap(p, n == 0 ? 1 : n);
  errno = saved;
}

void *ddmc__malloc(const ddmc__mem *m, size_t n) { return m->a.malloc(m->a.ud, n == 0 ? 1 : n); }

void *ddmc__calloc(const ddmc__mem *m, size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  void *p = ddmc__malloc(m, count * size);
  if (p != NULL) memset(p, 0, count * size);
  return p;
}

void *ddmc__realloc(const ddmc__mem *m, void *p, size_t n) { return m->a.realloc(m->a.ud, p, n == 0 ? 1 : n); }

void ddmc__free(const ddmc__mem *m, void *p) {
  if (p == NULL) return;
  int saved = errno;
  m->a.free(m->a.ud, p);
  errno = saved;
}

char *ddmc__strdup(const ddmc__mem *m, const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *d = ddmc__malloc(m, n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

void ddmc__mem_trim(const ddmc__mem *m) {
#ifdef __GLIBC__
  if (m->a.free == libc_free) malloc_trim(0);
#else
  (void)m;
#endif
}
