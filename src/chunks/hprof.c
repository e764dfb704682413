/* SPDX-License-Identifier: Apache-2.0 */
/* Heap dump chunks (docs/protocol/profiling.md §5):
 *   HPDU  H->V [u4 n][UTF-16 file]  write an hprof file in the VM
 *         -> HPDU [u1 0] once the file is written and closed;
 *            HPDU [u1 0xFF][u4 n][UTF-16 message] when it could not be (unwritable path, a
 *            name that exists or lies outside ddmc_prof_config.file_dir, dump refused): ddmlib reads the first byte only and calls onEndFailure, as for Dalvik's
 *            -1; the message after it is this library's, for hosts that want to say why. A FAIL
 *            chunk instead would leave ddmlib's pending dump hanging (its HPDU handler never
 *            runs), so FAIL is kept for requests that are not an HPDU at all (bad payload).
 *   HPDS  H->V empty  -> the whole file as one unsolicited HPDS chunk, then the empty reply;
 *                        FAIL [1][message] when no dump is sent (ddmlib only logs it).
 * HPDU's file is created new and regular, without blocking (profile/outfile.c: the name is the
 * peer's, the JDWP thread everyone's). A VM with a dumper of its own (the bridge's write_hprof)
 * writes the dump, which is converted as it is written or sent (profile/hprof_native.c); the
 * walk below builds it when the VM has none or it fails. The dump is built with the world stopped
 * (profile/hprof_dump.c); HPDU's file is written beside
 * the build by a writer thread (profile/hprof_file.c), HPDS's chunk streamed by the JDWP thread
 * from the dump's blocks after the VM runs again. One HPDS
 * dump at a time waits for the peer: another asked for meanwhile is refused, so a peer that
 * stops reading holds at most one dump (hprof_max_bytes) until stall_timeout_ms drops it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chunks/families.h"
#include "profile/hprof.h"
#include "profile/outfile.h"
#include "send/send.h"

#define CHUNK_HPDU DDMC_FOURCC('H', 'P', 'D', 'U')
#define CHUNK_HPDS DDMC_FOURCC('H', 'P', 'D', 'S')

static int fail1(ddmc_buf *b, ddmc_chunk_type *rtype, const char *msg) {
  ddmc__buf_reset(b);
  return ddmc_reply_fail(b, rtype, 1, msg);
}

static void log_dump(ddmc_vm *vm, const char *what, const ddmc__prof_hprof *h) {
  ddmc__log(vm, DDMC_LOG_INFO, "heap dump %s: %llu bytes, %llu classes, %llu objects, %llu roots", what,
            (unsigned long long)h->len, (unsigned long long)h->classes, (unsigned long long)h->objects,
            (unsigned long long)h->roots);
}

/* ---- the VM's own dumper (profile/hprof_native.c) */

static void log_native(ddmc_vm *vm, const char *what, const ddmc__prof_hpnat *n) {
  uint64_t objects, classes, roots, dangling;
  ddmc__prof_hpnat_counts(n, &objects, &classes, &roots, &dangling);
  ddmc__log(vm, DDMC_LOG_INFO, "heap dump %s (the VM's own dumper): %llu bytes, %llu classes, %llu objects, %llu roots",
            what, (unsigned long long)ddmc__prof_hpnat_len(n), (unsigned long long)classes, (unsigned long long)objects,
            (unsigned long long)roots);
  if (dangling > 0) /* counted as they are written */
    ddmc__log(vm, DDMC_LOG_INFO, "heap dump: %llu references to objects the VM's dumper left out written as null",
              (unsigned long long)dangling);
}

static void count_native(ddmc_vm *vm, int rc, uint64_t bytes) {
  if (rc != 0) {
    atomic_fetch_add(&vm->prof.st_hprof_failed, 1);
    return;
  }
  atomic_fetch_add(&vm->prof.st_hprof_dumps, 1);
  atomic_fetch_add(&vm->prof.st_hprof_bytes, bytes);
}

/* The dump by the VM's dumper, or DDMC_ENOTSUP when the walk is to build it (no such dumper, or
 * it failed before a byte was written: logged). */
static int open_native(ddmc_vm *vm, ddmc__prof_hpnat **n, const char *who, char *why, size_t whylen) {
  if (!ddmc__prof_hprof_native(vm)) return DDMC_ENOTSUP;
  int rc = ddmc__prof_hpnat_open(vm, n, why, whylen);
  if (rc == 0 || rc == DDMC_ETOOBIG || !ddmc__prof_hprof_supported(vm)) return rc;
  ddmc__log(vm, DDMC_LOG_WARN, "%s: %s; walking the heap instead", who, why);
  return DDMC_ENOTSUP;
}

static int hpdu_native(ddmc_vm *vm, int fd, int *werr, char *why, size_t whylen) {
  ddmc__prof_hpnat *n = NULL;
  int rc = open_native(vm, &n, "HPDU", why, whylen);
  if (rc != 0) {
    if (rc != DDMC_ENOTSUP) count_native(vm, rc, 0);
    return rc;
  }
  int64_t t0 = ddmc__now_ms();
  rc = ddmc__prof_hpnat_write(n, fd, werr);
  ddmc__log(vm, DDMC_LOG_INFO, "heap dump: the second pass and the file's writes took %lld ms",
            (long long)(ddmc__now_ms() - t0));
  if (rc != 0) snprintf(why, whylen, "heap dump: converting the VM's file failed: %s", ddmc_strerror(rc));
  count_native(vm, rc != 0 || *werr != 0, ddmc__prof_hpnat_len(n));
  log_native(vm, rc == 0 && *werr == 0 ? "written" : "not written", n);
  ddmc__prof_hpnat_close(n);
  return rc;
}

/* ---- HPDU */

static int hpdu_result(ddmc_buf *b, ddmc_chunk_type *rtype, const char *why) {
  ddmc__buf_reset(b);
  *rtype = CHUNK_HPDU;
  ddmc_buf_put_u8(b, why ? 0xFF : 0);
  if (why) ddmc_buf_put_str(b, why);
  return ddmc_buf_error(b);
}

static int handle_hpdu(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  char path[PATH_MAX], msg[PATH_MAX + 160];
  int n = ddmc_read_str(&r, path, sizeof path);
  if (n < 0 || ddmc_reader_done(&r) != 0) return fail1(b, rtype, "HPDU needs [u4 n][UTF-16 file name]");
  if (n == 0 || strlen(path) != (size_t)n) return hpdu_result(b, rtype, "HPDU: bad file name");
  if (!ddmc__prof_hprof_supported(vm) && !ddmc__prof_hprof_native(vm))
    return hpdu_result(b, rtype, "hprof dumps not supported in this VM");
  /* Opened first: a path that cannot be written costs no stop of the world. */
  ddmc__prof_outfile of;
  if (ddmc__prof_outfile_open(vm, path, &of, msg, sizeof msg) != 0) {
    ddmc__log(vm, DDMC_LOG_WARN, "HPDU: %s", msg);
    return hpdu_result(b, rtype, msg);
  }
  int fd = of.fd;
  ddmc__prof_hprof *h = NULL;
  char why[256];
  int e = 0;
  int rc = hpdu_native(vm, fd, &e, why, sizeof why);
  if (rc == DDMC_ENOTSUP) rc = ddmc__prof_hprof_write(vm, fd, &h, &e, why, sizeof why);
  /* A write that failed is the error to report; a build it stopped (or the VM's dumper's
   * conversion) was counted failed already. */
  if (e != 0 && rc == 0 && h != NULL) atomic_fetch_add(&vm->prof.st_hprof_failed, 1);
  if (e != 0) rc = 0;
  if (h != NULL) {
    log_dump(vm, e ? "not written" : "written", h);
    ddmc__prof_hprof_free(vm, h);
  }
  if (close(fd) != 0 && rc == 0 && e == 0) {
    e = errno;
    atomic_fetch_add(&vm->prof.st_hprof_failed, 1);
  }
  if (rc == 0 && e == 0) return hpdu_result(b, rtype, NULL);
  ddmc__prof_outfile_discard(path, &of); /* no half file left to be mistaken for a dump; only ours */
  if (rc != 0) {
    snprintf(msg, sizeof msg, "%s", why);
  } else {
    snprintf(msg, sizeof msg, "cannot write %s: %s", path, strerror(e));
  }
  ddmc__log(vm, DDMC_LOG_WARN, "HPDU: %s", msg);
  return hpdu_result(b, rtype, msg);
}

/* ---- HPDS */

typedef struct hpds_src {
  ddmc_vm *vm;
  ddmc__prof_hprof *h;
  const ddmc__prof_hpblk *blk;
  size_t off;
  ddmc__prof_hpnat *n; /* the VM's dump, converted as it is sent: h is NULL then */
} hpds_src;

static ssize_t src_read(void *ud, uint8_t *dst, size_t cap) {
  hpds_src *s = ud;
  if (s->n != NULL) {
    ssize_t r = ddmc__prof_hpnat_read(s->n, dst, cap);
    return r != 0 ? r : DDMC_EIO; /* 0: shorter than the length the first pass gave */
  }
  size_t done = 0;
  while (done < cap && s->blk != NULL) {
    size_t n = DDMC__MIN(cap - done, s->blk->len - s->off);
    memcpy(dst + done, s->blk->data + s->off, n);
    done += n;
    s->off += n;
    if (s->off == s->blk->len) {
      s->blk = s->blk->next;
      s->off = 0;
    }
  }
  return done > 0 ? (ssize_t)done : DDMC_EIO;
}

static void src_done(void *ud, int status) {
  hpds_src *s = ud;
  ddmc_vm *vm = s->vm;
  if (status != 0) ddmc__log(vm, DDMC_LOG_WARN, "heap dump transfer dropped: %s", ddmc_strerror(status));
  ddmc__prof_hprof_free(vm, s->h);
  if (s->n != NULL && status == 0) log_native(vm, "sent", s->n);
  ddmc__prof_hpnat_close(s->n);
  atomic_store(&vm->prof.hprof_sending, 0);
  ddmc__free(&vm->mem, s);
}

static int handle_hpds(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  if (req->len != 0) return fail1(b, rtype, "HPDS takes no payload");
  if (!ddmc__prof_hprof_supported(vm) && !ddmc__prof_hprof_native(vm))
    return fail1(b, rtype, "hprof dumps not supported in this VM");
  if (atomic_exchange(&vm->prof.hprof_sending, 1)) {
    atomic_fetch_add(&vm->prof.st_hprof_failed, 1);
    return fail1(b, rtype, "heap dump refused: the peer has not read the previous one yet");
  }
  ddmc__prof_hprof *h = NULL;
  ddmc__prof_hpnat *n = NULL;
  char why[256];
  int rc = open_native(vm, &n, "HPDS", why, sizeof why);
  if (rc != DDMC_ENOTSUP) count_native(vm, rc, rc == 0 ? ddmc__prof_hpnat_len(n) : 0);
  if (rc == DDMC_ENOTSUP) rc = ddmc__prof_hprof_build(vm, &h, why, sizeof why);
  if (rc != 0) {
    atomic_store(&vm->prof.hprof_sending, 0);
    ddmc__log(vm, DDMC_LOG_WARN, "HPDS: %s", why);
    return fail1(b, rtype, why);
  }
  if (n != NULL)
    log_native(vm, "queued", n);
  else
    log_dump(vm, "queued", h);
  hpds_src *s = ddmc__calloc(&vm->mem, 1, sizeof(*s));
  if (s == NULL) {
    ddmc__prof_hprof_free(vm, h);
    ddmc__prof_hpnat_close(n);
    atomic_store(&vm->prof.hprof_sending, 0);
    return fail1(b, rtype, "heap dump lost: out of memory");
  }
  *s = (hpds_src){vm, h, h ? h->out.head : NULL, 0, n};
  ddmc__send_source src = {src_read, src_done, s};
  uint64_t len = n != NULL ? ddmc__prof_hpnat_len(n) : h->len;
  rc = ddmc__send_stream(vm, 0, 0, CHUNK_HPDS, len, &src); /* done() ran on failure */
  if (rc == 0) return 0;                                      /* the empty reply waits in the queue behind the data */
  char msg[160];
  snprintf(msg, sizeof msg, "heap dump not sent: %s", ddmc_strerror(rc));
  return fail1(b, rtype, msg);
}

int ddmc__chunk_hprof_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler hpdu = {.handle = handle_hpdu}, hpds = {.handle = handle_hpds};
  int rc = ddmc_register_handler(vm, CHUNK_HPDU, &hpdu, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_HPDS, &hpds, NULL);
  return rc;
}
