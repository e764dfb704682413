/* SPDX-License-Identifier: Apache-2.0 */
/* See send.h. */
#include <string.h>
#include <time.h>

#include "send/send.h"

/* Set on the JDWP thread: it never needs to wake itself after queueing (a handler's THCR burst). */
static _Thread_local int on_jdwp_thread;

void ddmc__send_mark_jdwp_thread(void) { on_jdwp_thread = 1; }

/* The session whose request the JDWP thread is handling: DDM traffic a handler queues (a THCR
 * burst at THEN, HPIF now, a trace) is its answer, for that session only. */
static _Thread_local uint32_t requester;

void ddmc__send_set_requester(uint32_t session) { requester = session; }

static uint32_t ddm_target(void) { return on_jdwp_thread ? requester : 0; }

static int total_len(const ddmc_iov *iov, int iovcnt, size_t *n) {
  size_t t = 0;
  for (int i = 0; i < iovcnt; i++) {
    if (iov[i].len > UINT32_MAX - t) return DDMC_ETOOBIG;
    t += iov[i].len;
  }
  *n = t;
  return 0;
}

static int append(ddmc_vm *vm, uint32_t kind, uint32_t a, uint32_t b, uint32_t c, const ddmc_iov *iov,
                  int iovcnt) {
  size_t n;
  int err = total_len(iov, iovcnt, &n);
  if (err != 0) return err;
  ddmc__send_rec *rec = ddmc__send_ring_reserve(&vm->ring, n, &err);
  if (rec == NULL) return err;
  rec->a = a;
  rec->b = b;
  rec->c = c;
  uint8_t *d = ddmc__send_rec_data(rec);
  for (int i = 0; i < iovcnt; i++) {
    if (iov[i].len) memcpy(d, iov[i].base, iov[i].len);
    d += iov[i].len;
  }
  ddmc__send_ring_publish(&vm->ring, rec, kind);
  if (!on_jdwp_thread) ddmc__wake(vm);
  return 0;
}

/* Charges n bytes of external payload against the queue cap. */
static int charge(ddmc_vm *vm, size_t n) {
  size_t old = atomic_fetch_add_explicit(&vm->ext_bytes, n, memory_order_relaxed);
  if (n > vm->opt.sendq_bytes || old > vm->opt.sendq_bytes - n) {
    atomic_fetch_sub_explicit(&vm->ext_bytes, n, memory_order_relaxed);
    return DDMC_EQFULL;
  }
  return 0;
}

static int append_ext(ddmc_vm *vm, uint32_t session, ddmc__send_ext *e) {
  int err;
  ddmc__send_rec *rec = ddmc__send_ring_reserve(&vm->ring, sizeof(e), &err);
  if (rec == NULL) return err;
  rec->b = session;
  memcpy(ddmc__send_rec_data(rec), &e, sizeof(e));
  ddmc__send_ring_publish(&vm->ring, rec, DDMC__REC_EXT);
  if (!on_jdwp_thread) ddmc__wake(vm);
  return 0;
}

/* A DDM chunk (ddmc_send_chunk); only while a DDM peer is present (else DDMC_ENOTCONN, at the
 * cost of one atomic load, so VMs may call it on hot paths). */
static int send_ddm(ddmc_vm *vm, uint32_t type, const ddmc_iov *iov, int iovcnt) {
  if (!atomic_load_explicit(&vm->ddm_active, memory_order_acquire)) return DDMC_ENOTCONN;
  size_t n;
  int err = total_len(iov, iovcnt, &n);
  if (err != 0) return err;
  if (n + 64 > vm->opt.sendq_bytes) return DDMC_ETOOBIG;
  if (n <= ddmc__send_ring_max_payload(&vm->ring)) return append(vm, DDMC__REC_DDM, type, ddm_target(), 0, iov, iovcnt);
  /* Too big for one record: one private copy, queued as a batch of one. */
  ddmc__send_batch b;
  ddmc__send_batch_init(&b, vm);
  ddmc_buf_put_u32(&b.data, type);
  ddmc_buf_put_u32(&b.data, (uint32_t)n);
  for (int i = 0; i < iovcnt; i++) ddmc_buf_put_bytes(&b.data, iov[i].base, iov[i].len);
  b.count = 1;
  return ddmc__send_batch_commit(&b);
}

int ddmc__send_cmd(ddmc_vm *vm, uint32_t session, uint8_t set, uint8_t cmd, const ddmc_iov *iov, int iovcnt) {
  if (!atomic_load_explicit(&vm->connected, memory_order_acquire)) return DDMC_ENOTCONN;
  return append(vm, DDMC__REC_CMD, (uint32_t)set << 8 | cmd, session, 0, iov, iovcnt);
}

int ddmc__send_reply(ddmc_vm *vm, uint32_t session, uint32_t id, uint16_t error, const ddmc_iov *iov,
                     int iovcnt) {
  if (!atomic_load_explicit(&vm->connected, memory_order_acquire)) return DDMC_ENOTCONN;
  return append(vm, DDMC__REC_REPLY, id, session, error, iov, iovcnt);
}

uint32_t ddmc__send_session_number(const ddmc_vm *vm) {
  return atomic_load_explicit(&((ddmc_vm *)vm)->session_no, memory_order_acquire);
}

int ddmc__send_stream(ddmc_vm *vm, uint8_t set, uint8_t cmd, uint32_t type, uint64_t len,
                      const ddmc__send_source *src) {
  int err = DDMC_ENOTCONN;
  ddmc__send_ext *e = NULL;
  if (len > UINT32_MAX - 32) err = DDMC_ETOOBIG;
  else if (set == 0 ? atomic_load(&vm->ddm_active) : atomic_load(&vm->connected))
    err = (e = ddmc__calloc(&vm->mem, 1, sizeof(*e))) == NULL ? DDMC_ENOMEM : 0;
  if (err == 0) {
    e->src = *src;
    e->set = set;
    e->cmd = cmd;
    e->type = type;
    e->len = len;
    err = append_ext(vm, set == 0 ? ddm_target() : 0, e);
  }
  if (err != 0) {
    ddmc__free(&vm->mem, e);
    atomic_fetch_add_explicit(&vm->st_transfers_dropped, 1, memory_order_relaxed);
    src->done(src->ud, err);
  }
  return err;
}

void ddmc__send_batch_init(ddmc__send_batch *b, ddmc_vm *vm) {
  b->vm = vm;
  b->count = 0;
  ddmc__buf_init(&b->data, &vm->mem, vm->opt.sendq_bytes);
}

int ddmc__send_batch_add(ddmc__send_batch *b, uint32_t type, const void *data, size_t len) {
  if (len > UINT32_MAX - 64) b->data.err = DDMC_ETOOBIG;
  ddmc_buf_put_u32(&b->data, type);
  ddmc_buf_put_u32(&b->data, (uint32_t)len);
  ddmc_buf_put_bytes(&b->data, data, len);
  if (b->data.err == 0) b->count++;
  return b->data.err == DDMC_ETOOBIG ? DDMC_EQFULL : b->data.err; /* cannot ever fit */
}

void ddmc__send_batch_discard(ddmc__send_batch *b) {
  ddmc__buf_free(&b->data);
  b->count = 0;
}

int ddmc__send_batch_commit(ddmc__send_batch *b) {
  ddmc_vm *vm = b->vm;
  int err = b->data.err == DDMC_ETOOBIG ? DDMC_EQFULL : b->data.err;
  if (err == 0 && b->count == 0) return 0;
  if (err == 0 && !atomic_load(&vm->ddm_active)) err = DDMC_ENOTCONN;
  if (err == 0) err = charge(vm, b->data.len);
  ddmc__send_ext *e = NULL;
  if (err == 0 && (e = ddmc__calloc(&vm->mem, 1, sizeof(*e))) == NULL) {
    atomic_fetch_sub_explicit(&vm->ext_bytes, b->data.len, memory_order_relaxed);
    err = DDMC_ENOMEM;
  }
  if (err == 0) {
    e->is_batch = 1;
    e->batch = b->data;
    e->charged = b->data.len;
    if ((err = append_ext(vm, ddm_target(), e)) != 0) {
      atomic_fetch_sub_explicit(&vm->ext_bytes, e->charged, memory_order_relaxed);
      ddmc__free(&vm->mem, e);
    } else {
      b->count = 0;
      return 0; /* the record owns the data now */
    }
  }
  if (err == DDMC_EQFULL) atomic_fetch_add_explicit(&vm->ring.dropped, b->count, memory_order_relaxed);
  ddmc__send_batch_discard(b);
  return err;
}

void ddmc__send_ext_finish(ddmc_vm *vm, ddmc__send_ext *e, int status) {
  if (e->is_batch) {
    ddmc__buf_free(&e->batch);
  } else {
    /* Counted once its owner has let go of it: who sees the count sees the transfer gone. */
    e->src.done(e->src.ud, status);
    if (status != 0) atomic_fetch_add_explicit(&vm->st_transfers_dropped, 1, memory_order_release);
  }
  if (e->charged) atomic_fetch_sub_explicit(&vm->ext_bytes, e->charged, memory_order_relaxed);
  ddmc__free(&vm->mem, e);
}

void ddmc__send_drop(void *vm, ddmc__send_rec *rec) {
  if (ddmc__send_rec_kind(rec) != DDMC__REC_EXT) return;
  ddmc__send_ext *e;
  memcpy(&e, ddmc__send_rec_data(rec), sizeof(e));
  ddmc__send_ext_finish(vm, e, DDMC_ENOTCONN);
}

int ddmc_send_chunk(ddmc_vm *vm, ddmc_chunk_type type, const void *data, size_t len) {
  if (vm == NULL || (data == NULL && len > 0)) return DDMC_EINVAL;
  ddmc_iov iov = {data, len};
  return send_ddm(vm, type, &iov, 1);
}

int ddmc_send_chunkv(ddmc_vm *vm, ddmc_chunk_type type, const ddmc_iov *iov, int iovcnt) {
  if (vm == NULL || iovcnt < 0 || (iov == NULL && iovcnt > 0)) return DDMC_EINVAL;
  return send_ddm(vm, type, iov, iovcnt);
}

int ddmc__send_flush(ddmc_vm *vm, int timeout_ms) {
  unsigned want = atomic_fetch_add(&vm->flush_seq, 1) + 1;
  uint32_t session = atomic_load(&vm->session_no);
  ddmc__wake_force(vm);
  int64_t deadline = ddmc__now_ms() + timeout_ms;
  for (;;) {
    if ((int)(atomic_load(&vm->flushed_seq) - want) >= 0) return 0;
    if (session == 0 || atomic_load(&vm->session_no) != session) return DDMC_ENOTCONN;
    if (ddmc__now_ms() >= deadline) return DDMC_ETIMEDOUT;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}
