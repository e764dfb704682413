/* SPDX-License-Identifier: Apache-2.0 */
/* Thread monitoring: THEN, THCR, THDE, THNM, THST, STKL (docs/protocol/ddm-wire.md §2.7).
 *   THEN  H->V [u1 enable]; enabling sends a THCR for every live thread (before the empty reply)
 *   THCR  V->H [u4 id][u4 len][UTF-16 name]      THNM: same layout, on rename
 *   THDE  V->H [u4 id]
 *   THST  H->V empty: one-shot query, answered with the shipped layout
 *               [u1 4][u1 18][u2 count] + count x [u4 id][u1 status][u4 tid][u4 utime][u4 stime][u1 daemon]
 *         H->V [u4 interval ms] (the draft's form): periodic unsolicited THST at that interval, 0 = off
 *   STKL  H->V [u4 id] -> [u4 0][u4 id][u4 count] + count x ([str class][str method][str file][u4 line])
 * Names are never truncated. Notification and periodic updates stop when the DDM peer leaves. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunks/families.h"
#include "jdwp/service.h"
#include "vm_int.h"

#define CHUNK_THEN DDMC_FOURCC('T', 'H', 'E', 'N')
#define CHUNK_THCR DDMC_FOURCC('T', 'H', 'C', 'R')
#define CHUNK_THDE DDMC_FOURCC('T', 'H', 'D', 'E')
#define CHUNK_THNM DDMC_FOURCC('T', 'H', 'N', 'M')
#define CHUNK_THST DDMC_FOURCC('T', 'H', 'S', 'T')
#define CHUNK_STKL DDMC_FOURCC('S', 'T', 'K', 'L')

static int send_name_chunk(ddmc_vm *vm, uint32_t type, uint32_t id, const char *name) {
  if (!atomic_load_explicit(&vm->thr.notify, memory_order_acquire) || !atomic_load(&vm->ddm_active))
    return DDMC_ENOTCONN;
  /* Names are never clipped; the usual short one is built on the stack. */
  uint8_t stack[8 + 2 * 64];
  ddmc_buf b;
  ddmc__buf_init_on(&b, &vm->mem, UINT32_MAX - 64, stack, sizeof(stack));
  ddmc_buf_put_u32(&b, id);
  ddmc_buf_put_str(&b, name);
  int rc = ddmc_buf_error(&b);
  if (rc == 0) rc = ddmc_send_chunk(vm, type, b.p, b.len);
  ddmc__buf_free(&b);
  return rc;
}

int ddmc_notify_thread_start(ddmc_vm *vm, uint32_t id, const char *name) {
  if (vm == NULL) return DDMC_EINVAL;
  return send_name_chunk(vm, CHUNK_THCR, id, name);
}

int ddmc_notify_thread_name(ddmc_vm *vm, uint32_t id, const char *name) {
  if (vm == NULL) return DDMC_EINVAL;
  return send_name_chunk(vm, CHUNK_THNM, id, name);
}

int ddmc_notify_thread_end(ddmc_vm *vm, uint32_t id) {
  if (vm == NULL) return DDMC_EINVAL;
  if (!atomic_load_explicit(&vm->thr.notify, memory_order_acquire)) return DDMC_ENOTCONN;
  uint8_t p[4];
  ddmc__put_u32(p, id);
  return ddmc_send_chunk(vm, CHUNK_THDE, p, 4);
}

/* ---- THEN */

static int thcr_visit(void *arg, const ddmc_thread_info *t) {
  int rc = ddmc_notify_thread_start(arg, t->id, t->name);
  return rc == DDMC_EQFULL ? rc : 0; /* a full queue ends the burst; anything else keeps going */
}

static int handle_then(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  int enable = ddmc_read_u8(&r) != 0;
  if (r.err) return ddmc_reply_fail(b, rtype, DDMC_EPROTO, "THEN needs [u1 enable]");
  /* On before the burst: a thread that starts meanwhile is reported by its own THCR (perhaps
   * twice, which the host's thread map absorbs) rather than missed. */
  atomic_store_explicit(&vm->thr.notify, enable, memory_order_release);
  if (enable && vm->ops.for_each_thread) {
    int rc = vm->ops.for_each_thread(vm->vm_data, thcr_visit, vm);
    if (rc == DDMC_EQFULL) return ddmc_reply_fail(b, rtype, DDMC_EQFULL, "send queue full during THCR burst");
  }
  return 0;
}

static void thread_disconnected(void *ud, ddmc_vm *vm) {
  (void)ud;
  atomic_store(&vm->thr.notify, 0);
  atomic_store(&vm->thr.thst_interval_ms, 0);
}

/* ---- THST */

/* utime and stime (fields 14 and 15 of /proc/self/task/TID/stat), in clock ticks; 0 if unreadable. */
static void task_times(uint32_t tid, uint32_t *ut, uint32_t *st) {
  *ut = *st = 0;
  char path[64], buf[512];
  snprintf(path, sizeof(path), "/proc/self/task/%u/stat", (unsigned)tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  /* The command name (field 2) may hold spaces and parentheses: count fields after the last ')'. */
  char *p = strrchr(buf, ')');
  if (p == NULL) return;
  p++;
  for (int field = 3; field < 14 && p != NULL; field++) {
    p = strchr(p + 1, ' ');
  }
  if (p == NULL) return;
  char *end;
  unsigned long u = strtoul(p, &end, 10);
  unsigned long s = strtoul(end, NULL, 10);
  *ut = (uint32_t)u;
  *st = (uint32_t)s;
}

/* Entries of a VM that gave no tid (so no /proc times) get the VM's own figures, asked after the
 * walk so the op may take the lock the walk held. ddmlib shows utime and stime as clock ticks
 * (Linux's USER_HZ, what /proc gives), so nanoseconds are converted to the same unit. */
static void vm_cpu_times(ddmc_vm *vm, uint8_t *entries, uint32_t count) {
  if (vm->ops.thread_cpu_time == NULL) return;
  long hz = sysconf(_SC_CLK_TCK);
  uint64_t ns_per_tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
  for (uint32_t i = 0; i < count; i++) {
    uint8_t *e = entries + (size_t)i * 18;
    uint64_t user = 0, sys = 0;
    if (ddmc__get_u32(e + 5) != 0) continue; /* tid known: /proc answered, or nothing will */
    if (vm->ops.thread_cpu_time(vm->vm_data, ddmc__get_u32(e), &user, &sys) != 0) continue;
    ddmc__put_u32(e + 9, (uint32_t)(user / ns_per_tick));
    ddmc__put_u32(e + 13, (uint32_t)(sys / ns_per_tick));
  }
}

typedef struct thst_ctx {
  ddmc_buf *b;
  uint32_t count;
} thst_ctx;

static int thst_visit(void *arg, const ddmc_thread_info *t) {
  thst_ctx *c = arg;
  uint32_t ut, st;
  task_times(t->tid, &ut, &st);
  ddmc_buf_put_u32(c->b, t->id);
  ddmc_buf_put_u8(c->b, (uint8_t)t->status);
  ddmc_buf_put_u32(c->b, t->tid);
  ddmc_buf_put_u32(c->b, ut);
  ddmc_buf_put_u32(c->b, st);
  ddmc_buf_put_u8(c->b, t->daemon ? 1 : 0);
  c->count++;
  return ddmc_buf_error(c->b);
}

static int build_thst(ddmc_vm *vm, ddmc_buf *b) {
  if (vm->ops.for_each_thread == NULL) return DDMC_ENOTSUP;
  size_t at = ddmc_buf_len(b);
  ddmc_buf_put_u8(b, 4);
  ddmc_buf_put_u8(b, 18);
  ddmc_buf_put_u16(b, 0);
  thst_ctx c = {b, 0};
  int rc = vm->ops.for_each_thread(vm->vm_data, thst_visit, &c);
  if (rc == 0) rc = ddmc_buf_error(b);
  if (rc != 0) return rc;
  /* ddmlib reads the count as a signed short: past 32767 threads the list cannot be described. */
  if (c.count > 0x7fff) return DDMC_ETOOBIG;
  ddmc__put_u16(b->p + at + 2, (uint16_t)c.count);
  vm_cpu_times(vm, b->p + at + 4, c.count);
  return 0;
}

static int handle_thst(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  if (req->len >= 4) {
    ddmc_reader r;
    ddmc_reader_init(&r, req->data, req->len);
    uint32_t interval = ddmc_read_u32(&r);
    if (interval > 3600 * 1000) return ddmc_reply_fail(b, rtype, DDMC_EINVAL, "THST interval over an hour");
    if (interval > 0 && interval < DDMC__THST_MIN_INTERVAL_MS) interval = DDMC__THST_MIN_INTERVAL_MS;
    atomic_store(&vm->thr.thst_interval_ms, (int)interval);
    return 0;
  }
  int rc = build_thst(vm, b);
  if (rc != 0) {
    ddmc__buf_reset(b);
    return ddmc_reply_fail(b, rtype, rc, "Can't build THST chunk");
  }
  *rtype = CHUNK_THST;
  return 0;
}

/* THST periodic updates (a service's tick): returns ms until the next one is due (-1: none). */
static int thread_tick(ddmc_vm *vm, void *ud, int64_t now) {
  (void)ud;
  if (!atomic_load(&vm->ddm_active)) return -1;
  int64_t next_due = vm->thr.thst_next_due; /* JDWP thread only */
  int interval = atomic_load(&vm->thr.thst_interval_ms);
  if (interval <= 0) {
    vm->thr.thst_next_due = 0;
    return -1;
  }
  if (next_due == 0) next_due = vm->thr.thst_next_due = now + interval;
  if (now < next_due) return (int)(next_due - now);
  vm->thr.thst_next_due = now + interval;
  ddmc_buf b;
  ddmc__buf_init(&b, &vm->mem, UINT32_MAX - 64);
  if (build_thst(vm, &b) == 0) ddmc_send_chunk(vm, CHUNK_THST, b.p, b.len);
  ddmc__buf_free(&b);
  return interval;
}

/* ---- STKL */

typedef struct stkl_ctx {
  ddmc_buf *b;
  uint32_t count;
} stkl_ctx;

static int stkl_visit(void *arg, const ddmc_frame *f) {
  stkl_ctx *c = arg;
  ddmc_buf_put_str(c->b, f->class_name);
  ddmc_buf_put_str(c->b, f->method_name);
  ddmc_buf_put_str(c->b, f->file); /* NULL -> length 0, which ddmlib reads as "no file" */
  ddmc_buf_put_u32(c->b, (uint32_t)f->line);
  c->count++;
  return ddmc_buf_error(c->b);
}

static int handle_stkl(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  uint32_t id = ddmc_read_u32(&r);
  if (r.err) return ddmc_reply_fail(b, rtype, DDMC_EPROTO, "STKL needs [u4 thread id]");
  if (vm->ops.thread_stack == NULL) return ddmc_reply_fail(b, rtype, DDMC_ENOTSUP, "Stack trace unavailable");
  ddmc_buf_put_u32(b, 0);
  ddmc_buf_put_u32(b, id);
  ddmc_buf_put_u32(b, 0);
  stkl_ctx c = {b, 0};
  int rc = vm->ops.thread_stack(vm->vm_data, id, stkl_visit, &c);
  if (rc == 0) rc = ddmc_buf_error(b);
  if (rc != 0) {
    ddmc__buf_reset(b);
    return ddmc_reply_fail(b, rtype, rc, rc == DDMC_ENOENT ? "No such thread" : "Stack trace unavailable");
  }
  ddmc__put_u32(b->p + 8, c.count);
  *rtype = CHUNK_STKL;
  return 0;
}

int ddmc__chunk_thread_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler then = {.handle = handle_then, .disconnected = thread_disconnected};
  static const ddmc_chunk_handler thst = {.handle = handle_thst};
  static const ddmc_chunk_handler stkl = {.handle = handle_stkl};
  int rc = ddmc_register_handler(vm, CHUNK_THEN, &then, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_THST, &thst, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_STKL, &stkl, NULL);
  ddmc__jdwp_service tick = {.name = "THST updates", .tick = thread_tick};
  if (rc == 0) rc = ddmc__jdwp_service_add(vm, &tick);
  return rc;
}
