/* SPDX-License-Identifier: Apache-2.0 */
/* HPDU's file: a dump written while it is built.
 *
 * Writing 64 MiB to a file takes about as long as building it, and both used to run one after
 * the other on the JDWP thread, with the whole dump in memory in between. Here the build hands
 * every block to a writer thread as soon as the block is final (hprof_dump.c's sink), the writer
 * writes it and hands it back for the build's next block, and the two overlap: the file is done
 * soon after the build, and the memory a dump holds is the blocks the writer has not reached yet
 * plus a few kept for reuse, not the whole file (nor fresh pages for every MiB of it).
 *
 * The writer runs while the world is stopped, so it competes with nothing of the VM's. A failed
 * write ends the build (the sink says it failed) and every later block is freed unwritten. If the
 * thread cannot be started the blocks are written by the JDWP thread as they come, as before. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "profile/hprof_build.h"

typedef struct writer {
  pthread_mutex_t lock;
  pthread_cond_t cv;
  ddmc__prof_hpblk *head, *tail; /* handed over, not written yet */
  int closed;               /* no more blocks will come */
  int threaded;
  pthread_t th;
  int fd;
  const ddmc__mem *mem;
  atomic_int err;     /* errno of the first failed write */
  ddmc__prof_hpblk *spare; /* written, kept for the build's next blocks (at most SPARE_BLOCKS) */
  int nspare;
} writer;

/* Enough for the writer and the build to pass blocks back and forth without either waiting for
 * memory, few enough to stay in the cache. */
#define SPARE_BLOCKS 8

static void recycle(writer *w, ddmc__prof_hpblk *k) {
  ddmc__lock(&w->lock);
  if (w->nspare < SPARE_BLOCKS) {
    k->next = w->spare;
    w->spare = k;
    w->nspare++;
    k = NULL;
  }
  ddmc__unlock(&w->lock);
  if (k != NULL) ddmc__big_free(w->mem, k, sizeof(*k) + DDMC__HPBLK_BYTES);
}

static ddmc__prof_hpblk *spare(void *arg) {
  writer *w = arg;
  ddmc__lock(&w->lock);
  ddmc__prof_hpblk *k = w->spare;
  if (k != NULL) {
    w->spare = k->next;
    w->nspare--;
  }
  ddmc__unlock(&w->lock);
  return k;
}

static void put(writer *w, ddmc__prof_hpblk *chain) {
  for (ddmc__prof_hpblk *k = chain, *next; k != NULL; k = next) {
    next = k->next;
    const uint8_t *p = k->data;
    size_t n = k->len;
    while (n > 0 && atomic_load_explicit(&w->err, memory_order_relaxed) == 0) {
      ssize_t r = write(w->fd, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        atomic_store(&w->err, r < 0 ? errno : EIO);
        break;
      }
      p += r;
      n -= (size_t)r;
    }
    recycle(w, k);
  }
}

static void *run(void *arg) {
  writer *w = arg;
#ifdef __linux__
  pthread_setname_np(pthread_self(), "ddmc-hprof");
#endif
  ddmc__lock(&w->lock);
  for (;;) {
    while (w->head == NULL && !w->closed) pthread_cond_wait(&w->cv, &w->lock);
    ddmc__prof_hpblk *chain = w->head;
    w->head = w->tail = NULL;
    if (chain == NULL) break; /* closed and drained */
    ddmc__unlock(&w->lock);
    put(w, chain);
    ddmc__lock(&w->lock);
  }
  ddmc__unlock(&w->lock);
  return NULL;
}

static void take(void *arg, ddmc__prof_hpblk *chain) {
  writer *w = arg;
  if (!w->threaded) {
    put(w, chain);
    return;
  }
  ddmc__prof_hpblk *last = chain;
  while (last->next != NULL) last = last->next;
  ddmc__lock(&w->lock);
  if (w->tail != NULL)
    w->tail->next = chain;
  else
    w->head = chain;
  w->tail = last;
  pthread_cond_signal(&w->cv);
  ddmc__unlock(&w->lock);
}

static int failed(void *arg) { return atomic_load_explicit(&((writer *)arg)->err, memory_order_relaxed) != 0; }

int ddmc__prof_hprof_write(ddmc_vm *vm, int fd, ddmc__prof_hprof **out, int *werr, char *msg, size_t msglen) {
  writer w;
  memset(&w, 0, sizeof(w));
  w.fd = fd;
  w.mem = &vm->mem;
  atomic_init(&w.err, 0);
  pthread_mutex_init(&w.lock, NULL);
  pthread_cond_init(&w.cv, NULL);
  w.threaded = pthread_create(&w.th, NULL, run, &w) == 0;
  hp_sink sink = {take, failed, spare, &w};
  int rc = ddmc__prof_hp_build(vm, &sink, out, msg, msglen);
  if (w.threaded) {
    ddmc__lock(&w.lock);
    w.closed = 1;
    pthread_cond_signal(&w.cv);
    ddmc__unlock(&w.lock);
    pthread_join(w.th, NULL);
  }
  for (ddmc__prof_hpblk *k = w.spare, *next; k != NULL; k = next) {
    next = k->next;
    ddmc__big_free(w.mem, k, sizeof(*k) + DDMC__HPBLK_BYTES);
  }
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.lock);
  *werr = atomic_load(&w.err);
  return rc;
}
