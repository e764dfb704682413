/* SPDX-License-Identifier: Apache-2.0 */
/* The program's own DDM chunk handlers: a request of a type the program registered is handed
 * from the JDWP thread to the program thread that runs ddm-accept, whose ddm-reply /
 * ddm-fail is the answer.
 *
 * Why a hand-over: a handler is bytecode, and bytecode runs on the VM's own threads (frames,
 * safepoints, GC roots), not on the JDWP thread. Android runs DdmServer.dispatch on its JDWP
 * thread; here the JDWP thread waits for the program's thread instead, for at most
 * DDM_REPLY_MS: a program that never accepts, or a thread a debugger holds suspended, costs each
 * request that long and then a FAIL, never a stuck JDWP thread.
 *
 * Sessions as DdmServer.broadcast has them: the C registration of a type is made once and kept
 * (the program has no unregister), and the connected / disconnected hooks of whichever entries
 * libddmc calls give one event each per session (the flag is the JDWP thread's), queued for
 * ddm-accept ahead of the session's first request. At most DDM_TYPES types, DDM_EVENTS events
 * waiting (older ones are dropped past that: a program that never accepts holds nothing).
 *
 * One request at a time (the JDWP thread serves one): state NONE -> POSTED (JDWP thread waits)
 * -> TAKEN (a program thread has it) -> ANSWERED -> NONE. Everything under lock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ddmc/ddmc.h>

#include "ddm_handlers.h"

#define DDM_TYPES 256
#define DDM_EVENTS 16
#define DDM_REPLY_MS 10000

enum { NONE, POSTED, TAKEN, ANSWERED };

struct ddm_handlers {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint32_t types[DDM_TYPES];
  int ntypes;
  int session;             /* JDWP thread only */
  int events[DDM_EVENTS];  /* 1 connected, 2 disconnected; a ring */
  int ev_head, ev_n;
  int state, shutdown;
  uint32_t req_type;
  const uint8_t *req_data; /* libddmc's, borrowed while POSTED */
  size_t req_len;
  int rep_kind;            /* 0 empty, 1 chunk, 2 FAIL */
  uint32_t rep_type;
  uint8_t *rep_data;       /* malloc'd: the chunk, or the FAIL message */
  size_t rep_len;
};

ddm_handlers *ddm_handlers_new(void) {
  ddm_handlers *h = calloc(1, sizeof *h);
  if (h == NULL) return NULL;
  pthread_mutex_init(&h->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&h->cond, &ca);
  pthread_condattr_destroy(&ca);
  return h;
}

void ddm_handlers_free(ddm_handlers *h) {
  if (h == NULL) return;
  free(h->rep_data);
  pthread_cond_destroy(&h->cond);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

static struct timespec deadline_in(int64_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (ms > 86400000) ms = 86400000;
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  return ts;
}

/* Thread: JDWP thread. */
static int handle(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *reply_type, ddmc_buf *reply) {
  (void)vm;
  ddm_handlers *h = ud;
  pthread_mutex_lock(&h->lock);
  if (h->shutdown) {
    pthread_mutex_unlock(&h->lock);
    return ddmc_reply_fail(reply, reply_type, 1, "the program is shutting down");
  }
  h->state = POSTED;
  h->req_type = req->type;
  h->req_data = req->data;
  h->req_len = req->len;
  pthread_cond_broadcast(&h->cond);
  struct timespec until = deadline_in(DDM_REPLY_MS);
  int timed_out = 0;
  while (h->state != ANSWERED && !h->shutdown && !timed_out)
    timed_out = pthread_cond_timedwait(&h->cond, &h->lock, &until) != 0;
  int answered = h->state == ANSWERED, kind = h->rep_kind, rc = 0;
  h->state = NONE;
  h->req_data = NULL;
  if (!answered) {
    rc = ddmc_reply_fail(reply, reply_type, 1, h->shutdown ? "the program is shutting down"
                                                         : "the program's handler did not answer within 10 s");
  } else if (kind == 1) {
    *reply_type = h->rep_type;
    ddmc_buf_put_bytes(reply, h->rep_data, h->rep_len); /* over the cap: the library answers FAIL */
  } else if (kind == 2) {
    rc = ddmc_reply_fail(reply, reply_type, 1, h->rep_data ? (const char *)h->rep_data : "");
  } else {
    rc = DDMC_ENOENT; /* the empty reply, as for a type nobody handles */
  }
  free(h->rep_data);
  h->rep_data = NULL;
  pthread_mutex_unlock(&h->lock);
  return rc;
}

/* Thread: JDWP thread. One event per session edge, whichever entry libddmc calls. */
static void tell(ddm_handlers *h, int event) {
  pthread_mutex_lock(&h->lock);
  if (h->session != (event == 1)) {
    h->session = event == 1;
    if (h->ev_n == DDM_EVENTS) { /* nobody accepts: drop the oldest */
      h->ev_head = (h->ev_head + 1) % DDM_EVENTS;
      h->ev_n--;
    }
    h->events[(h->ev_head + h->ev_n++) % DDM_EVENTS] = event;
    pthread_cond_broadcast(&h->cond);
  }
  pthread_mutex_unlock(&h->lock);
}

static void on_connected(void *ud, ddmc_vm *vm) {
  (void)vm;
  tell(ud, 1);
}

static void on_disconnected(void *ud, ddmc_vm *vm) {
  (void)vm;
  tell(ud, 2);
}

int ddm_handlers_register(ddm_handlers *h, ddmc_vm *vm, uint32_t type) {
  if (h == NULL || vm == NULL) return -1;
  pthread_mutex_lock(&h->lock);
  int i = 0, rc = 0;
  while (i < h->ntypes && h->types[i] != type) i++;
  if (i == h->ntypes) {
    ddmc_chunk_handler ch = {handle, on_connected, on_disconnected, NULL};
    rc = h->ntypes == DDM_TYPES ? -1 : ddmc_register_handler(vm, type, &ch, h);
    if (rc == 0) h->types[h->ntypes++] = type;
    rc = rc == 0 ? 0 : rc == DDMC_EEXIST ? 1 : -1;
  }
  pthread_mutex_unlock(&h->lock);
  return rc;
}

int ddm_handlers_accept(ddm_handlers *h, int64_t ms, uint32_t *type, uint8_t **data, size_t *len) {
  *data = NULL;
  *len = 0;
  if (h == NULL) return 0;
  pthread_mutex_lock(&h->lock);
  struct timespec until = deadline_in(ms < 0 ? 0 : ms);
  int rc = 0;
  for (;;) {
    if (h->shutdown) {
      rc = -1;
      break;
    }
    if (h->ev_n > 0) {
      *type = (uint32_t)h->events[h->ev_head];
      h->ev_head = (h->ev_head + 1) % DDM_EVENTS;
      h->ev_n--;
      rc = 2;
      break;
    }
    if (h->state == POSTED) {
      uint8_t *copy = malloc(h->req_len ? h->req_len : 1);
      if (copy == NULL) break; /* the JDWP thread times out: FAIL */
      memcpy(copy, h->req_data, h->req_len);
      h->state = TAKEN;
      *type = h->req_type;
      *data = copy;
      *len = h->req_len;
      rc = 1;
      break;
    }
    if (pthread_cond_timedwait(&h->cond, &h->lock, &until) != 0) break;
  }
  pthread_mutex_unlock(&h->lock);
  return rc;
}

int ddm_handlers_reply(ddm_handlers *h, int kind, uint32_t type, const uint8_t *data, size_t len, const char *msg) {
  if (h == NULL) return -1;
  size_t n = kind == 2 ? strlen(msg ? msg : "") + 1 : len;
  uint8_t *copy = malloc(n ? n : 1);
  if (copy == NULL) return -1;
  if (kind == 2) memcpy(copy, msg ? msg : "", n);
  else if (n) memcpy(copy, data, n);
  pthread_mutex_lock(&h->lock);
  int rc = -1;
  if (h->state == TAKEN) {
    free(h->rep_data);
    h->rep_kind = kind;
    h->rep_type = type;
    h->rep_data = copy;
    h->rep_len = n;
    copy = NULL;
    h->state = ANSWERED;
    pthread_cond_broadcast(&h->cond);
    rc = 0;
  }
  pthread_mutex_unlock(&h->lock);
  free(copy);
  return rc;
}

void ddm_handlers_shutdown(ddm_handlers *h) {
  if (h == NULL) return;
  pthread_mutex_lock(&h->lock);
  h->shutdown = 1;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
}
