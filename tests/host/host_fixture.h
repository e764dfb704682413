/* SPDX-License-Identifier: Apache-2.0 */
/* What the host tests (tests/host/test_host_*.c, host/ddmc_host) share: the peer end of a
 * socketpair() on which the test plays the VM, and the every-prefix runner of the parser tests.
 * Every blocking call has a timeout, and each test arms alarm() as a backstop (HOST_TEST). */
#ifndef DDMC_TEST_HOST_FIXTURE_H
#define DDMC_TEST_HOST_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ddmc_host.h"
#include "util/testutil.h"

#define FOURCC DDMC_HOST_FOURCC
/* The first request id a ddmc_host uses: ids are deterministic. */
#define ID0 0x40000000u

/* alarm(20) before each test, none after: a hung test dies instead of blocking ctest. */
int setup_alarm(void **state);
int teardown_alarm(void **state);
#define HOST_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_alarm, teardown_alarm)

/* A connected ddmc_host in *h over a socketpair(); *peer is the other end, the test's to close. */
void pair(ddmc_host **h, int *peer);
/* Writes all n bytes (peer side). */
void wr(int fd, const void *p, size_t n);
/* Reads exactly n bytes (peer side), bounded by alarm(). */
void rd(int fd, void *p, size_t n);
uint32_t be32(const uint8_t *p);
/* Reads one whole packet the host sent into b (peer side). */
void rd_packet(int fd, bb *b);

/* A HELO payload from a VM with pid 4242, name "Dalvik v2.1.0" and the first optional_fields
 * (0..6) of the optional fields that follow. */
void helo_payload(bb *b, int optional_fields);

/* Calls fn on an exact-size heap copy of every prefix of (p, n) (ASan sees any over-read) and
 * returns how many prefixes parsed with rc 0; fn stores the parser's rc in *rc. */
typedef int (*prefix_fn)(const uint8_t *p, size_t n, void *ud, int *rc);
size_t each_prefix(const uint8_t *p, size_t n, prefix_fn fn, void *ud);

#endif
