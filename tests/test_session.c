/* SPDX-License-Identifier: Apache-2.0 */
/* libddmc over real sockets on 127.0.0.1, with the project's own host side (host/) as the peer:
 * handshake, HELO, handlers, FAIL, unknown chunks, unsolicited chunks from many threads, the
 * debugger path, reconnection, suspend=y, second peers, multi-chunk packets, ZLIB, WAIT, DBGD,
 * EXIT. Every wait is bounded; alarm() backs that up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakevm.h"
#include "util/testutil.h"
#include "heapseg.h"

#define T(a, b, c, d) DDMC_FOURCC(a, b, c, d)
#define TMO 5000

/* Waits up to 5 s for an atomic counter to reach want. */
static int wait_for(atomic_int *v, int want) {
  for (int i = 0; i < 500 && atomic_load(v) < want; i++) sleep_ms(10);
  return atomic_load(v);
}

static void test_helo_roundtrip(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  assert_int_equal(ddmc_notify_app_name(f.vm, "com.example.app", "com.example", 10), DDMC_ENOTCONN);
  ddmc_host *h = peer_connect(port);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  assert_int_equal(helo.version, 1);
  assert_int_equal(helo.pid, (uint32_t)getpid());
  assert_string_equal(helo.vm_ident, "fakevm v1");
  assert_string_equal(helo.app_name, "com.example.app");
  assert_int_equal(helo.user_id, 10);
  assert_string_equal(helo.abi, "64-bit (x86_64)");
  assert_string_equal(helo.jvm_flags, "CheckJNI=false");
  assert_int_equal(helo.native_debuggable, 1);
  assert_string_equal(helo.pkg_name, "com.example");
  assert_int_equal(helo.truncated, 0);
  /* The library's profiling features first (the fake VM lists threads and stacks: it can be
   * sampled; it has no VM bridge, so no method tracing), then the VM's own. */
  assert_int_equal(helo.n_features, 3);
  assert_string_equal(helo.features[0], "method-sample-profiling");
  assert_string_equal(helo.features[1], "feature-one");
  assert_string_equal(helo.features[2], "feature-two");
  ddmc_host_helo_free(&helo);
  assert_true(ddmc_vm_is_connected(f.vm));
  assert_false(ddmc_vm_debugger_active(f.vm)); /* DDM alone is not a debugger */
  assert_int_equal(ddmc_vm_last_activity_ms(f.vm), -1);
  assert_int_equal(atomic_load(&f.attached), 0);

  /* APNM goes out now that a DDM peer is there: name, user id, package. */
  assert_int_equal(ddmc_notify_app_name(f.vm, "renamed", "pkg.x", 7), 0);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_false(p.is_reply);
  assert_int_equal(p.chunk_type, T('A', 'P', 'N', 'M'));
  assert_true(p.id >= 0x10000000u && p.id < 0x40000000u); /* VM-originated range */
  ddmc_host_apnm ap;
  assert_int_equal(ddmc_host_apnm_parse(p.chunk, p.chunk_len, &ap), 0);
  assert_string_equal(ap.name, "renamed");
  assert_int_equal(ap.user_id, 7);
  assert_string_equal(ap.pkg_name, "pkg.x");
  ddmc_host_apnm_free(&ap);
  ddmc_host_free(h);
  fakevm_stop(&f);
  assert_int_equal(atomic_load(&f.jdwp_thread_started), 1);
  assert_int_equal(atomic_load(&f.jdwp_thread_ended), 1);
}

/* ---- custom handlers */

typedef struct hctx {
  atomic_int connected, disconnected, destroyed, calls;
} hctx;

static int echo_handle(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rt, ddmc_buf *reply) {
  (void)vm;
  hctx *c = ud;
  atomic_fetch_add(&c->calls, 1);
  if (req->len == 4 && memcmp(req->data, "fail", 4) == 0) return DDMC_EINVAL;
  if (req->len == 4 && memcmp(req->data, "FAIL", 4) == 0) return ddmc_reply_fail(reply, rt, 42, "custom failure");
  if (req->len == 4 && memcmp(req->data, "none", 4) == 0) return 0;
  if (req->len == 4 && memcmp(req->data, "BIGG", 4) == 0) {
    for (int i = 0; i < 65536; i++) ddmc_buf_put_u8(reply, (uint8_t)(i % 7));
    return 0;
  }
  *rt = T('E', 'C', 'H', 'R');
  for (size_t i = req->len; i > 0; i--) ddmc_buf_put_u8(reply, req->data[i - 1]);
  return 0;
}
static void echo_connected(void *ud, ddmc_vm *vm) {
  (void)vm;
  atomic_fetch_add(&((hctx *)ud)->connected, 1);
}
static void echo_disconnected(void *ud, ddmc_vm *vm) {
  (void)vm;
  atomic_fetch_add(&((hctx *)ud)->disconnected, 1);
}
static void echo_destroy(void *ud) { atomic_fetch_add(&((hctx *)ud)->destroyed, 1); }

static const ddmc_chunk_handler kEcho = {echo_handle, echo_connected, echo_disconnected, echo_destroy};

static void test_handlers_fail_unknown(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  hctx c = {0};
  assert_int_equal(ddmc_register_handler(f.vm, T('E', 'C', 'H', 'O'), &kEcho, &c), 0);
  assert_int_equal(ddmc_register_handler(f.vm, T('E', 'C', 'H', 'O'), &kEcho, &c), DDMC_EEXIST);
  assert_int_equal(ddmc_register_handler(f.vm, T('H', 'E', 'L', 'O'), &kEcho, &c), DDMC_EEXIST);
  ddmc_chunk_handler nohandle = {0};
  assert_int_equal(ddmc_register_handler(f.vm, T('N', 'O', 'P', 'E'), &nohandle, &c), DDMC_EINVAL);

  ddmc_host *h = peer_connect(port);
  sleep_ms(50);
  assert_int_equal(atomic_load(&c.connected), 0); /* the handshake alone is not a DDM session */
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "abc", 3, &p, TMO), 0);
  assert_true(p.is_reply);
  assert_int_equal(p.error, 0);
  assert_int_equal(p.chunk_type, T('E', 'C', 'H', 'R'));
  assert_int_equal(p.chunk_len, 3);
  assert_memory_equal(p.chunk, "cba", 3);
  assert_int_equal(atomic_load(&c.connected), 1);

  /* handler error -> FAIL [code][message] */
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "fail", 4, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  ddmc_host_fail fl;
  assert_int_equal(ddmc_host_fail_parse(p.chunk, p.chunk_len, &fl), 0);
  assert_int_equal(fl.code, DDMC_EINVAL);
  assert_string_equal(fl.msg, ddmc_strerror(DDMC_EINVAL));
  ddmc_host_fail_free(&fl);
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "FAIL", 4, &p, TMO), 0);
  assert_int_equal(ddmc_host_fail_parse(p.chunk, p.chunk_len, &fl), 0);
  assert_int_equal(fl.code, 42);
  assert_string_equal(fl.msg, "custom failure");
  ddmc_host_fail_free(&fl);

  /* no data -> the bare 11-byte success reply; unknown type -> the same */
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "none", 4, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  assert_int_equal(p.error, 0);
  assert_false(p.is_ddm);
  assert_int_equal(ddmc_host_request(h, T('Z', 'Z', 'Z', 'Z'), "x", 1, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  assert_int_equal(p.error, 0);

  /* unregister: destroy runs once, then the type is unknown */
  assert_int_equal(ddmc_unregister_handler(f.vm, T('E', 'C', 'H', 'O')), 0);
  assert_int_equal(atomic_load(&c.destroyed), 1);
  assert_int_equal(ddmc_unregister_handler(f.vm, T('E', 'C', 'H', 'O')), DDMC_ENOENT);
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "abc", 3, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  /* unregistered before the session ended: it is owed no disconnected */
  ddmc_host_free(h);
  sleep_ms(100);
  assert_int_equal(atomic_load(&c.disconnected), 0);
  fakevm_stop(&f);
  assert_int_equal(atomic_load(&c.destroyed), 1);
}

static void test_connected_disconnected_once(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  hctx c = {0};
  assert_int_equal(ddmc_register_handler(f.vm, T('E', 'C', 'H', 'O'), &kEcho, &c), 0);
  for (int round = 1; round <= 3; round++) {
    ddmc_host *h = peer_connect(port);
    ddmc_host_packet p;
    for (int i = 0; i < 3; i++) assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "q", 1, &p, TMO), 0);
    assert_int_equal(atomic_load(&c.connected), round);
    ddmc_host_free(h);
    assert_int_equal(wait_for(&c.disconnected, round), round);
  }
  /* a session with no DDM packet: neither hook */
  ddmc_host *h = peer_connect(port);
  uint32_t id;
  assert_int_equal(ddmc_host_send_command(h, 1, 1, NULL, 0, &id), 0);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  ddmc_host_free(h);
  sleep_ms(100);
  assert_int_equal(atomic_load(&c.connected), 3);
  assert_int_equal(atomic_load(&c.disconnected), 3);
  ddmc_stats st;
  ddmc_vm_get_stats(f.vm, &st);
  assert_int_equal(st.sessions, 4);
  fakevm_stop(&f);
  assert_int_equal(atomic_load(&c.destroyed), 1);
}

/* ---- unsolicited chunks from several VM threads */

typedef struct sender {
  ddmc_vm *vm;
  uint32_t idx;
  int ok;
} sender;

#define PER_THREAD 500
static void *send_many(void *arg) {
  sender *s = arg;
  for (uint32_t i = 0; i < PER_THREAD; i++) {
    uint8_t b[8];
    b[0] = (uint8_t)(s->idx >> 24); b[1] = (uint8_t)(s->idx >> 16); b[2] = (uint8_t)(s->idx >> 8); b[3] = (uint8_t)s->idx;
    b[4] = (uint8_t)(i >> 24); b[5] = (uint8_t)(i >> 16); b[6] = (uint8_t)(i >> 8); b[7] = (uint8_t)i;
    if (ddmc_send_chunk(s->vm, T('T', 'E', 'S', 'T'), b, sizeof(b)) == 0) s->ok++;
  }
  return NULL;
}

static void test_unsolicited_from_threads(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  assert_int_equal(ddmc_send_chunk(f.vm, T('T', 'E', 'S', 'T'), "x", 1), DDMC_ENOTCONN);
  ddmc_host *h = peer_connect(port);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, T('H', 'E', 'L', 'O'), "\0\0\0\1", 4, &p, TMO), 0);
  enum { N = 4 };
  pthread_t th[N];
  sender s[N];
  for (int i = 0; i < N; i++) {
    s[i] = (sender){f.vm, (uint32_t)i, 0};
    pthread_create(&th[i], NULL, send_many, &s[i]);
  }
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  uint32_t next[N] = {0};
  int total = 0;
  for (int i = 0; i < N; i++) assert_int_equal(s[i].ok, PER_THREAD);
  while (total < N * PER_THREAD) {
    assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
    assert_int_equal(p.chunk_type, T('T', 'E', 'S', 'T'));
    assert_int_equal(p.chunk_len, 8);
    uint32_t t = ((uint32_t)p.chunk[0] << 24) | ((uint32_t)p.chunk[1] << 16) | ((uint32_t)p.chunk[2] << 8) | p.chunk[3];
    uint32_t seq = ((uint32_t)p.chunk[4] << 24) | ((uint32_t)p.chunk[5] << 16) | ((uint32_t)p.chunk[6] << 8) | p.chunk[7];
    assert_true(t < N);
    assert_int_equal(seq, next[t]); /* per-thread order kept, nothing lost, no interleaving */
    next[t]++;
    total++;
  }
  /* nothing more */
  assert_int_equal(ddmc_host_recv(h, &p, 100), DDMC_ETIMEDOUT);
  ddmc_stats st;
  ddmc_vm_get_stats(f.vm, &st);
  assert_int_equal(st.chunks_dropped, 0);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* ---- the debugger path */

static void test_non_ddm_and_debugger_active(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  ddmc_host *h = peer_connect(port);
  uint32_t id;
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_send_command(h, 1, 1, NULL, 0, &id), 0); /* VirtualMachine.Version */
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_true(p.is_reply);
  assert_int_equal(p.id, id);
  assert_int_equal(p.error, DDMC_JDWP_NOT_IMPLEMENTED);
  assert_int_equal(p.length, 11);
  assert_true(ddmc_vm_debugger_active(f.vm));
  assert_int_equal(wait_for(&f.attached, 1), 1);
  assert_true(ddmc_vm_last_activity_ms(f.vm) >= 1);
  /* the VM hook answers once it wants to */
  f.answer_jdwp = 1;
  assert_int_equal(ddmc_host_send_command(h, 1, 1, NULL, 0, &id), 0);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.error, 0);
  assert_int_equal(p.body_len, 4 + 12 + 8);
  assert_int_equal(atomic_load(&f.attached), 1); /* flips once per connection */
  /* a reply packet from the peer is consumed and ignored */
  uint8_t rep[11] = {0, 0, 0, 11, 0, 0, 0, 9, 0x80, 0, 0};
  assert_int_equal(ddmc_host_send_raw(h, rep, sizeof(rep)), 0);
  assert_int_equal(ddmc_host_recv(h, &p, 200), DDMC_ETIMEDOUT);
  /* DBGD: the debugger left, the connection stays */
  assert_int_equal(ddmc_host_request(h, T('D', 'B', 'G', 'D'), NULL, 0, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  assert_false(ddmc_vm_debugger_active(f.vm));
  assert_int_equal(atomic_load(&f.detached), 1);
  assert_int_equal(ddmc_vm_last_activity_ms(f.vm), -1);
  assert_int_equal(ddmc_host_send_command(h, 1, 1, NULL, 0, &id), 0);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.id, id);
  assert_int_equal(wait_for(&f.attached, 2), 2);
  ddmc_host_free(h);
  assert_int_equal(wait_for(&f.detached, 2), 2); /* connection closed while attached */
  fakevm_stop(&f);
}

static void test_reconnect_second_peer_and_bad_peers(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 400);
  ddmc_host_packet p;
  for (int round = 0; round < 3; round++) {
    ddmc_host *h = peer_connect(port);
    ddmc_host_helo helo;
    assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
    ddmc_host_helo_free(&helo);
    if (round == 1) {
      /* a second peer is served beside the first (docs/sessions.md); the first keeps working */
      ddmc_host *h2 = peer_connect(port);
      assert_int_equal(ddmc_host_request(h2, T('H', 'E', 'L', 'O'), "\0\0\0\1", 4, &p, TMO), 0);
      assert_int_equal(p.chunk_type, T('H', 'E', 'L', 'O'));
      ddmc_host_free(h2);
      assert_int_equal(ddmc_host_request(h, T('H', 'E', 'L', 'O'), "\0\0\0\1", 4, &p, TMO), 0);
      assert_int_equal(p.chunk_type, T('H', 'E', 'L', 'O'));
    }
    ddmc_host_free(h);
  }
  /* an HTTP client is dropped at its first byte */
  ddmc_host *h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, TMO), 0);
  const char *get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  assert_int_equal(ddmc_host_send_raw(h, get, strlen(get)), 0);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), DDMC_ECLOSED);
  ddmc_host_free(h);
  /* a peer that never shakes hands is dropped after the handshake timeout */
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, TMO), 0);
  assert_int_equal(ddmc_host_recv(h, &p, 3000), DDMC_ECLOSED);
  ddmc_host_free(h);
  /* and the VM still serves the next one */
  h = peer_connect(port);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  ddmc_host_helo_free(&helo);
  ddmc_host_free(h);
  ddmc_stats st;
  ddmc_vm_get_stats(f.vm, &st);
  assert_int_equal(st.sessions, 5);
  assert_true(st.protocol_errors >= 1);
  fakevm_stop(&f);
}

/* ---- suspend=y */

typedef struct starter {
  ddmc_vm *vm;
  atomic_int done;
  int rc;
} starter;

static void *start_thread(void *arg) {
  starter *s = arg;
  s->rc = ddmc_vm_start(s->vm);
  atomic_store(&s->done, 1);
  return NULL;
}

static void test_suspend_blocks_start(void **state) {
  (void)state;
  fakevm f;
  fakevm_start(&f, "suspend=y", 0);
  starter s = {f.vm, 0, -1};
  pthread_t t;
  pthread_create(&t, NULL, start_thread, &s);
  uint16_t port = 0;
  for (int i = 0; i < 500 && (port = ddmc_vm_port(f.vm)) == 0; i++) sleep_ms(10);
  assert_true(port != 0);
  sleep_ms(300);
  assert_int_equal(atomic_load(&s.done), 0); /* still waiting for a peer */
  ddmc_host *h = peer_connect(port);
  assert_int_equal(wait_for(&s.done, 1), 1);
  pthread_join(t, NULL);
  assert_int_equal(s.rc, 0);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* ---- packets with several chunks, and malformed chunks */

static size_t put_chunk(uint8_t *p, uint32_t type, const void *data, uint32_t n) {
  p[0] = (uint8_t)(type >> 24); p[1] = (uint8_t)(type >> 16); p[2] = (uint8_t)(type >> 8); p[3] = (uint8_t)type;
  p[4] = (uint8_t)(n >> 24); p[5] = (uint8_t)(n >> 16); p[6] = (uint8_t)(n >> 8); p[7] = (uint8_t)n;
  memcpy(p + 8, data, n);
  return 8 + n;
}

static size_t ddm_packet(uint8_t *p, uint32_t id, const uint8_t *body, size_t n) {
  uint32_t len = (uint32_t)(11 + n);
  p[0] = (uint8_t)(len >> 24); p[1] = (uint8_t)(len >> 16); p[2] = (uint8_t)(len >> 8); p[3] = (uint8_t)len;
  p[4] = (uint8_t)(id >> 24); p[5] = (uint8_t)(id >> 16); p[6] = (uint8_t)(id >> 8); p[7] = (uint8_t)id;
  p[8] = 0; p[9] = 199; p[10] = 1;
  if (n) memcpy(p + 11, body, n);
  return 11 + n;
}

static void test_multi_chunk_and_malformed(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  hctx c = {0};
  assert_int_equal(ddmc_register_handler(f.vm, T('E', 'C', 'H', 'O'), &kEcho, &c), 0);
  ddmc_host *h = peer_connect(port);
  uint8_t body[128], pkt[160];
  size_t n = put_chunk(body, T('H', 'E', 'L', 'O'), "\0\0\0\1", 4);
  n += put_chunk(body + n, T('Z', 'Z', 'Z', 'Z'), "?", 1);
  n += put_chunk(body + n, T('E', 'C', 'H', 'O'), "xyz", 3);
  size_t pn = ddm_packet(pkt, 0x40001000u, body, n);
  assert_int_equal(ddmc_host_send_raw(h, pkt, pn), 0);
  ddmc_host_packet p;
  /* one reply, carrying the first answer (HELO) ... */
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_true(p.is_reply);
  assert_int_equal(p.id, 0x40001000u);
  assert_int_equal(p.chunk_type, T('H', 'E', 'L', 'O'));
  assert_int_equal(p.length, 11 + 8 + p.chunk_len); /* exactly one chunk in the packet */
  /* ... then the later chunk's answer as its own packet */
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_false(p.is_reply);
  assert_int_equal(p.chunk_type, T('E', 'C', 'H', 'R'));
  assert_memory_equal(p.chunk, "zyx", 3);
  assert_int_equal(atomic_load(&c.calls), 1);

  /* chunk length past the end of the packet: FAIL, and the connection lives on */
  n = put_chunk(body, T('E', 'C', 'H', 'O'), "abcd", 4);
  body[7] = 200; /* claims 200 bytes */
  pn = ddm_packet(pkt, 0x40001001u, body, n);
  assert_int_equal(ddmc_host_send_raw(h, pkt, pn), 0);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.id, 0x40001001u);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  body[4] = 0xff; body[5] = 0xff; body[6] = 0xff; body[7] = 0xff; /* u4 length that would wrap */
  pn = ddm_packet(pkt, 0x40001002u, body, n);
  assert_int_equal(ddmc_host_send_raw(h, pkt, pn), 0);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  /* truncated chunk header, and an empty DDM packet */
  pn = ddm_packet(pkt, 0x40001003u, (const uint8_t *)"HEL", 3);
  assert_int_equal(ddmc_host_send_raw(h, pkt, pn), 0);
  pn = ddm_packet(pkt, 0x40001004u, NULL, 0);
  assert_int_equal(ddmc_host_send_raw(h, pkt, pn), 0);
  for (uint32_t want = 0x40001003u; want <= 0x40001004u; want++) {
    int rc = ddmc_host_recv(h, &p, TMO);
    assert_true(rc == 0 || rc == DDMC_EPROTO); /* the host module may refuse a 199/1 of < 8 bytes */
  }
  assert_int_equal(c.calls, 1);
  assert_int_equal(atomic_load(&c.calls), 1);
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "ok", 2, &p, TMO), 0);
  assert_memory_equal(p.chunk, "ko", 2);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* ---- ZLIB */

static void test_zlib_opt_in(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  hctx c = {0};
  assert_int_equal(ddmc_register_handler(f.vm, T('E', 'C', 'H', 'O'), &kEcho, &c), 0);
  ddmc_host *h = peer_connect(port);
  ddmc_host_packet p;
  /* without opt-in: plain */
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "BIGG", 4, &p, TMO), 0);
  assert_int_equal(p.was_compressed, 0);
  assert_int_equal(p.chunk_len, 65536);
  /* opt in: the ZLIB-wrapped FEAT is answered, and big replies now come compressed */
  assert_int_equal(ddmc_host_opt_in_zlib(h), 0);
  uint32_t fid = ddmc_host_last_id(h);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.id, fid);
  assert_int_equal(p.chunk_type, T('F', 'E', 'A', 'T'));
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "BIGG", 4, &p, TMO), 0);
  assert_int_equal(p.was_compressed, 1);
  assert_int_equal(p.chunk_len, 65536);
  for (int i = 0; i < 65536; i++) assert_int_equal(p.chunk[i], i % 7);
  ddmc_host_stats hs;
  ddmc_host_stats_get(h, &hs);
  assert_true(hs.zlib_in_wire < hs.zlib_in_raw / 10);
  /* small replies stay plain */
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "ab", 2, &p, TMO), 0);
  assert_int_equal(p.was_compressed, 0);
  ddmc_host_free(h);
  /* the next peer has not opted in */
  h = peer_connect(port);
  assert_int_equal(ddmc_host_request(h, T('E', 'C', 'H', 'O'), "BIGG", 4, &p, TMO), 0);
  assert_int_equal(p.was_compressed, 0);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* ---- WAIT and wait_for_debugger */

typedef struct waiter {
  ddmc_vm *vm;
  int timeout;
  atomic_int done;
  int rc;
} waiter;

static void *wait_thread(void *arg) {
  waiter *w = arg;
  w->rc = ddmc_wait_for_debugger(w->vm, w->timeout);
  atomic_store(&w->done, 1);
  return NULL;
}

static void test_wait_for_debugger(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  assert_int_equal(ddmc_wait_for_debugger(f.vm, 50), DDMC_ETIMEDOUT);
  waiter w = {f.vm, 10000, 0, -1};
  pthread_t t;
  pthread_create(&t, NULL, wait_thread, &w);
  for (int i = 0; i < 200 && !ddmc_vm_waiting_for_debugger(f.vm); i++) sleep_ms(5);
  assert_true(ddmc_vm_waiting_for_debugger(f.vm));
  ddmc_host *h = peer_connect(port);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0); /* DDM alone does not release the wait */
  ddmc_host_helo_free(&helo);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0); /* the WAIT that went out on connect */
  assert_int_equal(p.chunk_type, T('W', 'A', 'I', 'T'));
  assert_int_equal(p.chunk_len, 1);
  assert_int_equal(p.chunk[0], 0);
  sleep_ms(100);
  assert_int_equal(atomic_load(&w.done), 0);
  uint32_t id;
  assert_int_equal(ddmc_host_send_command(h, 1, 1, NULL, 0, &id), 0);
  assert_int_equal(wait_for(&w.done, 1), 1);
  pthread_join(t, NULL);
  assert_int_equal(w.rc, 0);
  assert_false(ddmc_vm_waiting_for_debugger(f.vm));
  ddmc_host_free(h);
  fakevm_stop(&f);
}

static void test_exit_chunk(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  ddmc_host *h = peer_connect(port);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, T('E', 'X', 'I', 'T'), "\0\0\0\x07", 4, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  assert_int_equal(atomic_load(&f.exits), 1);
  assert_int_equal(atomic_load(&f.last_exit), 7);
  assert_int_equal(ddmc_host_request(h, T('E', 'X', 'I', 'T'), "\0", 1, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L')); /* too short */
  assert_int_equal(atomic_load(&f.exits), 1);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* ---- server=n: the VM dials out and re-dials after each session */

static void test_dial_out(void **state) {
  (void)state;
  int lfd = -1;
  uint16_t port = 0;
  for (port = 8300; port < 8400; port++) {
    ddmc_host *probe = NULL;
    (void)probe;
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
    if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0) break;
    close(lfd);
    lfd = -1;
  }
  assert_true(lfd >= 0);
  ddmc_options o;
  ddmc_options_init(&o);
  char spec[128];
  snprintf(spec, sizeof(spec), "transport=dt_socket,server=n,address=127.0.0.1:%u", (unsigned)port);
  assert_int_equal(ddmc_options_parse(&o, spec, NULL, 0), 0);
  ddmc_vm_ops ops = {0};
  ddmc_vm *vm;
  assert_int_equal(ddmc_vm_new(&vm, &o, &ops, NULL, NULL), 0);
  assert_int_equal(ddmc_vm_start(vm), 0);
  for (int round = 0; round < 2; round++) {
    struct pollfd pfd = {.fd = lfd, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 5000), 1);
    int fd = accept(lfd, NULL, NULL);
    assert_true(fd >= 0);
    ddmc_host *h;
    assert_int_equal(ddmc_host_from_fd(&h, fd), 0);
    assert_int_equal(ddmc_host_handshake(h, TMO), 0);
    ddmc_host_helo helo;
    assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
    assert_int_equal(helo.pid, (uint32_t)getpid());
    ddmc_host_helo_free(&helo);
    ddmc_host_free(h);
  }
  ddmc_vm_free(vm);
  close(lfd);
}


/* ---- thread and heap chunk families against the fake VM */

static void test_thread_chunks(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  ddmc_host *h = peer_connect(port);
  ddmc_host_packet p;
  /* notifications are off until THEN(1) */
  assert_int_equal(ddmc_host_request(h, T('H', 'E', 'L', 'O'), "\0\0\0\1", 4, &p, TMO), 0);
  assert_int_equal(ddmc_notify_thread_start(f.vm, 77, "early"), DDMC_ENOTCONN);
  assert_int_equal(ddmc_host_request(h, T('T', 'H', 'E', 'N'), "\1", 1, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  int thcr = 0, longest = 0;
  while (ddmc_host_recv(h, &p, 200) == 0) {
    assert_int_equal(p.chunk_type, T('T', 'H', 'C', 'R'));
    ddmc_host_thname th;
    assert_int_equal(ddmc_host_thname_parse(p.chunk, p.chunk_len, &th), 0);
    if ((int)strlen(th.name) > longest) longest = (int)strlen(th.name);
    if (th.thread_id == 2) assert_string_equal(th.name, "worker \xe2\x98\x83");
    ddmc_host_thname_free(&th);
    thcr++;
  }
  assert_int_equal(thcr, 3);
  assert_true(longest > 124); /* Dalvik clipped at 124 characters; nothing is clipped here */
  /* THCR, THNM, THDE from VM threads */
  assert_int_equal(ddmc_notify_thread_start(f.vm, 9, "new"), 0);
  assert_int_equal(ddmc_notify_thread_name(f.vm, 9, "renamed"), 0);
  assert_int_equal(ddmc_notify_thread_end(f.vm, 9), 0);
  const uint32_t want[3] = {T('T', 'H', 'C', 'R'), T('T', 'H', 'N', 'M'), T('T', 'H', 'D', 'E')};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
    assert_int_equal(p.chunk_type, want[i]);
  }
  /* THST, the shipped layout: [u1 4][u1 18][u2 count] + 18-byte entries */
  assert_int_equal(ddmc_host_request(h, T('T', 'H', 'S', 'T'), NULL, 0, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('T', 'H', 'S', 'T'));
  assert_int_equal(p.chunk[0], 4);
  assert_int_equal(p.chunk[1], 18);
  assert_int_equal(p.chunk_len, 4 + 3 * 18);
  ddmc_host_thst st;
  assert_int_equal(ddmc_host_thst_parse(p.chunk, p.chunk_len, &st), 0);
  assert_int_equal(st.count, 3);
  assert_int_equal(st.entries[1].status, DDMC_THREAD_SLEEPING);
  assert_int_equal(st.entries[2].status, DDMC_THREAD_WAIT);
  assert_int_equal(st.entries[2].daemon, 1);
  assert_int_equal(st.entries[0].tid, (uint32_t)getpid());
  ddmc_host_thst_free(&st);
  /* THST [u4 interval]: periodic unsolicited updates, 0 turns them off */
  assert_int_equal(ddmc_host_request(h, T('T', 'H', 'S', 'T'), "\0\0\0\x32", 4, &p, TMO), 0); /* 50 ms */
  assert_int_equal(p.length, 11);
  int periodic = 0;
  for (int64_t i = 0; i < 30 && periodic < 3; i++)
    if (ddmc_host_recv(h, &p, 200) == 0 && p.chunk_type == T('T', 'H', 'S', 'T')) periodic++;
  assert_int_equal(periodic, 3);
  assert_int_equal(ddmc_host_request(h, T('T', 'H', 'S', 'T'), "\0\0\0\0", 4, &p, TMO), 0);
  while (ddmc_host_recv(h, &p, 150) == 0) {
  }
  assert_int_equal(ddmc_host_recv(h, &p, 300), DDMC_ETIMEDOUT);
  /* STKL: frames; unknown thread: FAIL */
  assert_int_equal(ddmc_host_request(h, T('S', 'T', 'K', 'L'), "\0\0\0\1", 4, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('S', 'T', 'K', 'L'));
  ddmc_host_stkl sk;
  assert_int_equal(ddmc_host_stkl_parse(p.chunk, p.chunk_len, &sk), 0);
  assert_int_equal(sk.thread_id, 1);
  assert_int_equal(sk.count, 2);
  assert_string_equal(sk.frames[0].class_name, "Main");
  assert_string_equal(sk.frames[0].method, "loop");
  assert_string_equal(sk.frames[0].file, "Main.mvm");
  assert_int_equal(sk.frames[0].line, 12);
  assert_null(sk.frames[1].file);
  ddmc_host_stkl_free(&sk);
  assert_int_equal(ddmc_host_request(h, T('S', 'T', 'K', 'L'), "\0\0\0\5", 4, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  /* the peer leaves: notification switches off */
  ddmc_host_free(h);
  for (int i = 0; i < 100 && ddmc_vm_is_connected(f.vm); i++) sleep_ms(10);
  h = peer_connect(port);
  assert_int_equal(ddmc_host_request(h, T('H', 'E', 'L', 'O'), "\0\0\0\1", 4, &p, TMO), 0);
  assert_int_equal(ddmc_notify_thread_start(f.vm, 10, "x"), DDMC_ENOTCONN);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* A VM with no thread or heap hooks answers FAIL, never crashes. */
static void test_vm_without_hooks(void **state) {
  (void)state;
  ddmc_options o;
  ddmc_options_init(&o);
  assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0", NULL, 0), 0);
  ddmc_vm_ops ops = {0};
  ddmc_vm *vm;
  assert_int_equal(ddmc_vm_new(&vm, &o, &ops, NULL, NULL), 0);
  assert_int_equal(ddmc_vm_start(vm), 0);
  ddmc_host *h = peer_connect(ddmc_vm_port(vm));
  ddmc_host_packet p;
  const struct {
    uint32_t type;
    const char *data;
    size_t n;
  } reqs[] = {{T('S', 'T', 'K', 'L'), "\0\0\0\1", 4}, {T('T', 'H', 'S', 'T'), NULL, 0}, {T('H', 'P', 'I', 'F'), "\1", 1},
              {T('H', 'P', 'G', 'C'), NULL, 0},        {T('H', 'P', 'S', 'G'), "\1\0", 2}, {T('E', 'X', 'I', 'T'), "\0\0\0\1", 4}};
  for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
    assert_int_equal(ddmc_host_request(h, reqs[i].type, reqs[i].data, reqs[i].n, &p, TMO), 0);
    assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  }
  assert_int_equal(ddmc_gc_walk(vm), DDMC_ENOTCONN); /* no dump was accepted */
  ddmc_host_free(h);
  ddmc_vm_free(vm);
}

typedef struct dumpcount {
  uint64_t units;
  uint32_t first_addr;
  int segs;
} dumpcount;

static int add_units(void *arg, uint32_t off, uint32_t units, uint8_t state) {
  (void)off;
  (void)state;
  ((dumpcount *)arg)->units += units;
  return 0;
}

/* Receives HPST, segments of seg_type, HPEN; returns the units covered. */
static dumpcount recv_dump(ddmc_host *h, uint32_t st, uint32_t seg_type, uint32_t en) {
  ddmc_host_packet p;
  dumpcount d = {0, 0, 0};
  do {
    assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  } while (p.chunk_type != st);
  for (;;) {
    assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
    if (p.chunk_type == en) break;
    assert_int_equal(p.chunk_type, seg_type);
    assert_true(p.chunk_len <= 16368);
    ddmc_host_heapseg seg;
    assert_int_equal(ddmc_host_heapseg_parse(p.chunk, p.chunk_len, &seg), 0);
    if (d.segs++ == 0) d.first_addr = seg.addr;
    assert_int_equal(ddmc_host_heapseg_decode(&seg, add_units, &d), 0);
  }
  return d;
}

static void test_heap_chunks(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = fakevm_start(&f, NULL, 0);
  ddmc_host *h = peer_connect(port);
  ddmc_host_packet p;
  assert_int_equal(ddmc_gc_walk(f.vm), DDMC_ENOTCONN); /* nobody asked */
  /* HPIF now: the 33-byte info chunk before the empty reply */
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'I', 'F'), "\1", 1, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('H', 'P', 'I', 'F'));
  assert_int_equal(p.chunk_len, 33);
  ddmc_host_hpif hp;
  assert_int_equal(ddmc_host_hpif_parse(p.chunk, p.chunk_len, &hp), 0);
  assert_int_equal(hp.heaps[0].heap_id, 1);
  assert_int_equal(hp.heaps[0].reason, 1);
  assert_int_equal(hp.heaps[0].max_bytes, 64u << 20);
  assert_int_equal(hp.heaps[0].footprint, 1u << 20);
  assert_int_equal(hp.heaps[0].allocated_objects, 1234);
  assert_true(hp.heaps[0].timestamp_ms > 1600000000000ull);
  ddmc_host_hpif_free(&hp);
  /* bad requests: FAIL */
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'I', 'F'), "\7", 1, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'S', 'G'), "\2\0", 2, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  /* HPGC asks the VM for a collection */
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'G', 'C'), NULL, 0, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  assert_int_equal(atomic_load(&f.gc_requests), 1);
  /* HPIF at the next GC only, HPSG merged, NHSG */
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'I', 'F'), "\2", 1, &p, TMO), 0);
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'S', 'G'), "\1\0", 2, &p, TMO), 0);
  assert_int_equal(ddmc_host_request(h, T('N', 'H', 'S', 'G'), "\1\0", 2, &p, TMO), 0);
  assert_true(ddmc_gc_walk_wanted(f.vm));
  assert_int_equal(ddmc_gc_walk(f.vm), 0);
  assert_int_equal(ddmc_gc_done(f.vm), 0);
  dumpcount d = recv_dump(h, T('H', 'P', 'S', 'T'), T('H', 'P', 'S', 'G'), T('H', 'P', 'E', 'N'));
  assert_int_equal(d.units * 8, f.cfg.managed.info.footprint); /* the whole heap, exactly */
  assert_int_equal(d.first_addr, 0);                /* relative to the base above 4 GiB */
  dumpcount nd = recv_dump(h, T('N', 'H', 'S', 'T'), T('N', 'H', 'S', 'G'), T('N', 'H', 'E', 'N'));
  assert_int_equal(nd.units * 8, 4096);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('H', 'P', 'I', 'F'));
  assert_int_equal(p.chunk[16], 2); /* reason: next GC */
  /* the next GC sends no HPIF (it was one-shot); HPSO now, one run per object: more bytes */
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'S', 'G'), "\1\1", 2, &p, TMO), 0);
  assert_int_equal(ddmc_host_request(h, T('N', 'H', 'S', 'G'), "\0\0", 2, &p, TMO), 0);
  assert_int_equal(ddmc_gc_walk(f.vm), 0);
  assert_int_equal(ddmc_gc_done(f.vm), 0);
  dumpcount o = recv_dump(h, T('H', 'P', 'S', 'T'), T('H', 'P', 'S', 'O'), T('H', 'P', 'E', 'N'));
  assert_int_equal(o.units * 8, f.cfg.managed.info.footprint);
  assert_int_equal(ddmc_host_recv(h, &p, 300), DDMC_ETIMEDOUT);
  /* the peer leaves: dumps stop */
  ddmc_host_free(h);
  for (int i = 0; i < 100 && ddmc_vm_is_connected(f.vm); i++) sleep_ms(10);
  assert_false(ddmc_gc_walk_wanted(f.vm));
  fakevm_stop(&f);
}

/* ddmlib reads HPIF's u4 fields as Java ints: sizes of 2 GiB or more go out as 0x7fffffff, not
 * as the u4 maximum (which ddmlib would show as -1) nor wrapped. */
static void test_hpif_clamped_for_ddmlib(void **state) {
  (void)state;
  fakevm_config cfg = fakevm_default;
  cfg.managed.info.max_bytes = 4ull << 30;
  cfg.managed.info.footprint = 0x80000000ull;
  cfg.managed.info.allocated_bytes = 0x7fffffffull;
  cfg.managed.info.allocated_objects = 5;
  fakevm f;
  uint16_t port = fakevm_start_cfg(&f, &cfg, NULL, 0);
  ddmc_host *h = peer_connect(port);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'I', 'F'), "\1", 1, &p, TMO), 0);
  assert_int_equal(ddmc_host_recv(h, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('H', 'P', 'I', 'F'));
  assert_int_equal(p.chunk_len, 33);
  static const uint8_t want[16] = {0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff,
                                   0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 5};
  assert_memory_equal(p.chunk + 17, want, sizeof(want));
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* A VM that gives no tid (JVM TI) answers CPU times itself: THST shows them as clock ticks, what
 * /proc gives and ddmlib displays; a thread with a tid keeps /proc's figures. */
static void test_thst_cpu_times_from_vm(void **state) {
  (void)state;
  long hz = sysconf(_SC_CLK_TCK);
  uint64_t tick = 1000000000ull / (uint64_t)hz;
  fakevm_thread threads[2] = {
      {.info = {1, 0, "main", DDMC_THREAD_RUNNING, 0}},
      {.info = {2, 0, "busy", DDMC_THREAD_RUNNING, 0}, .cpu_user_ns = 250 * tick + 1, .cpu_system_ns = 7 * tick},
  };
  fakevm_config cfg = fakevm_default;
  cfg.threads = threads;
  cfg.nthreads = 2;
  fakevm f;
  uint16_t port = fakevm_start_cfg(&f, &cfg, NULL, 0);
  ddmc_host *h = peer_connect(port);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, T('T', 'H', 'S', 'T'), NULL, 0, &p, TMO), 0);
  ddmc_host_thst st;
  assert_int_equal(ddmc_host_thst_parse(p.chunk, p.chunk_len, &st), 0);
  assert_int_equal(st.count, 2);
  assert_int_equal(st.entries[0].tid, (uint32_t)getpid()); /* /proc's, not the op's */
  assert_int_equal(st.entries[1].tid, 0);
  assert_int_equal(st.entries[1].utime, 250);
  assert_int_equal(st.entries[1].stime, 7);
  ddmc_host_thst_free(&st);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

int main(void) {
  alarm(170);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_helo_roundtrip),
      cmocka_unit_test(test_handlers_fail_unknown),
      cmocka_unit_test(test_connected_disconnected_once),
      cmocka_unit_test(test_unsolicited_from_threads),
      cmocka_unit_test(test_non_ddm_and_debugger_active),
      cmocka_unit_test(test_reconnect_second_peer_and_bad_peers),
      cmocka_unit_test(test_suspend_blocks_start),
      cmocka_unit_test(test_multi_chunk_and_malformed),
      cmocka_unit_test(test_zlib_opt_in),
      cmocka_unit_test(test_wait_for_debugger),
      cmocka_unit_test(test_exit_chunk),
      cmocka_unit_test(test_dial_out),
      cmocka_unit_test(test_thread_chunks),
      cmocka_unit_test(test_vm_without_hooks),
      cmocka_unit_test(test_heap_chunks),
      cmocka_unit_test(test_hpif_clamped_for_ddmlib),
      cmocka_unit_test(test_thst_cpu_times_from_vm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
