/* SPDX-License-Identifier: Apache-2.0 */
/* Sessions side by side (docs/sessions.md) over real sockets on 127.0.0.1, with the project's host
 * side as the peers: unsolicited chunks to every DDM session, a request's own chunks to its session
 * only, the debugger seat (the first to change the VM's world; a second debugger refused, read-only
 * commands answered, DBGD refused from a monitor; the seat freed when its holder leaves), the
 * session cap, and a session that stops reading delaying nobody. Every wait is bounded; alarm()
 * backs that up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakevm.h"
#include "util/testutil.h"

#define T(a, b, c, d) DDMC_FOURCC(a, b, c, d)
#define TMO 5000

#define MAXI(a, b) ((a) > (b) ? (a) : (b))

/* A HELO round trip; unsolicited packets met on the way are counted in *others. */
static int helo(ddmc_host *h, int *others) {
  uint32_t id;
  uint8_t ver[4] = {0, 0, 0, 1};
  if (ddmc_host_send_chunk(h, T('H', 'E', 'L', 'O'), ver, 4, &id) != 0) return -1;
  int64_t end = mono_ms() + TMO;
  ddmc_host_packet p;
  while (mono_ms() < end) {
    if (ddmc_host_recv(h, &p, TMO) != 0) return -1;
    if (p.is_reply && p.id == id) return p.chunk_type == T('H', 'E', 'L', 'O') ? 0 : -1;
    if (others) (*others)++;
  }
  return -1;
}

/* A JDWP command's reply error (or -1). */
static int command(ddmc_host *h, uint8_t set, uint8_t cmd) {
  uint32_t id;
  ddmc_host_packet p;
  if (ddmc_host_send_command(h, set, cmd, NULL, 0, &id) != 0) return -1;
  int64_t end = mono_ms() + TMO;
  while (mono_ms() < end) {
    if (ddmc_host_recv(h, &p, TMO) != 0) return -1;
    if (p.is_reply && p.id == id) return p.error;
  }
  return -1;
}

/* SESS's answer to h (docs/protocol/ddm-wire.md §2.12). */
static ddmc_host_sess sess(ddmc_host *h) {
  ddmc_host_packet p;
  ddmc_host_sess s;
  assert_int_equal(ddmc_host_request(h, T('S', 'E', 'S', 'S'), NULL, 0, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('S', 'E', 'S', 'S'));
  assert_int_equal(ddmc_host_sess_parse(p.chunk, p.chunk_len, &s), 0);
  return s;
}

/* Waits for an unsolicited chunk of type want; 1 if it came. */
static int chunk_arrives(ddmc_host *h, uint32_t want, int ms) {
  int64_t end = mono_ms() + ms;
  ddmc_host_packet p;
  while (mono_ms() < end) {
    if (ddmc_host_recv(h, &p, 200) != 0) continue;
    if (!p.is_reply && p.is_ddm && p.chunk_type == want) return 1;
  }
  return 0;
}

/* Unsolicited chunks from a VM thread go to every session that spoke DDM, and to no other. */
static void test_broadcast_to_ddm_sessions(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  ddmc_host *a = peer_connect(port), *b = peer_connect(port), *quiet = peer_connect(port);
  assert_int_equal(helo(a, NULL), 0);
  assert_int_equal(helo(b, NULL), 0);
  assert_int_equal(ddmc_send_chunk(f.vm, T('T', 'E', 'S', 'T'), "x", 1), 0);
  assert_true(chunk_arrives(a, T('T', 'E', 'S', 'T'), TMO));
  assert_true(chunk_arrives(b, T('T', 'E', 'S', 'T'), TMO));
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(quiet, &p, 300), DDMC_ETIMEDOUT); /* it never spoke DDM */
  /* One DDM session leaves: the other still gets them, and DDM stays on. */
  ddmc_host_free(a);
  sleep_ms(200);
  assert_int_equal(ddmc_send_chunk(f.vm, T('T', 'E', 'S', '2'), "y", 1), 0);
  assert_true(chunk_arrives(b, T('T', 'E', 'S', '2'), TMO));
  ddmc_host_free(b);
  /* The last DDM session gone: DDM is off (a chunk is refused at once). */
  int64_t end = mono_ms() + TMO;
  while (ddmc_send_chunk(f.vm, T('T', 'E', 'S', '3'), "z", 1) == 0 && mono_ms() < end) sleep_ms(20);
  assert_int_equal(ddmc_send_chunk(f.vm, T('T', 'E', 'S', '3'), "z", 1), DDMC_ENOTCONN);
  ddmc_host_free(quiet);
  fakevm_stop(&f);
}

/* The seat: the first session to change the VM's world is the debugger; another may read, and
 * is refused anything else; DBGD from it is refused; the seat is free again when its holder
 * leaves. */
static void test_debugger_seat(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  f.answer_jdwp = 2; /* the VM's hook answers every command it gets */
  /* mon, first, holds the free seat from its handshake; it speaks only DDM. */
  ddmc_host *mon = peer_connect(port), *dbg = peer_connect(port), *other = peer_connect(port);
  assert_int_equal(helo(mon, NULL), 0);
  assert_int_equal(command(other, 1, 1), 0); /* Version: read-only, and no debugger for it */
  assert_false(ddmc_vm_debugger_active(f.vm));
  ddmc_host_sess ss = sess(mon); /* mon holds the seat, but is no debugger */
  assert_int_equal(ss.sessions, 3);
  assert_int_equal(ss.seat, ss.self);
  assert_false(ss.debugger);
  assert_false(ss.confirmed);
  assert_int_equal(command(dbg, 15, 1), 0); /* EventRequest.Set: dbg takes the seat */
  assert_true(ddmc_vm_debugger_active(f.vm));
  ss = sess(mon); /* a debugger beside mon now */
  assert_true(ss.seat != ss.self && ss.seat != 0);
  assert_true(ss.debugger);
  assert_true(ss.confirmed);
  assert_int_equal(ss.max_sessions, 8);
  assert_int_equal(command(mon, 1, 1), 0);  /* reading goes on */
  assert_int_equal(command(mon, 11, 1), 0); /* ThreadReference.Name */
  assert_int_equal(command(mon, 15, 1), DDMC_JDWP_NOT_IMPLEMENTED); /* a second debugger */
  assert_int_equal(command(other, 1, 8), DDMC_JDWP_NOT_IMPLEMENTED); /* VirtualMachine.Suspend */
  /* DBGD from a monitor: a FAIL, and the debugger is untouched. */
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(mon, T('D', 'B', 'G', 'D'), NULL, 0, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  assert_true(ddmc_vm_debugger_active(f.vm));
  assert_int_equal(atomic_load(&f.detached), 0);
  assert_int_equal(command(dbg, 1, 9), 0); /* the debugger's own commands still run */
  /* The debugger leaves: the seat is free, the next to change the world takes it. */
  ddmc_host_free(dbg);
  int64_t end = mono_ms() + TMO;
  /* The JDWP thread clears the flag, then calls the VM's debugger_detached: wait for both. */
  while ((ddmc_vm_debugger_active(f.vm) || atomic_load(&f.detached) == 0) && mono_ms() < end) sleep_ms(10);
  assert_false(ddmc_vm_debugger_active(f.vm));
  assert_int_equal(atomic_load(&f.detached), 1);
  assert_int_equal(command(other, 15, 1), 0);
  assert_true(ddmc_vm_debugger_active(f.vm));
  assert_int_equal(command(mon, 15, 1), DDMC_JDWP_NOT_IMPLEMENTED);
  assert_int_equal(helo(mon, NULL), 0);
  ddmc_host_free(mon);
  ddmc_host_free(other);
  fakevm_stop(&f);
}

/* VirtualMachine.Dispose ends the connection after its reply, as the JDK's agent does: a command
 * sent behind it is never answered, and the next peer is served. From a monitor the same, the
 * debugger untouched. From a DDM session (a relay such as ddmlib) the connection stays. */
static void test_dispose_closes(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  f.answer_jdwp = 2;
  ddmc_host *dbg = peer_connect(port), *mon = peer_connect(port), *relay = peer_connect(port);
  assert_int_equal(command(dbg, 15, 1), 0); /* dbg takes the seat */
  assert_int_equal(command(mon, 1, 6), 0);  /* a monitor's Dispose: answered, then closed */
  assert_int_equal(command(mon, 1, 1), -1);
  assert_true(ddmc_vm_debugger_active(f.vm));
  assert_int_equal(atomic_load(&f.detached), 0);
  assert_int_equal(helo(relay, NULL), 0);
  assert_int_equal(command(relay, 1, 6), 0); /* a relay's: the connection stays */
  assert_int_equal(command(relay, 1, 1), 0);
  /* The debugger's Dispose with a command right behind it in the same write. */
  uint32_t id1, id2;
  assert_int_equal(ddmc_host_send_command(dbg, 1, 6, NULL, 0, &id1), 0);
  assert_int_equal(ddmc_host_send_command(dbg, 1, 1, NULL, 0, &id2), 0);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(dbg, &p, TMO), 0);
  assert_true(p.is_reply && p.id == id1 && p.error == 0);
  assert_int_not_equal(ddmc_host_recv(dbg, &p, TMO), 0); /* closed: the Version went unread */
  int64_t end = mono_ms() + TMO;
  while (ddmc_vm_debugger_active(f.vm) && mono_ms() < end) sleep_ms(10);
  assert_false(ddmc_vm_debugger_active(f.vm));
  ddmc_host *next = peer_connect(port);
  assert_int_equal(command(next, 15, 1), 0); /* the next debugger takes the free seat */
  assert_true(ddmc_vm_debugger_active(f.vm));
  ddmc_host_free(next);
  ddmc_host_free(relay);
  ddmc_host_free(mon);
  ddmc_host_free(dbg);
  fakevm_stop(&f);
}

/* sessions=3: the fourth peer is closed before its handshake; once one leaves, the next is served. */
static void test_session_cap(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, "sessions=3", 0);
  ddmc_host *h[3];
  for (int i = 0; i < 3; i++) {
    h[i] = peer_connect(port);
    assert_int_equal(helo(h[i], NULL), 0);
  }
  ddmc_host *x = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&x, "127.0.0.1", port, TMO), 0);
  int rc = ddmc_host_handshake(x, TMO);
  assert_true(rc == DDMC_ECLOSED || rc == DDMC_EIO);
  ddmc_host_free(x);
  for (int i = 0; i < 3; i++) assert_int_equal(helo(h[i], NULL), 0); /* the others are untouched */
  ddmc_host_free(h[0]);
  sleep_ms(200);
  h[0] = peer_connect(port);
  assert_int_equal(helo(h[0], NULL), 0);
  for (int i = 0; i < 3; i++) ddmc_host_free(h[i]);
  fakevm_stop(&f);
}

typedef struct flood {
  ddmc_vm *vm;
  atomic_int stop;
  atomic_long sent;
} flood;

static void *flood_main(void *arg) {
  flood *fl = arg;
  static uint8_t payload[16384];
  while (!atomic_load(&fl->stop)) {
    if (ddmc_send_chunk(fl->vm, T('F', 'L', 'O', 'D'), payload, sizeof payload) == 0) atomic_fetch_add(&fl->sent, 1);
    else sleep_ms(1);
  }
  return NULL;
}

/* A session that stops reading (first to connect, so it held the seat at its handshake) while a VM
 * thread floods DDM chunks: the reading session keeps getting them and its requests are answered
 * at once; the stalled one only loses chunks. Then the same with a debugger that stops reading:
 * the monitor's requests are still answered at once. */
static void test_stalled_session_delays_nobody(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  ddmc_host *st = small_window_peer(port, TMO);
  assert_int_equal(helo(st, NULL), 0); /* DDM on for it: the flood is for it too; from here it reads nothing */
  ddmc_host *rd = peer_connect(port);
  assert_int_equal(helo(rd, NULL), 0);

  flood fl = {.vm = f.vm};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, flood_main, &fl), 0);
  int got = 0, worst = 0;
  for (int i = 0; i < 20; i++) {
    int64_t t0 = mono_ms();
    assert_int_equal(helo(rd, &got), 0);
    worst = (int)MAXI(worst, mono_ms() - t0);
    sleep_ms(100);
  }
  print_message("stalled monitor: the other session's HELO took at most %d ms; it got %d chunks meanwhile\n", worst,
                got);
  assert_true(worst < 2000); /* generous: a loaded machine; a held queue would be 30 s */
  assert_true(got > 100);    /* the flood kept reaching the reader */

  /* Now the reader becomes the debugger and stops reading; a new monitor is still answered. */
  f.answer_jdwp = 2;
  assert_int_equal(command(rd, 15, 1), 0);
  ddmc_host *mon = peer_connect(port);
  sleep_ms(1000); /* the debugger's output fills while it reads nothing */
  worst = 0;
  for (int i = 0; i < 10; i++) {
    int64_t t0 = mono_ms();
    assert_int_equal(command(mon, 1, 1), 0);
    worst = (int)MAXI(worst, mono_ms() - t0);
  }
  print_message("stalled debugger: a monitor's Version took at most %d ms\n", worst);
  assert_true(worst < 2000);
  atomic_store(&fl.stop, 1);
  pthread_join(th, NULL);
  ddmc_host_free(mon);
  ddmc_host_free(rd);
  ddmc_host_free(st);
  fakevm_stop(&f);
}

int main(void) {
  alarm(170);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast_to_ddm_sessions),
      cmocka_unit_test(test_debugger_seat),
      cmocka_unit_test(test_dispose_closes),
      cmocka_unit_test(test_session_cap),
      cmocka_unit_test(test_stalled_session_delays_nobody),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
