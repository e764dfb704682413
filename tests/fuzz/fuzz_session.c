/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: everything the VM side does with bytes from a peer, without a socket: the framer,
 * dispatch, and every built-in chunk handler (HELO FEAT THEN THST STKL HPIF HPGC HPSG NHSG EXIT
 * DBGD, ZLIB, the profiling chunks but MPRS, the heap dumps HPDS and HPDU over the tests' fake
 * bridge (../fakebridge.h, its heap, no debugger), multi-chunk packets, non-DDM commands, replies from the peer). HPDU writes a file where
 * its payload says, so its payload is remade from the fuzz bytes: a one-character name in
 * /tmp/ddmc-fuzz-hprof/ (or in a directory there that does not exist), with a length that may
 * lie; the file is removed after each input.
 *
 * Input: the first byte picks the mode. Mode 0 feeds the rest raw after a good handshake. Other
 * modes build packets from a compact form, so the fuzzer spends its time in chunk payloads:
 * [u1 op][u1 len][len bytes]... where op selects a chunk type (or a non-DDM command, or a whole
 * packet of several chunks). A GC walk and a GC-done run at the end when the peer asked for them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddmc/debugger.h"
#include "fakebridge.h"
#include "jdwp/session.h"

static const uint32_t kTypes[] = {
    DDMC_FOURCC('H', 'E', 'L', 'O'), DDMC_FOURCC('F', 'E', 'A', 'T'), DDMC_FOURCC('T', 'H', 'E', 'N'),
    DDMC_FOURCC('T', 'H', 'S', 'T'), DDMC_FOURCC('S', 'T', 'K', 'L'), DDMC_FOURCC('H', 'P', 'I', 'F'),
    DDMC_FOURCC('H', 'P', 'G', 'C'), DDMC_FOURCC('H', 'P', 'S', 'G'), DDMC_FOURCC('N', 'H', 'S', 'G'),
    DDMC_FOURCC('E', 'X', 'I', 'T'), DDMC_FOURCC('D', 'B', 'G', 'D'), DDMC_FOURCC('Z', 'L', 'I', 'B'),
    DDMC_FOURCC('A', 'P', 'N', 'M'), DDMC_FOURCC('W', 'A', 'I', 'T'), DDMC_FOURCC('X', 'X', 'X', 'X'),
    /* Profiling, over the fake bridge's names and method events. Not MPRS: it writes a file
     * wherever its payload says. */
    DDMC_FOURCC('R', 'E', 'A', 'E'), DDMC_FOURCC('R', 'E', 'A', 'Q'), DDMC_FOURCC('R', 'E', 'A', 'L'),
    DDMC_FOURCC('M', 'P', 'S', 'S'), DDMC_FOURCC('M', 'P', 'S', 'E'), DDMC_FOURCC('S', 'P', 'S', 'S'),
    DDMC_FOURCC('S', 'P', 'S', 'E'), DDMC_FOURCC('M', 'P', 'R', 'E'), DDMC_FOURCC('M', 'P', 'R', 'Q'),
    DDMC_FOURCC('H', 'P', 'D', 'S'), DDMC_FOURCC('H', 'P', 'D', 'U'),
};
#define NTYPES (sizeof(kTypes) / sizeof(kTypes[0]))

/* The tests' fake VM (../fakevm.c), set up once: two threads with one-frame stacks (one with no
 * file, one with a name that is not UTF-8), a 4 KiB heap; OS tid 1, so no /proc read per thread.
 * Every hook is there, the log included (printed only with DDMC_TEST_VERBOSE). */
static const ddmc_frame kFrameWithFile[] = {{.class_name = "C", .method_name = "m", .file = "F.java", .line = 3}};
static const ddmc_frame kFrameNoFile[] = {{.class_name = "C", .method_name = "m", .file = NULL, .line = 3}};
static const fakevm_thread kThreads[] = {
    {.info = {.id = 1, .tid = 1, .name = "main", .status = DDMC_THREAD_RUNNING}, .stack = kFrameWithFile, .depth = 1},
    {.info = {.id = 2, .tid = 1, .name = "w\xff\xfe", .status = DDMC_THREAD_WAIT, .daemon = 1},
     .stack = kFrameNoFile,
     .depth = 1},
};
static const fakevm_region kHeap[] = {
    {24, DDMC_KIND_OBJECT, DDMC_SOLID_HARD},
    {2048, DDMC_KIND_ARRAY_1, DDMC_SOLID_HARD},
    {4096 - 0x818, DDMC_KIND_OBJECT, DDMC_SOLID_FREE},
};
static fakebridge g_fb;
static ddmc_vm *g_vm;

#define HPDU_DIR "/tmp/ddmc-fuzz-hprof/"
static const char kNameChars[] = "abcdefghijklmnopqrstuvwxyz0123456789._-";

/* HPDU's payload from fuzz bytes: [u4 n][UTF-16 path] with a safe path (see the top). */
static size_t hpdu_payload(const uint8_t *in, size_t len, uint8_t *out, char *path, size_t cap) {
  uint8_t b0 = len > 0 ? in[0] : 0, b1 = len > 1 ? in[1] : 0;
  snprintf(path, cap, "%s%s%c", HPDU_DIR, (b0 & 2) ? "missing/" : "", kNameChars[b1 % (sizeof(kNameChars) - 1)]);
  size_t n = strlen(path);
  ddmc__put_u32(out, (b0 & 1) ? (uint32_t)(len > 2 ? in[2] : 0) : (uint32_t)n); /* may lie */
  for (size_t i = 0; i < n; i++) out[4 + 2 * i] = 0, out[5 + 2 * i] = (uint8_t)path[i];
  return 4 + 2 * n;
}

static void setup(void) {
  const fakevm_heap heap = {.info = {.max_bytes = 1 << 20,
                                     .footprint = 4096,
                                     .allocated_bytes = 100,
                                     .allocated_objects = 3,
                                     .base = 0x10000},
                            .pattern = kHeap,
                            .npattern = sizeof(kHeap) / sizeof(kHeap[0])};
  const fakevm_config cfg = {.threads = kThreads, .nthreads = 2, .managed = heap, .native = heap};
  ddmc_options o;
  ddmc_options_init(&o);
  o.transport = DDMC_TRANSPORT_SOCKET;
  o.max_packet = 1 << 16;
  o.sendq_bytes = 1 << 20;
  o.zlib_threshold = 64;
  if (fakebridge_new_vm(&g_fb, FAKEBRIDGE_NO_DEBUGGER | FAKEBRIDGE_HEAP, &cfg, &o, NULL) != 0) abort();
  g_vm = g_fb.fv.vm;
  mkdir(HPDU_DIR, 0700);
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
  ddmc__jdwp_session s;
  ddmc__jdwp_session_init(&s, g_vm, -1);
  int rc = ddmc__jdwp_session_input(&s, (const uint8_t *)DDMC__HANDSHAKE, DDMC__HANDSHAKE_LEN);
  uint8_t mode = data[0];
  data++;
  size--;
  if (mode == 0) {
    if (rc == 0) rc = ddmc__jdwp_session_input(&s, data, size);
  } else {
    uint8_t *pkt = malloc(11 + 8 * 8 + 255 * 8);
    uint8_t body[8 * (8 + 255)];
    char hpdu_path[128] = "";
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
        rc = ddmc__jdwp_session_input(&s, pkt, n);
        continue;
      }
      int chunks = op >= 0xe0 ? (op & 7) + 1 : 1; /* several chunks sharing the payload */
      for (int c = 0; c < chunks; c++) {
        uint32_t type = kTypes[(size_t)(op + c) % NTYPES];
        ddmc__put_u32(body + bn, type);
        if (type == DDMC_FOURCC('H', 'P', 'D', 'U')) {
          size_t k = hpdu_payload(payload, len, body + bn + 8, hpdu_path, sizeof hpdu_path);
          ddmc__put_u32(body + bn + 4, (uint32_t)k);
          bn += 8 + k;
          continue;
        }
        ddmc__put_u32(body + bn + 4, len);
        memcpy(body + bn + 8, payload, len);
        bn += 8 + len;
      }
      size_t n = put_packet(pkt, id++, 199, 1, body, bn);
      rc = ddmc__jdwp_session_input(&s, pkt, n);
      if (s.out.len > (1u << 20)) ddmc__buf_reset(&s.out);
    }
    free(pkt);
    if (hpdu_path[0]) unlink(hpdu_path);
  }
  ddmc_gc_walk(g_vm);
  ddmc_gc_done(g_vm);
  ddmc__jdwp_session_drain_queue(&s, 0);
  ddmc__jdwp_session_end(&s, rc);
  return 0;
}
