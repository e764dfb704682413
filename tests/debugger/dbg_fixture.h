/* SPDX-License-Identifier: Apache-2.0 */
/* The shared harness of the debugger layer's tests (tests/debugger/test_dbg_*.c, one per module of
 * src/debugger): src/debugger without a socket, commands run through ddmc__dbg_run against the
 * fake debuggee (tests/fakebridge.c on tests/fakevm.c), events posted as a VM thread would and read
 * back from the send queue.
 *
 * Every test runs on a fresh fake (setup / teardown, or setup_suspend_y for a session started
 * with suspend=y), reached through F; teardown fails the test if the library handed the fake a
 * value it should have rejected. */
#ifndef DDMC_TEST_DBG_FIXTURE_H
#define DDMC_TEST_DBG_FIXTURE_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "debugger/requests.h"
#include "debugger/state.h"
#include "fakebridge.h"
#include "util/testutil.h"

/* ---- the fixture */

extern fakebridge *F;
extern ddmc_buf g_out; /* the last command's reply */

int setup(void **state);
int setup_suspend_y(void **state);
/* setup with the bridge's for_each_debuggee_thread (FAKEBRIDGE_THREAD_OBJECTS) */
int setup_thread_objects(void **state);
/* setup with the bridge's hold_ref / release_ref (FAKEBRIDGE_WEAK_NAMES): names held weakly */
int setup_weak_names(void **state);
/* setup with the bridge's set_monitor_events (FAKEBRIDGE_MONITOR_EVENTS) */
int setup_monitor_events(void **state);
/* setup with the bridge's suspend_threads / resume_threads (FAKEBRIDGE_BULK_SUSPEND) */
int setup_bulk_suspend(void **state);
int teardown(void **state);

/* ---- request bodies */

typedef struct body {
  uint8_t p[2048];
  size_t n;
} body;

void b_u8(body *b, uint8_t v);
void b_u16(body *b, uint16_t v);
void b_u32(body *b, uint32_t v);
void b_u64(body *b, uint64_t v);
void b_str(body *b, const char *s);
/* A location; a method of Debug by its methodID, any other by its index + 1. */
void b_loc(body *b, uint8_t tag, uint64_t cls_id, uint32_t method, uint64_t index);

/* ---- commands */

/* Runs one command; r reads the reply body. Returns the JDWP error. */
int run_raw(uint8_t set, uint8_t cmd, const uint8_t *p, size_t n, ddmc_reader *r);
int run(uint8_t set, uint8_t cmd, const body *b, ddmc_reader *r);
/* A command whose body is one 8-byte ID. */
int run_id(uint8_t set, uint8_t cmd, uint64_t id, ddmc_reader *r);
/* A JDWP string of the reply (four buffers, reused in turn). */
char *rd_str(ddmc_reader *r);

/* ---- IDs of the fake's program */

uint64_t oid(ddmc_ref o);
const ddmc__dbg_cls *cls(ddmc_class c);
uint64_t cid(ddmc_class c);
/* A method of Debug (the fake's only class with methods). */
uint64_t mid(uint32_t method);
uint64_t fid(ddmc_class c, uint32_t index);
uint64_t tid(uint32_t t);
/* ObjectReference.GetValues of one field, expecting want. */
void get_one_field(uint64_t obj, uint64_t field, int want);
/* ThreadReference.Frames of thread t; frame_id: the frameID at depth (the thread suspended). */
int frames(uint32_t t, int32_t start, int32_t len, ddmc_reader *r);
uint64_t frame_id(uint32_t t, int32_t depth);

/* Waits up to about 5 s for cond, then asserts it. */
#define WAIT_FOR(cond)                  \
  do {                                  \
    int waited_ = 0;                    \
    while (!(cond) && waited_ < 5000) { \
      sleep_ms(1);                      \
      waited_++;                        \
    }                                   \
    assert_true(cond);                  \
  } while (0)

/* ---- events read back */

typedef struct ev {
  uint8_t kind;
  int32_t req;
  uint64_t thread;
  uint8_t tag;
  uint64_t cls, method, index;
  uint8_t vtag; /* METHOD_EXIT_WITH_RETURN_VALUE */
  uint64_t value;
  char sig[64]; /* CLASS_PREPARE */
  uint32_t status;
  uint8_t otag; /* EXCEPTION: the exception; FIELD_*: the object (tagged) */
  uint64_t obj;
  uint8_t ctag; /* EXCEPTION: the catch location (0: not caught) */
  uint64_t ccls, cmethod, cindex;
  uint64_t fcls, field; /* FIELD_* */
} ev;
typedef struct comp {
  int policy;
  int n;
  ev e[8];
} comp;
extern comp g_comp[16]; /* the composites events() read, the first 16 */
extern int g_ncomp;

/* Composites queued since the last call, parsed into g_comp. */
int events(void);
/* The same, waiting up to about 5 s for the first (an event a VM thread posts on its own pthread). */
int events_wait(void);

/* ---- requests and events */

/* EventRequest.Set; mods holds nmods modifiers. Returns the JDWP error; *id the request. */
int set_req(uint8_t kind, uint8_t policy, const body *mods, uint32_t nmods, int32_t *id);
int clear_req(uint8_t kind, int32_t id);
/* A LocationOnly modifier in Debug. */
void mod_loc(body *m, uint32_t method, int64_t index);
/* A SINGLE_STEP request on thread, expecting want_rc; returns its ID. */
int32_t step_req(uint32_t thread, int size, int depth, uint8_t policy, int want_rc);
/* Posts a location in Debug as thread would. */
int post(uint32_t thread, uint32_t method, int64_t index, int32_t depth, unsigned flags);
int thr_count(uint32_t t);

/* A VM thread posting a breakpoint on its own pthread (it may park there). */
typedef struct poster {
  pthread_t th;
  uint32_t thread;
  uint32_t method;
  int64_t index;
  int32_t depth;
  atomic_int done;
  int rc;
} poster;
void start_poster(poster *p, uint32_t thread, uint32_t method, int64_t index, int32_t depth);

/* ---- valid bodies of commands that make calls (the dispatcher's table and the tests of calls) */

void bd_ct_invoke(body *b);    /* ClassType.InvokeMethod of Debug.main(null) on Worker */
void bd_new_instance(body *b); /* ClassType.NewInstance: Debug() on Worker */
void bd_new_array(body *b);    /* ArrayType.NewInstance: an int[3] */
void bd_stop(body *b);         /* ThreadReference.Stop of Worker with FD_O_DEBUG2 */

#endif
