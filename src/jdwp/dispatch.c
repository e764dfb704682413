/* SPDX-License-Identifier: Apache-2.0 */
/* Routing packets: DDM (command set 199, command 1) to chunk handlers, every other command set
 * to the VM's JDWP hook; and the send path for unsolicited chunks from any VM thread.
 *
 * Replies: one per request, echoing its id. A DDM reply carries at most one chunk (ddmlib reads
 * only the first chunk of a packet, to the packet's end). A request packet may hold several
 * chunks (the draft allows it): each is handled in order; the first one that produces data
 * answers in the reply, and the data of any later one follows as an unsolicited packet, so
 * nothing is lost and every packet still holds one chunk. A packet's work is bounded
 * (DDMC__PACKET_CHUNKS, DDMC__PACKET_REPLY_BYTES): past either budget the rest is answered with one
 * FAIL and not run, so a packet of half a million chunks costs what 64 do. */
#include <string.h>

#include "jdwp/session.h"

/* ---- DDM requests */

static void fail_into(ddmc_buf *b, uint32_t *type, int32_t code, const char *msg) {
  ddmc__buf_reset(b);
  ddmc_reply_fail(b, type, code, msg);
}

/* Runs one chunk; its reply payload (if any) is in b with *rtype. */
static void handle_chunk(ddmc__jdwp_session *s, uint32_t type, const uint8_t *data, size_t len, int depth,
                         uint32_t *rtype, ddmc_buf *b) {
  ddmc_vm *vm = s->vm;
  ddmc__buf_reset(b);
  if (type == DDMC__CHUNK_ZLIB) {
    /* Receiving a ZLIB chunk is how a peer says it reads them too (see chunks/zlib.c). */
    s->zlib = 1;
    uint32_t inner;
    ddmc_buf tmp;
    ddmc__buf_init(&tmp, &vm->mem, UINT32_MAX - 64);
    int rc = depth > 0 ? DDMC_EPROTO : ddmc__chunk_zlib_unwrap(&vm->mem, data, len, vm->opt.max_packet, &inner, &tmp);
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
  if (type == DDMC_FOURCC('D', 'B', 'G', 'D') && s->set != NULL && s->set->seat != s->number) {
    /* DBGD drops the debugger's state: only the session that holds it may say it left. */
    fail_into(b, rtype, DDMC_ESTATE, "DBGD: this session is not the debugger");
    return;
  }
  if (type == DDMC_FOURCC('S', 'E', 'S', 'S')) {
    ddmc__jdwp_seat_describe(s, b); /* about the sessions: only this layer knows them */
    return;
  }
  int rc = ddmc__chunk_registry_dispatch(vm, &req, rtype, b);
  if (rc == DDMC_ENOENT) {
    ddmc__buf_reset(b); /* unknown type: the empty success reply, as Dalvik */
  } else if (rc == 0 && b->err != 0) {
    fail_into(b, rtype, b->err, ddmc_strerror(b->err));
  } else if (rc < 0) {
    fail_into(b, rtype, rc, ddmc_strerror(rc));
  }
}

/* Past a budget: one FAIL, as the reply or after it, and the rest of the packet is not run. */
static int over_budget(ddmc__jdwp_session *s, int *have_reply, uint32_t *reply_type, const char *why) {
  ddmc_vm *vm = s->vm;
  ddmc__log(vm, DDMC_LOG_WARN, "JDWP: %s", why);
  if (!*have_reply) {
    fail_into(&s->reply, reply_type, DDMC_ETOOBIG, why);
    *have_reply = 1;
    return 0;
  }
  uint32_t t;
  fail_into(&s->hbuf, &t, DDMC_ETOOBIG, why);
  return ddmc__jdwp_out_ddm(s, &s->extra, 0, atomic_fetch_add(&vm->next_id, 1), t, s->hbuf.p, s->hbuf.len);
}

/* A session's DDM packet: from now on unsolicited chunks are for it too. */
static void ddm_joins(ddmc__jdwp_session *s) {
  ddmc_vm *vm = s->vm;
  if (!s->ddm) {
    s->ddm = 1;
    if (s->set != NULL) s->set->nddm++;
  }
  if (!atomic_load(&vm->ddm_active)) {
    atomic_store_explicit(&vm->ddm_active, 1, memory_order_release);
    ddmc__chunk_registry_connected(vm);
  }
}

static int handle_ddm(ddmc__jdwp_session *s, const ddmc__jdwp_packet *pkt) {
  ddmc_vm *vm = s->vm;
  ddm_joins(s);
  ddmc_reader r;
  ddmc_reader_init(&r, pkt->body, pkt->body_len);
  ddmc__buf_reset(&s->reply);
  ddmc__buf_reset(&s->extra);
  uint32_t reply_type = 0;
  int have_reply = 0, nchunks = 0;
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
    if (nchunks++ == DDMC__PACKET_CHUNKS) {
      int rc = over_budget(s, &have_reply, &reply_type, "packet holds more than 64 chunks; the rest were not run");
      if (rc != 0) return rc;
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
      continue;
    }
    int rc;
    if (s->extra.len + DDMC__DDM_HEADER_LEN + s->hbuf.len > DDMC__PACKET_REPLY_BYTES) {
      if ((rc = over_budget(s, &have_reply, &reply_type,
                            "replies to one packet exceed 1 MiB; the rest were not run")) == 0)
        break;
    } else {
      rc = ddmc__jdwp_out_ddm(s, &s->extra, 0, atomic_fetch_add(&vm->next_id, 1), rtype, s->hbuf.p, s->hbuf.len);
    }
    if (rc != 0) return rc;
  }
  /* Chunks the handlers queued (HPIF now, THCRs, WAIT) go out before the reply, in the order
   * Dalvik produced them. */
  int rc = ddmc__jdwp_session_drain_queue(s, 1);
  if (rc != 0) return rc;
  /* A stream or batch a handler queued (a trace for MPSE) starts only between requests: the reply
   * waits in the queue behind it, so the data comes first, as from Dalvik. Only behind this
   * session's own transfer: anything else in the queue may wait on another session. */
  ddmc__send_rec *next = ddmc__send_ring_peek(&vm->ring);
  if (s->extra.len == 0 && next != NULL && ddmc__send_rec_kind(next) == DDMC__REC_EXT && next->b == s->number) {
    uint8_t h[8];
    ddmc_iov iov[2] = {{h, 8}, {s->reply.p, s->reply.len}};
    int chunk = have_reply && s->reply.len > 0;
    if (chunk) {
      ddmc__put_u32(h, reply_type);
      ddmc__put_u32(h + 4, (uint32_t)s->reply.len);
    }
    if (ddmc__send_reply(vm, s->number, pkt->id, 0, iov, chunk ? 2 : 0) == 0) return 0;
  }
  if (have_reply && s->reply.len > 0)
    rc = ddmc__jdwp_out_ddm(s, &s->out, 1, pkt->id, reply_type, s->reply.p, s->reply.len);
  else
    rc = ddmc__jdwp_out_reply(s, pkt->id, 0, NULL, 0);
  if (rc == 0 && s->extra.len > 0) rc = ddmc_buf_put_bytes(&s->out, s->extra.p, s->extra.len);
  return rc;
}

/* ---- other command sets: a debugger */

/* Runs a request through the services (the debugger claims 1-17) or the VM's own hook, and
 * queues its reply. */
static int answer(ddmc__jdwp_session *s, const ddmc__jdwp_packet *pkt) {
  ddmc_vm *vm = s->vm;
  ddmc__buf_reset(&s->reply);
  int err = DDMC_JDWP_NOT_IMPLEMENTED;
  const ddmc__jdwp_service *svc = NULL;
  for (int i = 0; i < vm->nservices && svc == NULL; i++)
    if (vm->services[i].claims && vm->services[i].claims(vm->services[i].ud, pkt->cmd_set)) svc = &vm->services[i];
  if (svc != NULL) {
    ddmc__jdwp_request rq = {pkt->cmd_set, pkt->cmd, pkt->id, pkt->body, pkt->body_len};
    err = svc->handle(vm, svc->ud, &rq, &s->reply);
  }
  /* What no service answers goes to the VM's own hook, the fallback for anything else. */
  if (err == DDMC_JDWP_NOT_IMPLEMENTED && vm->ops.jdwp_command) {
    ddmc__buf_reset(&s->reply);
    err = vm->ops.jdwp_command(vm->vm_data, pkt->cmd_set, pkt->cmd, pkt->body, pkt->body_len, &s->reply);
  }
  if (err == DDMC__REPLY_DEFERRED) return ddmc__jdwp_session_drain_queue(s, 1); /* answered later */
  if (err != 0) ddmc__buf_reset(&s->reply);
  if (err == 0 && s->reply.err != 0) err = s->reply.err == DDMC_ENOMEM ? DDMC_JDWP_OUT_OF_MEMORY : DDMC_JDWP_INTERNAL;
  if (err < 0 || err > 0xffff) err = DDMC_JDWP_INTERNAL;
  int rc = ddmc__jdwp_session_drain_queue(s, 1);
  if (rc != 0) return rc;
  if (err != 0) return ddmc__jdwp_out_reply(s, pkt->id, (uint16_t)err, NULL, 0);
  rc = ddmc__jdwp_out_reply(s, pkt->id, 0, s->reply.p, s->reply.len);
  /* A big answer (AllClasses of 100,000 classes: 2.7 MB) is not kept for the session's life. */
  ddmc__buf_reset(&s->reply);
  if (s->reply.cap > DDMC__KEEP_BYTES) s->trim_at = ddmc__now_ms() + DDMC__TRIM_DELAY_MS;
  return rc;
}

/* The debugger's request: "busy" while it runs, and debugger_active (wait_for_debugger) set. */
static int handle_debugger(ddmc__jdwp_session *s, const ddmc__jdwp_packet *pkt) {
  ddmc_vm *vm = s->vm;
  atomic_store(&vm->last_activity, 0); /* "busy" while the request is processed */
  if (!atomic_load(&vm->debugger_active)) {
    ddmc__lock(&vm->state_lock);
    atomic_store(&vm->debugger_active, 1);
    pthread_cond_broadcast(&vm->state_cond); /* ddmc_wait_for_debugger */
    ddmc__unlock(&vm->state_lock);
    ddmc__log(vm, DDMC_LOG_INFO, "JDWP: debugger active (command set %u)", pkt->cmd_set);
    if (vm->ops.debugger_attached) vm->ops.debugger_attached(vm->vm_data);
  }
  int rc = answer(s, pkt);
  int64_t now = ddmc__now_ms();
  atomic_store(&vm->last_activity, now != 0 ? now : 1);
  return rc;
}

static int handle_jdwp(ddmc__jdwp_session *s, const ddmc__jdwp_packet *pkt) {
  int as_debugger;
  int refused = ddmc__jdwp_seat_check(s, pkt->cmd_set, pkt->cmd, &as_debugger);
  if (refused != 0) {
    int rc = ddmc__jdwp_session_drain_queue(s, 1);
    if (rc != 0) return rc;
    return ddmc__jdwp_out_reply(s, pkt->id, refused < 0 ? 0 : (uint16_t)refused, NULL, 0);
  }
  return as_debugger ? handle_debugger(s, pkt) : answer(s, pkt);
}

int ddmc__jdwp_session_packet(ddmc__jdwp_session *s, const ddmc__jdwp_packet *pkt) {
  /* A reply from the peer: we never ask the peer anything that needs one, so it is consumed
   * and ignored (Dalvik ignored them too; ART aborted). */
  if (pkt->flags & DDMC__FLAG_REPLY) return 0;
  if (pkt->cmd_set == DDMC__DDM_CMDSET && pkt->cmd == DDMC__DDM_CMD) return handle_ddm(s, pkt);
  int rc = handle_jdwp(s, pkt);
  /* VirtualMachine.Dispose is a debugger's last word: the connection closes after the reply, as
   * the JDK's agent closes it (answered or refused; docs/protocol/jdwp.md §2.7), and a server
   * listens again. Not on a DDM session: that is a relay (ddmlib) speaking for a debugger, and it
   * keeps the VM's connection for DDM and the next debugger it relays. */
  if (pkt->cmd_set == 1 && pkt->cmd == 6 && !s->ddm) s->leaving = 1;
  return rc;
}

int ddmc__jdwp_service_add(ddmc_vm *vm, const ddmc__jdwp_service *s) {
  if (atomic_load(&vm->started)) return DDMC_ESTATE;
  if (vm->nservices >= DDMC__MAX_SERVICES) return DDMC_ENOMEM;
  vm->services[vm->nservices++] = *s;
  return 0;
}
