/* SPDX-License-Identifier: Apache-2.0 */
/* Method tracing and sampling chunks (docs/protocol/profiling.md §3):
 *   MPRS  H->V [u4 buffer size][u4 flags][u4 n][UTF-16 file]  trace to a file in the VM -> empty
 *         (the file is created new and regular, without blocking: profile/outfile.c)
 *   MPRE  H->V empty        stop; the file is written -> MPRE [u1 0 ok | 1 failed or none running]
 *   MPSS  H->V [u4 buffer size][u4 flags]                  trace for the peer -> empty
 *   SPSS  H->V [u4 buffer size][u4 flags][u4 interval µs]  sample for the peer -> empty
 *   MPSE, SPSE  H->V empty  stop -> the whole .trace as one unsolicited MPSE chunk, then the empty
 *                           reply (nothing running: only the empty reply, as Dalvik)
 *   MPRQ  H->V empty        -> MPRQ [u1 0 off | 1 tracing | 2 sampling]
 * Failures answer FAIL [1][message], which ddmlib hands to onStartFailure / onEndFailure.
 *
 * A start while a trace runs first stops that one and delivers it (to its file, or to the peer
 * as MPSE), then starts the new one: Dalvik's behaviour. The MPSE data is streamed by the JDWP
 * thread straight from the trace buffer; the reply to MPSE/SPSE is queued behind it. At most
 * DDMC__TRACES_IN_FLIGHT finished traces wait for a peer that is slow to read: a trace finished
 * past that is dropped (FAIL, counted in ddmc_stats.transfers_dropped), so a peer that stops
 * reading holds at most that many buffers plus the running one. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chunks/families.h"
#include "profile/outfile.h"
#include "profile/prof_int.h"
#include "send/send.h"

#define CHUNK_MPRS DDMC_FOURCC('M', 'P', 'R', 'S')
#define CHUNK_MPRE DDMC_FOURCC('M', 'P', 'R', 'E')
#define CHUNK_MPSS DDMC_FOURCC('M', 'P', 'S', 'S')
#define CHUNK_MPSE DDMC_FOURCC('M', 'P', 'S', 'E')
#define CHUNK_SPSS DDMC_FOURCC('S', 'P', 'S', 'S')
#define CHUNK_SPSE DDMC_FOURCC('S', 'P', 'S', 'E')
#define CHUNK_MPRQ DDMC_FOURCC('M', 'P', 'R', 'Q')

#define DDMC__TRACES_IN_FLIGHT 2

static int fail1(ddmc_buf *b, ddmc_chunk_type *rtype, const char *msg) {
  ddmc__buf_reset(b);
  return ddmc_reply_fail(b, rtype, 1, msg);
}

/* ---- delivery */

typedef struct trace_src {
  ddmc_vm *vm;
  ddmc__prof_trace *tr;
  const uint8_t *part[2];
  size_t len[2];
  size_t off;
} trace_src;

static ssize_t src_read(void *ud, uint8_t *dst, size_t cap) {
  trace_src *s = ud;
  size_t done = 0;
  while (done < cap) {
    size_t at = s->off;
    int i = at < s->len[0] ? 0 : 1;
    if (i == 1) at -= s->len[0];
    if (at >= s->len[i]) break;
    size_t n = DDMC__MIN(cap - done, s->len[i] - at);
    memcpy(dst + done, s->part[i] + at, n);
    done += n;
    s->off += n;
  }
  return done > 0 ? (ssize_t)done : DDMC_EIO;
}

static void src_done(void *ud, int status) {
  trace_src *s = ud;
  ddmc_vm *vm = s->vm;
  if (status != 0) ddmc__log(vm, DDMC_LOG_WARN, "trace transfer dropped: %s", ddmc_strerror(status));
  ddmc__prof_trace_free(vm, s->tr);
  atomic_fetch_sub(&vm->prof.sending, 1);
  ddmc__free(&vm->mem, s);
}

static int write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Sends or writes a finished trace, and frees it (now, or when its transfer ends). Returns NULL,
 * or why it failed (in msg). */
static const char *deliver(ddmc_vm *vm, ddmc__prof_trace *tr, int head_err, char *msg, size_t msglen) {
  const uint8_t *head, *recs;
  size_t hlen, rlen;
  ddmc__prof_trace_parts(tr, &head, &hlen, &recs, &rlen);
  int fd = ddmc__prof_trace_fd(tr);
  if (head_err != 0) {
    ddmc__prof_trace_free(vm, tr);
    snprintf(msg, msglen, "trace lost: %s", ddmc_strerror(head_err));
    return msg;
  }
  if (fd >= 0) {
    int bad = write_all(fd, head, hlen) != 0 || write_all(fd, recs, rlen) != 0;
    int e = errno;
    ddmc__prof_trace_free(vm, tr); /* closes fd */
    if (!bad) return NULL;
    snprintf(msg, msglen, "cannot write the trace file: %s", strerror(e));
    return msg;
  }
  if (atomic_fetch_add(&vm->prof.sending, 1) >= DDMC__TRACES_IN_FLIGHT) {
    atomic_fetch_sub(&vm->prof.sending, 1);
    atomic_fetch_add(&vm->st_transfers_dropped, 1);
    ddmc__prof_trace_free(vm, tr);
    snprintf(msg, msglen, "trace dropped: the peer has not read the previous ones");
    return msg;
  }
  trace_src *s = ddmc__calloc(&vm->mem, 1, sizeof(*s));
  if (s == NULL) {
    atomic_fetch_sub(&vm->prof.sending, 1);
    ddmc__prof_trace_free(vm, tr);
    return "trace lost: out of memory";
  }
  *s = (trace_src){vm, tr, {head, recs}, {hlen, rlen}, 0};
  ddmc__send_source src = {src_read, src_done, s};
  int rc = ddmc__send_stream(vm, 0, 0, CHUNK_MPSE, (uint64_t)hlen + rlen, &src); /* done() ran on failure */
  if (rc == 0) return NULL;
  snprintf(msg, msglen, "trace not sent: %s", ddmc_strerror(rc));
  return msg;
}

/* Stops what runs and delivers it. Returns 1 if something ran; *why is NULL or a message. */
static int stop_and_deliver(ddmc_vm *vm, const char **why, char *msg, size_t msglen) {
  int head_err = 0;
  ddmc__prof_trace *tr = ddmc__prof_trace_stop(vm, &head_err);
  *why = NULL;
  if (tr == NULL) return 0;
  *why = deliver(vm, tr, head_err, msg, msglen);
  return 1;
}

/* ---- starts */

static int start(ddmc_vm *vm, ddmc__prof_trace_req *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  char msg[160];
  const char *why;
  if (stop_and_deliver(vm, &why, msg, sizeof msg))
    ddmc__log(vm, DDMC_LOG_INFO, "trace start requested while one ran: stopped that one first%s%s", why ? ": " : "",
              why ? why : "");
  int rc = ddmc__prof_trace_start(vm, req);
  if (rc == 0) return 0;
  if (req->fd >= 0) close(req->fd);
  if (rc == DDMC_ENOTSUP)
    return fail1(b, rtype,
                 req->mode == DDMC_TRACE_SAMPLING ? "sampling is not supported by this VM"
                                                  : "method tracing is not supported by this VM");
  snprintf(msg, sizeof msg, "cannot start tracing: %s", rc > 0 ? "the VM refused method events" : ddmc_strerror(rc));
  return fail1(b, rtype, msg);
}

static int handle_mprs(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  ddmc__prof_trace_req tq = {DDMC_TRACE_METHODS, 0, 0, -1};
  tq.buffer_size = ddmc_read_u32(&r);
  (void)ddmc_read_u32(&r); /* flags: 0x01 counts allocations, which this trace format leaves out */
  char path[PATH_MAX];
  int n = ddmc_read_str(&r, path, sizeof path);
  if (n < 0 || ddmc_reader_done(&r) != 0) return fail1(b, rtype, "MPRS needs [u4 size][u4 flags][u4 n][UTF-16 file]");
  if (n == 0 || strlen(path) != (size_t)n) return fail1(b, rtype, "MPRS: bad trace file name");
  ddmc__prof_outfile of;
  char msg[PATH_MAX + 96];
  if (ddmc__prof_outfile_open(vm, path, &of, msg, sizeof msg) != 0) return fail1(b, rtype, msg);
  tq.fd = of.fd;
  int rc = start(vm, &tq, rtype, b);
  /* Not started (start closed the file): the empty file is ours, and would refuse a retry. */
  if (ddmc_trace_mode_now(vm) == DDMC_TRACE_OFF) ddmc__prof_outfile_discard(path, &of);
  return rc;
}

static int handle_mpss(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  ddmc__prof_trace_req tq = {DDMC_TRACE_METHODS, 0, 0, -1};
  tq.buffer_size = ddmc_read_u32(&r);
  (void)ddmc_read_u32(&r);
  if (ddmc_reader_done(&r) != 0) return fail1(b, rtype, "MPSS needs [u4 size][u4 flags]");
  return start(vm, &tq, rtype, b);
}

static int handle_spss(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  ddmc__prof_trace_req tq = {DDMC_TRACE_SAMPLING, 0, 0, -1};
  tq.buffer_size = ddmc_read_u32(&r);
  (void)ddmc_read_u32(&r);
  tq.interval_us = ddmc_read_u32(&r);
  if (ddmc_reader_done(&r) != 0) return fail1(b, rtype, "SPSS needs [u4 size][u4 flags][u4 interval us]");
  if (tq.interval_us == 0) return fail1(b, rtype, "SPSS: the sampling interval must be over 0 us");
  return start(vm, &tq, rtype, b);
}

/* ---- stops */

static int handle_mpse(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  char msg[160];
  const char *why;
  stop_and_deliver(vm, &why, msg, sizeof msg);
  return why ? fail1(b, rtype, why) : 0;
}

static int handle_mpre(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  char msg[160];
  const char *why;
  int ran = stop_and_deliver(vm, &why, msg, sizeof msg);
  if (why) ddmc__log(vm, DDMC_LOG_WARN, "MPRE: %s", why);
  *rtype = CHUNK_MPRE; /* a non-empty reply, so ddmlib's handler runs */
  return ddmc_buf_put_u8(b, ran && why == NULL ? 0 : 1);
}

static int handle_mprq(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  *rtype = CHUNK_MPRQ;
  return ddmc_buf_put_u8(b, (uint8_t)ddmc_trace_mode_now(vm));
}

int ddmc__chunk_trace_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler mprs = {.handle = handle_mprs}, mpre = {.handle = handle_mpre},
                                  mpss = {.handle = handle_mpss}, mpse = {.handle = handle_mpse},
                                  spss = {.handle = handle_spss}, mprq = {.handle = handle_mprq};
  int rc = ddmc_register_handler(vm, CHUNK_MPRS, &mprs, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_MPRE, &mpre, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_MPSS, &mpss, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_MPSE, &mpse, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_SPSS, &spss, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_SPSE, &mpse, NULL); /* the same stop */
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_MPRQ, &mprq, NULL);
  return rc;
}
