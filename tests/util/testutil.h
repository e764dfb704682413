/* SPDX-License-Identifier: Apache-2.0 */
/* What several tests need alike, in one place (the ddmc_testutil library, tests/CMakeLists.txt;
 * util/memsrc.h, a file in memory as the hprof converter's input, has its own header):
 * time, a failing allocator, a VM thread that keeps sending while a peer reads nothing and a
 * peer with a tiny receive window, and the byte builder the host tests write packets with.
 * Helpers that assert do so with cmocka: call them from the test's own thread. */
#ifndef DDMC_TEST_UTIL_H
#define DDMC_TEST_UTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ddmc/ddmc.h"

struct ddmc_host;

/* ---- time (clock.c) */

void sleep_ms(int ms);
/* CLOCK_MONOTONIC in milliseconds. */
int64_t mono_ms(void);

/* ---- a failing allocator (failer.c): allocation number fail_at (from 1) returns NULL; live
 * counts the blocks held, so a run that ends with live != 0 leaked. Thread: any (atomics). */

typedef struct failer {
  atomic_long count;   /* allocations so far */
  atomic_long fail_at; /* 1-based; 0 = never */
  atomic_long failed;  /* allocations refused */
  atomic_long live;    /* outstanding blocks */
} failer;

/* The allocator table over f (borrowed: f outlives every user of the table). */
ddmc_allocator failer_allocator(failer *f);
/* Counts afresh and fails allocation number fail_at (0: none). */
void failer_arm(failer *f, long fail_at);

/* ---- a stalled peer (stall.c) */

/* A VM thread sending chunks of payload bytes as fast as it can, as a hot method posting events
 * would, while the peer reads nothing: every call must come back (0, EQFULL or ENOTCONN). */
typedef struct hammer {
  ddmc_vm *vm;
  size_t payload;
  atomic_int stop;
  atomic_long calls;
  atomic_long bad; /* calls that answered anything else */
  pthread_t th;
} hammer;

void hammer_start(hammer *hm, ddmc_vm *vm, size_t payload);
/* Stops and joins the thread; fails the test if a call answered anything else. */
void hammer_stop(hammer *hm);
/* Polls the VM's statistics every 20 ms until a transfer was dropped or timeout_ms passed; *st
 * holds the last reading. */
void wait_transfer_dropped(ddmc_vm *vm, ddmc_stats *st, int timeout_ms);
/* A peer on 127.0.0.1:port with a 4 KiB receive buffer (set before connect, so the window is small
 * from the start), handshaken within timeout_ms. The caller frees it. */
struct ddmc_host *small_window_peer(uint16_t port, int timeout_ms);

/* ---- a byte builder (bytes.c): big-endian values appended to a growing buffer */

typedef struct bb {
  uint8_t *d;
  size_t n, cap;
} bb;

void bb_need(bb *b, size_t k);
void bb_u8(bb *b, uint8_t v);
void bb_u16(bb *b, uint16_t v);
void bb_u32(bb *b, uint32_t v);
void bb_u64(bb *b, uint64_t v);
void bb_bytes(bb *b, const void *p, size_t n);
/* ASCII string as [u4 len][UTF-16BE]. */
void bb_str(bb *b, const char *s);
/* UTF-16 units as [u4 len][UTF-16BE]. */
void bb_units(bb *b, const uint16_t *u, size_t n);
void bb_free(bb *b);

/* Packets as a VM writes them: a DDM chunk command, a reply, a DDM chunk reply. */
void pk_chunk_cmd(bb *b, uint32_t id, uint32_t type, const void *p, size_t n);
void pk_reply(bb *b, uint32_t id, uint16_t err, const void *body, size_t n);
void pk_chunk_reply(bb *b, uint32_t id, uint32_t type, const void *p, size_t n);

#endif
