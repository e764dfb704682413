/* SPDX-License-Identifier: Apache-2.0 */
/* What goes out to a peer: replies written by the dispatcher, and the packets VM threads queued
 * (send/send.h), whose JDWP headers are written here, when they are sent. */
#include <string.h>

#include "jdwp/session.h"

static void count_packet(ddmc_vm *vm) { atomic_fetch_add_explicit(&vm->st_packets_out, 1, memory_order_relaxed); }

static uint32_t fresh_id(ddmc_vm *vm) { return atomic_fetch_add_explicit(&vm->next_id, 1, memory_order_relaxed); }

int ddmc__jdwp_out_ddm(ddmc__jdwp_session *s, ddmc_buf *dst, int is_reply, uint32_t id, uint32_t type,
                       const uint8_t *payload, size_t n) {
  ddmc_vm *vm = s->vm;
  /* A peer that opted in gets big chunks compressed; everyone else gets them as they are. */
  if (n >= vm->opt.zlib_threshold && atomic_load(&vm->zlib_peer) && payload != s->zbuf.p) {
    ddmc__buf_reset(&s->zbuf);
    if (ddmc__chunk_zlib_wrap(type, payload, n, &s->zbuf) == 0 && s->zbuf.len < n) {
      type = DDMC__CHUNK_ZLIB;
      payload = s->zbuf.p;
      n = s->zbuf.len;
    }
  }
  if (n > UINT32_MAX - DDMC__DDM_HEADER_LEN) return DDMC_ETOOBIG;
  uint8_t *h = ddmc__buf_append(dst, DDMC__DDM_HEADER_LEN + n);
  if (h == NULL) return dst->err;
  if (is_reply) {
    ddmc__jdwp_reply_header_write(h, (uint32_t)(DDMC__DDM_HEADER_LEN + n), id, 0);
    ddmc__put_u32(h + 11, type);
    ddmc__put_u32(h + 15, (uint32_t)n);
  } else {
    ddmc__jdwp_ddm_header_write(h, id, type, (uint32_t)n);
  }
  if (n) memcpy(h + DDMC__DDM_HEADER_LEN, payload, n);
  count_packet(vm);
  return 0;
}

int ddmc__jdwp_out_reply(ddmc__jdwp_session *s, uint32_t id, uint16_t error, const uint8_t *payload, size_t n) {
  if (n > UINT32_MAX - DDMC__HEADER_LEN) return DDMC_ETOOBIG;
  uint8_t *h = ddmc__buf_append(&s->out, DDMC__HEADER_LEN + n);
  if (h == NULL) return s->out.err;
  ddmc__jdwp_reply_header_write(h, (uint32_t)(DDMC__HEADER_LEN + n), id, error);
  if (n) memcpy(h + DDMC__HEADER_LEN, payload, n);
  count_packet(s->vm);
  return 0;
}

static uint8_t *cmd_header(ddmc__jdwp_session *s, uint8_t set, uint8_t cmd, size_t n) {
  uint8_t *h = ddmc__buf_append(&s->out, DDMC__HEADER_LEN + n);
  if (h == NULL) return NULL;
  ddmc__put_u32(h, (uint32_t)(DDMC__HEADER_LEN + n));
  ddmc__put_u32(h + 4, fresh_id(s->vm));
  h[8] = 0;
  h[9] = set;
  h[10] = cmd;
  count_packet(s->vm);
  return h + DDMC__HEADER_LEN;
}

static ddmc__send_ext *ext_of(ddmc__send_rec *rec) {
  ddmc__send_ext *e;
  memcpy(&e, ddmc__rec_data(rec), sizeof(e));
  return e;
}

/* A queued packet for a session that has ended is not for this peer. */
static int stale(const ddmc__jdwp_session *s, const ddmc__send_rec *rec) { return rec->b != 0 && rec->b != s->number; }

static int emit(ddmc__jdwp_session *s, ddmc__send_rec *rec, uint32_t kind) {
  const uint8_t *d = ddmc__rec_data(rec);
  uint8_t *p;
  switch (kind) {
    case DDMC__REC_DDM: return ddmc__jdwp_out_ddm(s, &s->out, 0, fresh_id(s->vm), rec->a, d, rec->len);
    case DDMC__REC_CMD:
      if (stale(s, rec)) return 0;
      if ((p = cmd_header(s, (uint8_t)(rec->a >> 8), (uint8_t)rec->a, rec->len)) == NULL) return s->out.err;
      if (rec->len) memcpy(p, d, rec->len);
      return 0;
    case DDMC__REC_REPLY:
      if (stale(s, rec)) return 0;
      return ddmc__jdwp_out_reply(s, rec->a, (uint16_t)rec->c, d, rec->len);
    default: return DDMC_EPROTO; /* cannot happen: the ring hands out only published kinds */
  }
}

/* Continues the batch or stream in s->ext while out has room. */
static int pump(ddmc__jdwp_session *s);

int ddmc__jdwp_session_drain_queue(ddmc__jdwp_session *s, int inline_only) {
  ddmc_vm *vm = s->vm;
  if (s->ext != NULL) return inline_only ? 0 : pump(s);
  ddmc__send_rec *rec;
  int rc = 0;
  while (rc == 0 && ddmc__session_pending(s) < DDMC__OUT_HIGH_WATER &&
         (rec = ddmc__send_ring_peek(&vm->ring)) != NULL) {
    uint32_t kind = ddmc__send_rec_kind(rec);
    if (kind != DDMC__REC_EXT) {
      rc = emit(s, rec, kind);
      ddmc__send_ring_pop(&vm->ring);
      continue;
    }
    if (inline_only) break;
    ddmc__send_ext *e = ext_of(rec);
    int old = stale(s, rec);
    ddmc__send_ring_pop(&vm->ring);
    if (old) {
      ddmc__send_ext_finish(vm, e, DDMC_ENOTCONN);
      continue;
    }
    s->ext = e;
    ddmc__send_ring_release(&vm->ring);
    return pump(s); /* which comes back here when the payload is out */
  }
  ddmc__send_ring_release(&vm->ring);
  return rc;
}

/* Next chunk of a batch: [u4 type][u4 len][payload]. */
static int pump_batch(ddmc__jdwp_session *s, ddmc__send_ext *e) {
  while (e->off < e->batch.len && ddmc__session_pending(s) < DDMC__OUT_HIGH_WATER) {
    const uint8_t *p = e->batch.p + e->off;
    uint32_t type = ddmc__get_u32(p), n = ddmc__get_u32(p + 4);
    int rc = ddmc__jdwp_out_ddm(s, &s->out, 0, fresh_id(s->vm), type, p + 8, n);
    if (rc != 0) return rc;
    e->off += 8 + (size_t)n;
  }
  return e->off < e->batch.len ? 1 : 0;
}

#define STREAM_PIECE ((size_t)64 << 10)

static int pump_stream(ddmc__jdwp_session *s, ddmc__send_ext *e) {
  if (!e->started) { /* the header, once */
    uint8_t *h;
    if (e->set == 0) {
      if ((h = ddmc__buf_append(&s->out, DDMC__DDM_HEADER_LEN)) == NULL) return s->out.err;
      ddmc__jdwp_ddm_header_write(h, fresh_id(s->vm), e->type, (uint32_t)e->len);
      count_packet(s->vm);
    } else if (cmd_header(s, e->set, e->cmd, 0) != NULL) {
      ddmc__put_u32(s->out.p + s->out.len - DDMC__HEADER_LEN, (uint32_t)(DDMC__HEADER_LEN + e->len));
    } else {
      return s->out.err;
    }
    e->started = 1;
  }
  while (e->sent < e->len && ddmc__session_pending(s) < DDMC__OUT_HIGH_WATER) {
    size_t want = (size_t)DDMC__MIN((uint64_t)STREAM_PIECE, e->len - e->sent);
    uint8_t *dst = ddmc__buf_append(&s->out, want);
    if (dst == NULL) return s->out.err;
    ssize_t got = e->src.read(e->src.ud, dst, want);
    if (got <= 0 || (size_t)got > want) {
      s->out.len -= want;
      return got < 0 ? (int)got : DDMC_EIO;
    }
    s->out.len -= want - (size_t)got;
    e->sent += (uint64_t)got;
  }
  return e->sent < e->len ? 1 : 0;
}

static int pump(ddmc__jdwp_session *s) {
  ddmc__send_ext *e = s->ext;
  if (e == NULL) return 0;
  int rc = e->is_batch ? pump_batch(s, e) : pump_stream(s, e);
  if (rc == 1) return 0; /* more when the socket drains */
  s->ext = NULL;
  ddmc__send_ext_finish(s->vm, e, rc);
  if (rc != 0) return rc; /* a packet cut short cannot be taken back: the session ends */
  return ddmc__jdwp_session_drain_queue(s, 0);
}

void ddmc__jdwp_session_drop_output(ddmc__jdwp_session *s, int why) {
  ddmc_vm *vm = s->vm;
  if (s->ext != NULL) {
    ddmc__send_ext_finish(vm, s->ext, why ? why : DDMC_ENOTCONN);
    atomic_fetch_add_explicit(&vm->ring.dropped, 1, memory_order_relaxed);
    s->ext = NULL;
  }
  ddmc__send_ring_close(&vm->ring);
}
