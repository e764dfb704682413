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
  if (n >= vm->opt.zlib_threshold && s->zlib && payload != s->zbuf.p) {
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

static int reply_into(ddmc__jdwp_session *s, ddmc_buf *dst, uint32_t id, uint16_t error, const uint8_t *payload,
                      size_t n) {
  if (n > UINT32_MAX - DDMC__HEADER_LEN) return DDMC_ETOOBIG;
  uint8_t *h = ddmc__buf_append(dst, DDMC__HEADER_LEN + n);
  if (h == NULL) return dst->err;
  ddmc__jdwp_reply_header_write(h, (uint32_t)(DDMC__HEADER_LEN + n), id, error);
  if (n) memcpy(h + DDMC__HEADER_LEN, payload, n);
  count_packet(s->vm);
  return 0;
}

int ddmc__jdwp_out_reply(ddmc__jdwp_session *s, uint32_t id, uint16_t error, const uint8_t *payload, size_t n) {
  return reply_into(s, &s->out, id, error, payload, n);
}

static uint8_t *cmd_header(ddmc__jdwp_session *s, ddmc_buf *dst, uint8_t set, uint8_t cmd, size_t n) {
  uint8_t *h = ddmc__buf_append(dst, DDMC__HEADER_LEN + n);
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
  memcpy(&e, ddmc__send_rec_data(rec), sizeof(e));
  return e;
}

/* Where a session's packets go: while it sends a batch or stream, behind it (later). */
static ddmc_buf *dst_of(ddmc__jdwp_session *s) { return s->ext != NULL ? &s->later : &s->out; }

static int emit(ddmc__jdwp_session *s, ddmc__send_rec *rec, uint32_t kind) {
  const uint8_t *d = ddmc__send_rec_data(rec);
  ddmc_buf *dst = dst_of(s);
  uint8_t *p;
  switch (kind) {
    case DDMC__REC_DDM: return ddmc__jdwp_out_ddm(s, dst, 0, fresh_id(s->vm), rec->a, d, rec->len);
    case DDMC__REC_CMD:
      if ((p = cmd_header(s, dst, (uint8_t)(rec->a >> 8), (uint8_t)rec->a, rec->len)) == NULL) return dst->err;
      if (rec->len) memcpy(p, d, rec->len);
      return 0;
    case DDMC__REC_REPLY: return reply_into(s, dst, rec->a, (uint16_t)rec->c, d, rec->len);
    default: return DDMC_EPROTO; /* cannot happen: the ring hands out only published kinds */
  }
}

/* ---- fan-out: the one queue to the sessions each record is for (docs/sessions.md) */

typedef struct fan {
  ddmc__jdwp_session **all;
  int n;
  uint32_t seat; /* the debugger seat's session number */
  int confirmed; /* its holder has changed the VM's world: events may be on their way to it */
} fan;

static fan fan_of(ddmc__jdwp_session *s, ddmc__jdwp_session **one) {
  fan f = {one, 1, s->number, 1};
  one[0] = s;
  if (s->set != NULL) {
    f.all = s->set->s;
    f.n = s->set->n;
    f.seat = s->set->seat;
    f.confirmed = s->set->seat_confirmed;
  }
  return f;
}

/* Unsolicited DDM traffic is for sessions that spoke DDM (a session on its own always has). */
static int wants_ddm(const ddmc__jdwp_session *s) { return s->number != 0 && (s->ddm || s->set == NULL); }

static ddmc__jdwp_session *numbered(const fan *f, uint32_t n) {
  for (int i = 0; i < f->n && n != 0; i++)
    if (f->all[i]->number == n) return f->all[i];
  return NULL;
}

/* The sessions rec is for, into t; returns how many. A record with a session number goes to that
 * session only (gone: to none); DDM chunks without one go to every DDM session, a JDWP command or
 * reply to the debugger seat, a DDM stream to the first DDM session (a stream is read once). */
static int targets(const fan *f, ddmc__send_rec *rec, uint32_t kind, ddmc__jdwp_session **t) {
  if (rec->b != 0) {
    t[0] = numbered(f, rec->b);
    return t[0] != NULL;
  }
  int broadcast = kind == DDMC__REC_DDM;
  if (kind == DDMC__REC_EXT) {
    const ddmc__send_ext *e = ext_of(rec);
    if (!e->is_batch && e->set != 0) broadcast = -1; /* a JDWP command stream: the debugger's */
    else broadcast = e->is_batch ? 1 : 2;
  }
  if (broadcast <= 0) {
    t[0] = numbered(f, f->seat);
    return t[0] != NULL;
  }
  int k = 0;
  for (int i = 0; i < f->n && (broadcast == 1 || k == 0); i++)
    if (wants_ddm(f->all[i])) t[k++] = f->all[i];
  return k;
}

/* A session whose output is full: the debugger (and a session alone) holds the queue until it has
 * room, since events cannot be dropped under a debugger; any other loses the record. */
static int lossless(const fan *f, const ddmc__jdwp_session *s) {
  return f->n == 1 || (s->number == f->seat && f->confirmed);
}

static int full(const ddmc__jdwp_session *s, uint32_t kind) {
  if (kind == DDMC__REC_EXT && s->ext != NULL) return 1;
  return s->ext != NULL ? s->later.len >= DDMC__OUT_HIGH_WATER : ddmc__jdwp_session_pending(s) >= DDMC__OUT_HIGH_WATER;
}

static void end_with(ddmc__jdwp_session *s, int rc) {
  if (rc != 0 && s->why == 0) s->why = rc;
}

/* Hands an external record to its sessions (a batch is shared: each keeps its own offset). */
static void hand_ext(ddmc_vm *vm, ddmc__send_ext *e, ddmc__jdwp_session **t, int k) {
  e->users = 0;
  for (int i = 0; i < k; i++) {
    if (t[i] == NULL) continue;
    t[i]->ext = e;
    t[i]->ext_off = 0;
    e->users++;
  }
  if (e->users == 0) ddmc__send_ext_finish(vm, e, DDMC_ENOTCONN);
}

/* Moves records to their sessions; returns 0, or 1 when a full lossless session holds the queue. */
static int fan_out(ddmc_vm *vm, const fan *f, int inline_only) {
  ddmc__send_rec *rec;
  ddmc__jdwp_session *t[DDMC__SESSIONS_MAX];
  int held = 0;
  while ((rec = ddmc__send_ring_peek(&vm->ring)) != NULL) {
    uint32_t kind = ddmc__send_rec_kind(rec);
    if (kind == DDMC__REC_EXT && inline_only) break;
    int k = targets(f, rec, kind, t);
    for (int i = 0; i < k && !held; i++) {
      if (!full(t[i], kind)) continue;
      if (lossless(f, t[i])) {
        held = 1;
      } else {
        t[i]->lost++;
        atomic_fetch_add_explicit(&vm->ring.dropped, 1, memory_order_relaxed);
        t[i] = NULL;
      }
    }
    if (held) break;
    if (kind == DDMC__REC_EXT) {
      ddmc__send_ext *e = ext_of(rec);
      ddmc__send_ring_pop(&vm->ring);
      hand_ext(vm, e, t, k);
      continue;
    }
    for (int i = 0; i < k; i++)
      if (t[i] != NULL) end_with(t[i], emit(t[i], rec, kind));
    ddmc__send_ring_pop(&vm->ring);
  }
  ddmc__send_ring_release(&vm->ring);
  return held;
}

/* Continues the batch or stream in s->ext while out has room. */
static int pump(ddmc__jdwp_session *s);

int ddmc__jdwp_session_drain_queue(ddmc__jdwp_session *s, int inline_only) {
  ddmc__jdwp_session *one[1];
  fan f = fan_of(s, one);
  for (int round = 0; round < 2; round++) {
    if (!inline_only)
      for (int i = 0; i < f.n; i++)
        if (f.all[i]->ext != NULL && f.all[i]->why == 0) end_with(f.all[i], pump(f.all[i]));
    /* A second round only when a transfer ended with room left: what waited behind it moves. */
    int ext_before = 0, ext_after = 0;
    for (int i = 0; i < f.n; i++) ext_before += f.all[i]->ext != NULL;
    fan_out(s->vm, &f, inline_only);
    for (int i = 0; i < f.n; i++) ext_after += f.all[i]->ext != NULL;
    if (inline_only || ext_after <= ext_before) break;
  }
  return s->why;
}

/* Next chunk of a batch: [u4 type][u4 len][payload]. */
static int pump_batch(ddmc__jdwp_session *s, ddmc__send_ext *e) {
  while (s->ext_off < e->batch.len && ddmc__jdwp_session_pending(s) < DDMC__OUT_HIGH_WATER) {
    const uint8_t *p = e->batch.p + s->ext_off;
    uint32_t type = ddmc__get_u32(p), n = ddmc__get_u32(p + 4);
    int rc = ddmc__jdwp_out_ddm(s, &s->out, 0, fresh_id(s->vm), type, p + 8, n);
    if (rc != 0) return rc;
    s->ext_off += 8 + (size_t)n;
  }
  return s->ext_off < e->batch.len ? 1 : 0;
}

#define STREAM_PIECE ((size_t)64 << 10)

static int pump_stream(ddmc__jdwp_session *s, ddmc__send_ext *e) {
  if (!e->started) { /* the header, once */
    uint8_t *h;
    if (e->set == 0) {
      if ((h = ddmc__buf_append(&s->out, DDMC__DDM_HEADER_LEN)) == NULL) return s->out.err;
      ddmc__jdwp_ddm_header_write(h, fresh_id(s->vm), e->type, (uint32_t)e->len);
      count_packet(s->vm);
    } else if (cmd_header(s, &s->out, e->set, e->cmd, 0) != NULL) {
      ddmc__put_u32(s->out.p + s->out.len - DDMC__HEADER_LEN, (uint32_t)(DDMC__HEADER_LEN + e->len));
    } else {
      return s->out.err;
    }
    e->started = 1;
  }
  while (e->sent < e->len && ddmc__jdwp_session_pending(s) < DDMC__OUT_HIGH_WATER) {
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

/* s stops sending its transfer: the last session to let go of it ends it. */
static void let_go(ddmc__jdwp_session *s, int status) {
  ddmc__send_ext *e = s->ext;
  s->ext = NULL;
  if (--e->users <= 0) ddmc__send_ext_finish(s->vm, e, status);
}

static int pump(ddmc__jdwp_session *s) {
  ddmc__send_ext *e = s->ext;
  if (e == NULL) return 0;
  int rc = e->is_batch ? pump_batch(s, e) : pump_stream(s, e);
  if (rc == 1) return 0; /* more when the socket drains */
  let_go(s, rc);
  if (rc != 0) return rc; /* a packet cut short cannot be taken back: the session ends */
  /* What waited behind the transfer goes out now, in its order. */
  if (s->later.len > 0) {
    rc = ddmc_buf_put_bytes(&s->out, s->later.p, s->later.len);
    ddmc__buf_reset(&s->later);
  }
  return rc;
}

void ddmc__jdwp_session_drop_output(ddmc__jdwp_session *s, int why) {
  ddmc_vm *vm = s->vm;
  if (s->ext != NULL) {
    atomic_fetch_add_explicit(&vm->ring.dropped, 1, memory_order_relaxed);
    let_go(s, why ? why : DDMC_ENOTCONN);
  }
  /* The queue closes with the last session; until then what was queued for this one is dropped
   * as it comes up (its number names no session). */
  if (s->set == NULL || s->set->n <= 1) ddmc__send_ring_close(&vm->ring);
}
