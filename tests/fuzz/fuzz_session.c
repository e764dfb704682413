/* libFuzzer: everything the VM side does with bytes from a peer, without a socket: the framer,
 * dispatch, and every built-in chunk handler (HELO FEAT THEN THST STKL HPIF HPGC HPSG NHSG EXIT
 * DBGD, ZLIB, multi-chunk packets, non-DDM commands, replies from the peer).
 *
 * Input: the first byte picks the mode. Mode 0 feeds the rest raw after a good handshake. Other
 * modes build packets from a compact form, so the fuzzer spends its time in chunk payloads:
 * [u1 op][u1 len][len bytes]... where op selects a chunk type (or a non-DDM command, or a whole
 * packet of several chunks). A GC walk and a GC-done run at the end when the peer asked for them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jdwp/session.h"

static const uint32_t kTypes[] = {
    DDMC_FOURCC('H', 'E', 'L', 'O'), DDMC_FOURCC('F', 'E', 'A', 'T'), DDMC_FOURCC('T', 'H', 'E', 'N'),
    DDMC_FOURCC('T', 'H', 'S', 'T'), DDMC_FOURCC('S', 'T', 'K', 'L'), DDMC_FOURCC('H', 'P', 'I', 'F'),
    DDMC_FOURCC('H', 'P', 'G', 'C'), DDMC_FOURCC('H', 'P', 'S', 'G'), DDMC_FOURCC('N', 'H', 'S', 'G'),
    DDMC_FOURCC('E', 'X', 'I', 'T'), DDMC_FOURCC('D', 'B', 'G', 'D'), DDMC_FOURCC('Z', 'L', 'I', 'B'),
    DDMC_FOURCC('A', 'P', 'N', 'M'), DDMC_FOURCC('W', 'A', 'I', 'T'), DDMC_FOURCC('X', 'X', 'X', 'X'),
};
#define NTYPES (sizeof(kTypes) / sizeof(kTypes[0]))

static int for_each_thread(void *d, ddmc_thread_visit_fn fn, void *arg) {
  (void)d;
  ddmc_thread_info a = {1, 1, "main", DDMC_THREAD_RUNNING, 0};
  ddmc_thread_info b = {2, 1, "w\xff\xfe", DDMC_THREAD_WAIT, 1};
  int rc = fn(arg, &a);
  return rc ? rc : fn(arg, &b);
}
static int thread_stack(void *d, uint32_t id, ddmc_frame_visit_fn fn, void *arg) {
  (void)d;
  if (id > 2) return DDMC_ENOENT;
  ddmc_frame f = {"C", "m", id == 1 ? "F.java" : NULL, 3};
  return fn(arg, &f);
}
static int heap_info(void *d, int heap, ddmc_heap_info *out) {
  (void)d;
  (void)heap;
  out->max_bytes = 1 << 20;
  out->footprint = 4096;
  out->allocated_bytes = 100;
  out->allocated_objects = 3;
  out->base = 0x10000;
  return 0;
}
static int walk_heap(void *d, int heap, ddmc_heap_visit_fn fn, void *arg) {
  (void)d;
  (void)heap;
  int rc = fn(arg, 0x10000, 24, DDMC_KIND_OBJECT, DDMC_SOLID_HARD);
  if (!rc) rc = fn(arg, 0x10018, 2048, DDMC_KIND_ARRAY_1, DDMC_SOLID_HARD);
  if (!rc) rc = fn(arg, 0x10818, 4096 - 0x818, DDMC_KIND_OBJECT, DDMC_SOLID_FREE);
  return rc;
}
static int request_gc(void *d) { (void)d; return 0; }
static void on_exit_hook(void *d, int32_t s) { (void)d; (void)s; }

static ddmc_vm *g_vm;

static void setup(void) {
  ddmc_options o;
  ddmc_options_init(&o);
  o.transport = DDMC_TRANSPORT_SOCKET;
  o.max_packet = 1 << 16;
  o.sendq_bytes = 1 << 20;
  o.zlib_threshold = 64;
  ddmc_vm_ops ops = {0};
  ops.for_each_thread = for_each_thread;
  ops.thread_stack = thread_stack;
  ops.heap_info = heap_info;
  ops.walk_heap = walk_heap;
  ops.request_gc = request_gc;
  ops.exit = on_exit_hook;
  if (ddmc_vm_new(&g_vm, &o, &ops, NULL, NULL) != 0) abort();
}

static size_t put_packet(uint8_t *out, uint32_t id, uint8_t set, uint8_t cmd, const uint8_t *body, size_t n) {
  ddmc__put_u32(out, (uint32_t)(11 + n));
  ddmc__put_u32(out + 4, id);
  out[8] = 0;
  out[9] = set;
  out[10] = cmd;
  if (n) memcpy(out + 11, body, n);
  return 11 + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (g_vm == NULL) setup();
  if (size < 1) return 0;
  ddmc__session s;
  ddmc__session_init(&s, g_vm, -1);
  int rc = ddmc__session_input(&s, (const uint8_t *)DDMC__HANDSHAKE, DDMC__HANDSHAKE_LEN);
  uint8_t mode = data[0];
  data++;
  size--;
  if (mode == 0) {
    if (rc == 0) rc = ddmc__session_input(&s, data, size);
  } else {
    uint8_t *pkt = malloc(11 + 8 * 8 + 255 * 8);
    uint8_t body[8 * (8 + 255)];
    size_t off = 0;
    uint32_t id = 1;
    while (rc == 0 && off + 2 <= size) {
      uint8_t op = data[off], len = data[off + 1];
      off += 2;
      if (len > size - off) len = (uint8_t)(size - off);
      const uint8_t *payload = data + off;
      off += len;
      size_t bn = 0;
      if (op >= 0xf0) { /* a non-DDM command or a reply from the peer */
        size_t n = put_packet(pkt, id++, (uint8_t)(op & 7), 1, payload, len);
        if (op == 0xff) pkt[8] = 0x80;
        rc = ddmc__session_input(&s, pkt, n);
        continue;
      }
      int chunks = op >= 0xe0 ? (op & 7) + 1 : 1; /* several chunks sharing the payload */
      for (int c = 0; c < chunks; c++) {
        uint32_t type = kTypes[(size_t)(op + c) % NTYPES];
        ddmc__put_u32(body + bn, type);
        ddmc__put_u32(body + bn + 4, len);
        memcpy(body + bn + 8, payload, len);
        bn += 8 + len;
      }
      size_t n = put_packet(pkt, id++, 199, 1, body, bn);
      rc = ddmc__session_input(&s, pkt, n);
      if (s.out.len > (1u << 20)) ddmc__buf_reset(&s.out);
    }
    free(pkt);
  }
  ddmc_gc_walk(g_vm);
  ddmc_gc_done(g_vm);
  ddmc__session_drain_queue(&s, 0);
  ddmc__session_end(&s, rc);
  return 0;
}
