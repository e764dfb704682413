/* Routing packets: DDM (command set 199, command 1) to chunk handlers, every other command set
 * to the VM's JDWP hook; and the send path for unsolicited chunks from any VM thread.
 *
 * Replies: one per request, echoing its id. A DDM reply carries at most one chunk (ddmlib reads
 * only the first chunk of a packet, to the packet's end). A request packet may hold several
 * chunks (the draft allows it): each is handled in order; the first one that produces data
 * answers in the reply, and the data of any later one follows as an unsolicited packet, so
 * nothing is lost and every packet still holds one chunk. */
#include <string.h>

#include "jdwp/session.h"

/* ---- send path (any thread) */

static int make_packet(ddmc_vm *vm, uint32_t type, const ddmc_iov *iov, int iovcnt, ddmc__qpkt **out) {
  size_t n = 0;
  for (int i = 0; i < iovcnt; i++) {
    if (iov[i].len > SIZE_MAX - n) return DDMC_ETOOBIG;
    n += iov[i].len;
  }
  if (n > UINT32_MAX - DDMC__DDM_HEADER_LEN || n + DDMC__DDM_HEADER_LEN > vm->opt.sendq_bytes)
    return DDMC_ETOOBIG;
  ddmc__qpkt *p = ddmc__qpkt_new(&vm->mem, DDMC__DDM_HEADER_LEN + n);
  if (p == NULL) return DDMC_ENOMEM;
  uint32_t id = atomic_fetch_add_explicit(&vm->next_id, 1, memory_order_relaxed);
  ddmc__ddm_header_write(p->data, id, type, (uint32_t)n);
  uint8_t *d = p->data + DDMC__DDM_HEADER_LEN;
  for (int i = 0; i < iovcnt; i++) {
    if (iov[i].len) memcpy(d, iov[i].base, iov[i].len);
    d += iov[i].len;
  }
  *out = p;
  return 0;
}

int ddmc__send_chunk_iov(ddmc_vm *vm, uint32_t type, const ddmc_iov *iov, int iovcnt) {
  /* Nobody listening: one atomic read and out, so VMs can call this on hot paths. */
  if (!atomic_load_explicit(&vm->ddm_active, memory_order_acquire)) return DDMC_ENOTCONN;
  ddmc__qpkt *p;
  int rc = make_packet(vm, type, iov, iovcnt, &p);
  if (rc != 0) return rc;
  rc = ddmc__sendq_push(&vm->q, p, p, p->len, 1);
  if (rc != 0) {
    ddmc__free(&vm->mem, p);
    return rc;
  }
  ddmc__wake(vm);
  return 0;
}

int ddmc_send_chunk(ddmc_vm *vm, ddmc_chunk_type type, const void *data, size_t len) {
  if (vm == NULL || (data == NULL && len > 0)) return DDMC_EINVAL;
  ddmc_iov iov = {data, len};
  return ddmc__send_chunk_iov(vm, type, &iov, 1);
}

int ddmc_send_chunkv(ddmc_vm *vm, ddmc_chunk_type type, const ddmc_iov *iov, int iovcnt) {
  if (vm == NULL || iovcnt < 0 || (iov == NULL && iovcnt > 0)) return DDMC_EINVAL;
  return ddmc__send_chunk_iov(vm, type, iov, iovcnt);
}

void ddmc__batch_init(ddmc__batch *b, ddmc_vm *vm) {
  memset(b, 0, sizeof(*b));
  b->vm = vm;
}

int ddmc__batch_add(ddmc__batch *b, uint32_t type, const void *data, size_t len) {
  if (b->err) return b->err;
  ddmc_iov iov = {data, len};
  ddmc__qpkt *p;
  int rc = make_packet(b->vm, type, &iov, 1, &p);
  if (rc != 0) return b->err = rc;
  if (b->last) ddmc__qpkt_link(b->last, p);
  else b->first = p;
  b->last = p;
  b->bytes += p->len;
  b->count++;
  if (b->bytes > b->vm->opt.sendq_bytes) return b->err = DDMC_EQFULL; /* cannot ever fit */
  return 0;
}

void ddmc__batch_discard(ddmc__batch *b) {
  ddmc__qpkt_free_chain(&b->vm->mem, b->first);
  b->first = b->last = NULL;
  b->bytes = b->count = 0;
}

int ddmc__batch_commit(ddmc__batch *b) {
  int rc = b->err;
  if (rc == DDMC_EQFULL) atomic_fetch_add_explicit(&b->vm->q.dropped, b->count, memory_order_relaxed);
  if (rc == 0 && b->first != NULL) rc = ddmc__sendq_push(&b->vm->q, b->first, b->last, b->bytes, b->count);
  if (rc != 0) {
    ddmc__batch_discard(b);
    return rc;
  }
  b->first = b->last = NULL;
  if (b->count) ddmc__wake(b->vm);
  return 0;
}

/* ---- output (JDWP thread) */

int ddmc__session_append_ddm_packet(ddmc__session *s, ddmc_buf *dst, int is_reply, uint32_t id, uint32_t type,
                                    const uint8_t *payload, size_t n) {
  ddmc_vm *vm = s->vm;
  /* A peer that opted in gets big chunks compressed; everyone else gets them as they are. */
  if (n >= vm->opt.zlib_threshold && atomic_load(&vm->zlib_peer) && payload != s->zbuf.p) {
    ddmc__buf_reset(&s->zbuf);
    if (ddmc__zlib_wrap(type, payload, n, &s->zbuf) == 0 && s->zbuf.len < n) {
      type = DDMC__CHUNK_ZLIB;
      payload = s->zbuf.p;
      n = s->zbuf.len;
    }
  }
  if (n > UINT32_MAX - DDMC__DDM_HEADER_LEN) return DDMC_ETOOBIG;
  uint8_t *h = ddmc__buf_append(dst, DDMC__DDM_HEADER_LEN);
  if (h == NULL) return dst->err;
  if (is_reply) {
    ddmc__reply_header_write(h, (uint32_t)(DDMC__DDM_HEADER_LEN + n), id, 0);
    ddmc__put_u32(h + 11, type);
    ddmc__put_u32(h + 15, (uint32_t)n);
  } else {
    ddmc__ddm_header_write(h, id, type, (uint32_t)n);
  }
  ddmc_buf_put_bytes(dst, payload, n);
  atomic_fetch_add_explicit(&vm->st_packets_out, 1, memory_order_relaxed);
  return dst->err;
}

int ddmc__session_drain_queue(ddmc__session *s) {
  ddmc_vm *vm = s->vm;
  size_t bytes;
  ddmc__qpkt *chain = ddmc__sendq_take(&vm->q, &bytes);
  if (chain == NULL) return 0;
  int zlib = atomic_load(&vm->zlib_peer);
  int rc = 0;
  for (ddmc__qpkt *p = chain; p != NULL && rc == 0; p = ddmc__qpkt_next(p)) {
    size_t n = p->len - DDMC__DDM_HEADER_LEN;
    if (zlib && n >= vm->opt.zlib_threshold) {
      rc = ddmc__session_append_ddm_packet(s, &s->out, 0, ddmc__get_u32(p->data + 4), ddmc__get_u32(p->data + 11),
                                           p->data + DDMC__DDM_HEADER_LEN, n);
    } else {
      rc = ddmc_buf_put_bytes(&s->out, p->data, p->len);
      atomic_fetch_add_explicit(&vm->st_packets_out, 1, memory_order_relaxed);
    }
  }
  ddmc__qpkt_free_chain(&vm->mem, chain);
  return rc;
}

static int append_bare_reply(ddmc__session *s, uint32_t id, uint16_t error) {
  uint8_t *h = ddmc__buf_append(&s->out, DDMC__HEADER_LEN);
  if (h == NULL) return s->out.err;
  ddmc__reply_header_write(h, DDMC__HEADER_LEN, id, error);
  atomic_fetch_add_explicit(&s->vm->st_packets_out, 1, memory_order_relaxed);
  return 0;
}

/* ---- DDM requests */

static void fail_into(ddmc_buf *b, uint32_t *type, int32_t code, const char *msg) {
  ddmc__buf_reset(b);
  ddmc_reply_fail(b, type, code, msg);
}

/* Runs one chunk; its reply payload (if any) is in b with *rtype. */
static void handle_chunk(ddmc__session *s, uint32_t type, const uint8_t *data, size_t len, int depth,
                         uint32_t *rtype, ddmc_buf *b) {
  ddmc_vm *vm = s->vm;
  ddmc__buf_reset(b);
  if (type == DDMC__CHUNK_ZLIB) {
    /* Receiving a ZLIB chunk is how a peer says it reads them too (see chunks/zlib.c). */
    atomic_store(&vm->zlib_peer, 1);
    uint32_t inner;
    ddmc_buf tmp;
    ddmc__buf_init(&tmp, &vm->mem, UINT32_MAX - 64);
    int rc = depth > 0 ? DDMC_EPROTO : ddmc__zlib_unwrap(&vm->mem, data, len, vm->opt.max_packet, &inner, &tmp);
    if (rc != 0) {
      ddmc__buf_free(&tmp);
      fail_into(b, rtype, rc, depth > 0 ? "nested ZLIB chunk" : "bad ZLIB chunk");
      return;
    }
    handle_chunk(s, inner, tmp.p, tmp.len, depth + 1, rtype, b);
    ddmc__buf_free(&tmp);
    return;
  }
  ddmc_chunk req = {type, data, len};
  *rtype = type;
  int rc = ddmc__registry_dispatch(vm, &req, rtype, b);
  if (rc == DDMC_ENOENT) {
    ddmc__buf_reset(b); /* unknown type: the empty success reply, as Dalvik */
  } else if (rc == 0 && b->err != 0) {
    fail_into(b, rtype, b->err, ddmc_strerror(b->err));
  } else if (rc < 0) {
    fail_into(b, rtype, rc, ddmc_strerror(rc));
  }
}

static int handle_ddm(ddmc__session *s, const ddmc__packet *pkt) {
  ddmc_vm *vm = s->vm;
  if (!atomic_load(&vm->ddm_active)) {
    atomic_store_explicit(&vm->ddm_active, 1, memory_order_release);
    ddmc__registry_connected(vm);
    if (atomic_load(&vm->waiting)) ddmc__send_wait(vm);
  }
  ddmc_reader r;
  ddmc_reader_init(&r, pkt->body, pkt->body_len);
  ddmc__buf_reset(&s->reply);
  ddmc__buf_reset(&s->extra);
  uint32_t reply_type = 0;
  int have_reply = 0;
  if (pkt->body_len == 0) {
    fail_into(&s->reply, &reply_type, DDMC_EPROTO, "empty DDM packet");
    have_reply = 1;
  }
  while (ddmc_reader_left(&r) > 0) {
    size_t left = ddmc_reader_left(&r);
    if (left < 8) {
      if (!have_reply) fail_into(&s->reply, &reply_type, DDMC_EPROTO, "truncated chunk header");
      have_reply = 1;
      break;
    }
    uint32_t type = ddmc_read_u32(&r);
    uint32_t len = ddmc_read_u32(&r);
    if (len > left - 8) { /* written so that a u4 length cannot wrap */
      if (!have_reply) fail_into(&s->reply, &reply_type, DDMC_EPROTO, "chunk length past the end of the packet");
      have_reply = 1;
      break;
    }
    const uint8_t *data = ddmc_read_bytes(&r, len);
    uint32_t rtype;
    ddmc_buf *b = have_reply ? &s->hbuf : &s->reply;
    handle_chunk(s, type, data, len, 0, &rtype, b);
    if (atomic_load(&vm->stopping)) break;
    if (b->len == 0) continue;
    if (!have_reply) {
      reply_type = rtype;
      have_reply = 1;
    } else {
      uint32_t id = atomic_fetch_add_explicit(&vm->next_id, 1, memory_order_relaxed);
      int rc = ddmc__session_append_ddm_packet(s, &s->extra, 0, id, rtype, s->hbuf.p, s->hbuf.len);
      if (rc != 0) return rc;
    }
  }
  /* Chunks the handlers queued (HPIF now, THCRs, WAIT) go out before the reply, in the order
   * Dalvik produced them. */
  int rc = ddmc__session_drain_queue(s);
  if (rc != 0) return rc;
  if (have_reply && s->reply.len > 0)
    rc = ddmc__session_append_ddm_packet(s, &s->out, 1, pkt->id, reply_type, s->reply.p, s->reply.len);
  else
    rc = append_bare_reply(s, pkt->id, 0);
  if (rc == 0 && s->extra.len > 0) rc = ddmc_buf_put_bytes(&s->out, s->extra.p, s->extra.len);
  return rc;
}

/* ---- other command sets: a debugger */

static int handle_jdwp(ddmc__session *s, const ddmc__packet *pkt) {
  ddmc_vm *vm = s->vm;
  atomic_store(&vm->last_activity, 0); /* "busy" while the request is processed */
  if (!atomic_load(&vm->debugger_active)) {
    pthread_mutex_lock(&vm->state_lock);
    atomic_store(&vm->debugger_active, 1);
    pthread_cond_broadcast(&vm->state_cond); /* ddmc_wait_for_debugger */
    pthread_mutex_unlock(&vm->state_lock);
    ddmc__log(vm, DDMC_LOG_INFO, "JDWP: debugger active (command set %u)", pkt->cmd_set);
    if (vm->ops.debugger_attached) vm->ops.debugger_attached(vm->vm_data);
  }
  ddmc__buf_reset(&s->reply);
  int err = DDMC_JDWP_NOT_IMPLEMENTED;
  if (vm->ops.jdwp_command)
    err = vm->ops.jdwp_command(vm->vm_data, pkt->cmd_set, pkt->cmd, pkt->body, pkt->body_len, &s->reply);
  if (err == 0 && s->reply.err != 0) err = s->reply.err == DDMC_ENOMEM ? DDMC_JDWP_OUT_OF_MEMORY : DDMC_JDWP_INTERNAL;
  if (err < 0 || err > 0xffff) err = DDMC_JDWP_INTERNAL;
  int64_t now = ddmc__now_ms();
  atomic_store(&vm->last_activity, now != 0 ? now : 1);
  int rc = ddmc__session_drain_queue(s);
  if (rc != 0) return rc;
  if (err != 0 || s->reply.len == 0) return append_bare_reply(s, pkt->id, (uint16_t)err);
  if (s->reply.len > UINT32_MAX - DDMC__HEADER_LEN) return append_bare_reply(s, pkt->id, DDMC_JDWP_INTERNAL);
  uint8_t *h = ddmc__buf_append(&s->out, DDMC__HEADER_LEN);
  if (h == NULL) return s->out.err;
  ddmc__reply_header_write(h, (uint32_t)(DDMC__HEADER_LEN + s->reply.len), pkt->id, 0);
  atomic_fetch_add_explicit(&vm->st_packets_out, 1, memory_order_relaxed);
  return ddmc_buf_put_bytes(&s->out, s->reply.p, s->reply.len);
}

int ddmc__session_packet(ddmc__session *s, const ddmc__packet *pkt) {
  /* A reply from the peer: we never ask the peer anything that needs one, so it is consumed
   * and ignored (Dalvik ignored them too; ART aborted). */
  if (pkt->flags & DDMC__FLAG_REPLY) return 0;
  if (pkt->cmd_set == DDMC__DDM_CMDSET && pkt->cmd == DDMC__DDM_CMD) return handle_ddm(s, pkt);
  return handle_jdwp(s, pkt);
}
