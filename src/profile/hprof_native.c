/* SPDX-License-Identifier: Apache-2.0 */
/* Heap dumps by the VM's own dumper: the bridge's write_hprof writes its hprof into a directory
 * of the library's (mkdtemp, 0700), the library opens the file and removes it and the directory
 * at once (the open descriptor keeps the bytes until the dump is sent), and hprof_conv.c turns it
 * into Android's 1.0.3: its first pass reads the file while the VM writes it, its second as HPDU
 * writes it or HPDS streams it. A VM whose dumper is faster than a walk through the bridge's ops
 * (HotSpot's, through JVM TI tags, is 10-30x slower) answers heap dumps at about the speed of its
 * own dumper. Memory: hprof_conv.h's bound; the dump itself is on disk (TMPDIR, or /tmp), never
 * whole in memory, and its pages are given back as the second pass reads them. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/hprof.h"
#include "profile/hprof_conv.h"
#include "lock.h"

/* The dumper's progress, as the first pass sees it. */
enum { DUMPING, DUMPED, FAILED };

struct ddmc__prof_hpnat {
  ddmc_vm *vm;
  int fd; /* the VM's file, opened by the first pass */
  atomic_int dumper;
  char path[544];
  ddmc__prof_hpconv *conv;
  uint64_t len;
  int rc; /* the first pass's */
  char why[256];
  int freeing;         /* the second pass: the file's pages behind it are given back */
  uint64_t pos, freed; /* where it reads; the bytes given back before that */
};

int ddmc__prof_hprof_native(const ddmc_vm *vm) {
  const ddmc_vm_bridge *o = ddmc__bridge(vm);
  return o != NULL && o->write_hprof != NULL;
}

static int in_fill(void *arg, uint8_t *dst, size_t cap, size_t *got) {
  int fd = *(int *)arg;
  for (;;) {
    ssize_t r = read(fd, dst, cap);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    *got = (size_t)r;
    return 0;
  }
}

static int in_skip(void *arg, uint64_t n) { return lseek(*(int *)arg, (off_t)n, SEEK_CUR) < 0 ? errno : 0; }

static int in_rewind(void *arg) { return lseek(*(int *)arg, 0, SEEK_SET) < 0 ? errno : 0; }

/* read() into the converter's buffer, not a mapping of the file: on the bench machine a mapped
 * 82 MiB file cost 57-81 ms of CPU to touch against 10-13 ms to read and touch, and the whole
 * conversion 183-227 ms against 68-106 (bench/RESULTS.md; probably a fault or TLB miss per 4 KiB
 * page of the mapping, where the kernel copies from its own map of the page cache). */
ddmc__prof_hpconv_input ddmc__prof_hpfile_input(int *fd) {
  return (ddmc__prof_hpconv_input){in_fill, in_skip, in_rewind, fd, NULL};
}

/* ---- the first pass beside the dumper: it reads the file as the VM writes it, so a dump costs
 * the dumper's time plus the second pass, not plus both (on two CPUs; HotSpot's dumper of JDK 17
 * writes on one). The file only grows: a read that finds no more while the VM still writes
 * waits a millisecond and reads again. A dumper that goes back to write a length it left 0
 * (JDK 8-11's heap dump records) makes this pass fail (hprof_conv.h's growing), and it runs
 * again over the finished file; should the file change in any other way, the second pass finds
 * it (DDMC_EIO), as it would for any file changed under it. */

static void nap(void) {
  struct timespec ts = {0, 1000000};
  nanosleep(&ts, NULL);
}

/* The second pass never reads a byte twice: the pages of the file behind it go back to the
 * system as it goes (a hole punched in the file, already removed from its directory), so the
 * dump's own output reuses them rather than taking as many new ones. On the bench machine (a
 * virtual machine's guest) pages the guest has not used lately cost 2-4 us each to fill: the
 * second pass of a 1 GiB heap's dump took 0.5-0.8 s with the holes and 2.2-2.5 s without
 * (bench/RESULTS.md). Where the file system has no holes, nothing is given back early (the pages
 * go when the file is closed). */
enum { FREE_STEP = 4 << 20 };

static void give_back(ddmc__prof_hpnat *h) {
#ifdef FALLOC_FL_PUNCH_HOLE
  if (!h->freeing || h->pos - h->freed < FREE_STEP) return;
  uint64_t upto = h->pos & ~(uint64_t)(FREE_STEP - 1);
  if (fallocate(h->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)h->freed, (off_t)(upto - h->freed)) != 0)
    h->freeing = 0;
  h->freed = upto;
#else
  (void)h;
#endif
}

static int follow_fill(void *arg, uint8_t *dst, size_t cap, size_t *got) {
  ddmc__prof_hpnat *h = arg;
  for (;;) {
    int state = atomic_load(&h->dumper); /* before the read: a read of nothing after DUMPED is the end */
    if (state == FAILED) return ECANCELED;
    ssize_t r = read(h->fd, dst, cap);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno;
    if (r > 0 || state == DUMPED) {
      *got = (size_t)r;
      h->pos += (uint64_t)r;
      give_back(h);
      return 0;
    }
    nap();
  }
}

static int follow_skip(void *arg, uint64_t n) {
  ddmc__prof_hpnat *h = arg;
  h->pos += n;
  return in_skip(&h->fd, n);
}

static int follow_rewind(void *arg) {
  ddmc__prof_hpnat *h = arg;
  h->pos = 0;
  return in_rewind(&h->fd);
}

static int follow_growing(void *arg) { return atomic_load(&((ddmc__prof_hpnat *)arg)->dumper) == DUMPING; }

static void first_pass(ddmc__prof_hpnat *h) {
  while (h->fd < 0) {
    int state = atomic_load(&h->dumper);
    if (state == FAILED) return;
    /* Read and write: a hole is punched only through a descriptor open for writing. */
    h->fd = open(h->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (h->fd < 0 && errno == EACCES) h->fd = open(h->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (h->fd >= 0) break;
    if (errno != ENOENT || state == DUMPED) {
      h->rc = DDMC_EIO;
      snprintf(h->why, sizeof h->why, "heap dump: the VM's dumper wrote no file (%s)", strerror(errno));
      return;
    }
    nap();
  }
#ifdef POSIX_FADV_SEQUENTIAL
  (void)posix_fadvise(h->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  ddmc__prof_hpconv_input in = {follow_fill, follow_skip, follow_rewind, h, follow_growing};
  h->rc = ddmc__prof_hpconv_open(&h->vm->mem, &in, &h->conv, &h->len, h->why, sizeof h->why);
}

static void *first_pass_thread(void *arg) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), "ddmc-hprof");
#endif
  first_pass(arg);
  return NULL;
}

/* The VM writes its dump into a fresh private directory while the first pass reads it; the file
 * and the directory are gone when this returns. 0, or a DDMC_E* with why in msg. */
static int vm_dump(ddmc__prof_hpnat *h, char *msg, size_t msglen) {
  const char *tmp = getenv("TMPDIR");
  char dir[512];
  if (tmp == NULL || tmp[0] != '/' || strlen(tmp) > 400) tmp = "/tmp";
  snprintf(dir, sizeof dir, "%s/ddmc-hprof-XXXXXX", tmp);
  if (mkdtemp(dir) == NULL) {
    snprintf(msg, msglen, "heap dump: cannot make a directory in %s: %s", tmp, strerror(errno));
    return DDMC_EIO;
  }
  snprintf(h->path, sizeof h->path, "%s/heap.hprof", dir);
  atomic_store(&h->dumper, DUMPING);
  pthread_t th;
  int beside = pthread_create(&th, NULL, first_pass_thread, h) == 0;
  int64_t t0 = ddmc__now_ms();
  char why[256] = "";
  int rc = ddmc__bridge(h->vm)->write_hprof(h->vm->bridge_data, h->path, why, sizeof why);
  atomic_store(&h->dumper, rc == 0 ? DUMPED : FAILED);
  int64_t t1 = ddmc__now_ms();
  if (beside) pthread_join(th, NULL);
  if (rc == 0 && beside && h->rc != 0 && h->rc != DDMC_ENOMEM && h->fd >= 0) {
    ddmc__log(h->vm, DDMC_LOG_INFO, "%s (read as the VM wrote it): reading it again, finished", h->why);
    h->pos = 0;
    h->rc = lseek(h->fd, 0, SEEK_SET) == 0 ? 0 : DDMC_EIO;
    if (h->rc == 0) first_pass(h);
  } else if (!beside && rc == 0)
    first_pass(h);
  unlink(h->path);
  rmdir(dir);
  ddmc__log(h->vm, DDMC_LOG_INFO,
            "heap dump: the VM's dumper took %lld ms; the first pass, read beside it, ended %lld ms after it",
            (long long)(t1 - t0), (long long)(ddmc__now_ms() - t1));
  if (rc != 0) {
    snprintf(msg, msglen, "heap dump: the VM's dumper failed: %s", why[0] ? why : "no reason given");
    return DDMC_EIO;
  }
  if (h->rc != 0) snprintf(msg, msglen, "%s", h->why);
  return h->rc;
}

int ddmc__prof_hpnat_open(ddmc_vm *vm, ddmc__prof_hpnat **out, char *msg, size_t msglen) {
  *out = NULL;
  if (!ddmc__prof_hprof_native(vm)) {
    snprintf(msg, msglen, "the VM has no dumper of its own");
    return DDMC_ENOTSUP;
  }
  ddmc__prof_hpnat *h = ddmc__calloc(&vm->mem, 1, sizeof(*h));
  if (h == NULL) {
    snprintf(msg, msglen, "heap dump: out of memory");
    return DDMC_ENOMEM;
  }
  h->vm = vm;
  h->fd = -1;
  int rc = vm_dump(h, msg, msglen);
  uint64_t max = vm->prof.cfg.hprof_max_bytes;
  if (rc == 0 && h->len > max) {
    snprintf(msg, msglen, "heap dump larger than the %llu MiB allowed (hprof_max_bytes)",
             (unsigned long long)(max >> 20));
    rc = DDMC_ETOOBIG;
  }
  if (rc != 0) {
    ddmc__prof_hpnat_close(h);
    return rc;
  }
  h->freeing = 1; /* the first pass is done, and the file gone from its directory */
  *out = h;
  return 0;
}

uint64_t ddmc__prof_hpnat_len(const ddmc__prof_hpnat *h) { return h->len; }

ssize_t ddmc__prof_hpnat_read(ddmc__prof_hpnat *h, uint8_t *dst, size_t cap) {
  ssize_t n = ddmc__prof_hpconv_read(h->conv, dst, cap);
  if (n < 0) ddmc__log(h->vm, DDMC_LOG_WARN, "%s", ddmc__prof_hpconv_why(h->conv));
  return n;
}

/* HPDU's file: the conversion fills one piece while a writer thread writes the other, so
 * the second pass and the file's write overlap (a disk that throttles writers after HotSpot's own
 * file took its share would otherwise add its wait to the conversion's time). */
enum { PIECE = 256 << 10 }; /* smaller pieces touch fewer new pages (hprof_conv.c's READ_STEP) */

typedef struct pieces {
  pthread_mutex_t lock;
  pthread_cond_t cv;
  uint8_t *buf[2];
  size_t len[2]; /* 0: free for the conversion */
  int closed;
  int fd;
  int err; /* errno of the first failed write */
} pieces;

static int put_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void *writer(void *arg) {
  pieces *q = arg;
#ifdef __linux__
  pthread_setname_np(pthread_self(), "ddmc-hprof");
#endif
  for (int i = 0;; i ^= 1) {
    ddmc__lock(&q->lock);
    while (q->len[i] == 0 && !q->closed) pthread_cond_wait(&q->cv, &q->lock);
    size_t n = q->len[i];
    int err = q->err;
    ddmc__unlock(&q->lock);
    if (n == 0) break; /* closed, and nothing left */
    if (err == 0) err = put_all(q->fd, q->buf[i], n);
    ddmc__lock(&q->lock);
    q->err = err;
    q->len[i] = 0;
    pthread_cond_signal(&q->cv);
    ddmc__unlock(&q->lock);
  }
  return NULL;
}

/* The conversion into the pieces in turn; with no thread, each written at once. */
static int produce(ddmc__prof_hpnat *h, pieces *q, int threaded) {
  uint64_t left = h->len;
  for (int i = 0; left > 0; i ^= 1) {
    ddmc__lock(&q->lock);
    while (q->len[i] != 0 && q->err == 0) pthread_cond_wait(&q->cv, &q->lock);
    int err = q->err;
    ddmc__unlock(&q->lock);
    if (err != 0) return 0;
    ssize_t n = ddmc__prof_hpnat_read(h, q->buf[i], PIECE);
    if (n <= 0) return n < 0 ? (int)n : DDMC_EIO; /* shorter than the first pass said */
    left -= DDMC__MIN(left, (uint64_t)n);
    if (!threaded) {
      q->err = put_all(q->fd, q->buf[i], (size_t)n);
      continue;
    }
    ddmc__lock(&q->lock);
    q->len[i] = (size_t)n;
    pthread_cond_signal(&q->cv);
    ddmc__unlock(&q->lock);
  }
  return 0;
}

int ddmc__prof_hpnat_write(ddmc__prof_hpnat *h, int fd, int *werr) {
  pieces q;
  memset(&q, 0, sizeof q);
  q.fd = fd;
  *werr = 0;
  q.buf[0] = ddmc__malloc(&h->vm->mem, PIECE);
  q.buf[1] = ddmc__malloc(&h->vm->mem, PIECE);
  int rc = DDMC_ENOMEM;
  if (q.buf[0] != NULL && q.buf[1] != NULL) {
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.cv, NULL);
    pthread_t th;
    int threaded = pthread_create(&th, NULL, writer, &q) == 0;
    rc = produce(h, &q, threaded);
    if (threaded) {
      ddmc__lock(&q.lock);
      q.closed = 1;
      pthread_cond_signal(&q.cv);
      ddmc__unlock(&q.lock);
      pthread_join(th, NULL);
    }
    pthread_cond_destroy(&q.cv);
    pthread_mutex_destroy(&q.lock);
    *werr = q.err;
  }
  ddmc__free(&h->vm->mem, q.buf[0]);
  ddmc__free(&h->vm->mem, q.buf[1]);
  return rc;
}

void ddmc__prof_hpnat_counts(const ddmc__prof_hpnat *h, uint64_t *objects, uint64_t *classes, uint64_t *roots,
                             uint64_t *dangling) {
  ddmc__prof_hpconv_counts(h->conv, objects, classes, roots, dangling);
}

void ddmc__prof_hpnat_close(ddmc__prof_hpnat *h) {
  if (h == NULL) return;
  if (h->fd >= 0) close(h->fd);
  ddmc__prof_hpconv_free(h->conv);
  ddmc__free(&h->vm->mem, h);
}
