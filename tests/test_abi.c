/* SPDX-License-Identifier: Apache-2.0 */
/* The ABI guards: structs the caller owns are never written past the size its header gave, a
 * struct from a different layout is refused, and error codes keep their values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ddmc/ddmc.h"

#define CANARY 0xA5

static int all_canary(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != CANARY) return 0;
  return 1;
}

/* An older caller's ddmc_stats that ends after packets_in: the library fills those and no more. */
static void test_stats_smaller_struct(void **state) {
  (void)state;
  ddmc_options o;
  ddmc_options_init(&o);
  o.transport = DDMC_TRANSPORT_SOCKET;
  ddmc_vm *vm;
  assert_int_equal(ddmc_vm_new(&vm, &o, NULL, NULL, NULL), 0);
  unsigned char buf[sizeof(ddmc_stats) + 16];
  memset(buf, CANARY, sizeof(buf));
  size_t old = offsetof(ddmc_stats, packets_out);
  ddmc_vm_get_stats_(vm, (ddmc_stats *)(void *)buf, old);
  assert_true(all_canary(buf + old, sizeof(buf) - old));
  assert_false(all_canary(buf, old)); /* sessions and packets_in were written (as zeros) */
  memset(buf, CANARY, sizeof(buf));
  ddmc_vm_get_stats(vm, (ddmc_stats *)(void *)buf);
  assert_true(all_canary(buf + sizeof(ddmc_stats), 16));
  ddmc_vm_free(vm);
}

static void test_options_init_respects_size(void **state) {
  (void)state;
  unsigned char buf[sizeof(ddmc_options) + 16];
  memset(buf, CANARY, sizeof(buf));
  ddmc_options_init_((ddmc_options *)(void *)buf, sizeof(buf)); /* a newer caller's bigger struct */
  assert_true(all_canary(buf + sizeof(ddmc_options), 16));
  assert_int_equal(((ddmc_options *)(void *)buf)->max_packet, DDMC_DEFAULT_MAX_PACKET);
  memset(buf, CANARY, sizeof(buf));
  ddmc_options_init_((ddmc_options *)(void *)buf, 8); /* smaller than any released layout */
  assert_true(all_canary(buf, sizeof(buf)));
}

static void test_options_parse_respects_size(void **state) {
  (void)state;
  char err[128];
  unsigned char buf[sizeof(ddmc_options) + 16];
  memset(buf, CANARY, sizeof(buf));
  ddmc_options_init_((ddmc_options *)(void *)buf, sizeof(ddmc_options));
  assert_int_equal(ddmc_options_parse_((ddmc_options *)(void *)buf, sizeof(ddmc_options),
                                       "transport=dt_socket,address=8000,server=y", err, sizeof(err)),
                   0);
  assert_int_equal(((ddmc_options *)(void *)buf)->port, 8000);
  assert_true(all_canary(buf + sizeof(ddmc_options), 16));
  assert_int_equal(ddmc_options_parse_((ddmc_options *)(void *)buf, 8, "transport=dt_socket", err, sizeof(err)),
                   DDMC_EVERSION);
  assert_non_null(strstr(err, "incompatible"));
}

static void test_vm_new_refuses_other_layouts(void **state) {
  (void)state;
  ddmc_options o;
  ddmc_options_init(&o);
  o.transport = DDMC_TRANSPORT_SOCKET;
  ddmc_vm *vm = (ddmc_vm *)&o;
  assert_int_equal(ddmc_vm_new_(&vm, &o, sizeof(o), NULL, sizeof(ddmc_vm_ops), NULL, NULL, DDMC_VERSION_HEX,
                                sizeof(ddmc_thread_info) + 8, sizeof(ddmc_frame)),
                   DDMC_EVERSION);
  assert_null(vm);
  assert_int_equal(ddmc_vm_new_(&vm, &o, sizeof(o), NULL, sizeof(ddmc_vm_ops), NULL, NULL, DDMC_VERSION_HEX,
                                sizeof(ddmc_thread_info), sizeof(ddmc_frame) - 4),
                   DDMC_EVERSION);
  assert_int_equal(ddmc_vm_new_(&vm, &o, sizeof(o), NULL, sizeof(ddmc_vm_ops) + 8, NULL, NULL, DDMC_VERSION_HEX,
                                sizeof(ddmc_thread_info), sizeof(ddmc_frame)),
                   DDMC_EVERSION);
  /* An older, shorter ops table is fine: the hooks it lacks are NULL. */
  ddmc_vm_ops ops;
  memset(&ops, 0xff, sizeof(ops)); /* garbage past the size given must never be read */
  ops.jdwp_thread_start = NULL;
  ops.jdwp_thread_end = NULL;
  assert_int_equal(ddmc_vm_new_(&vm, &o, sizeof(o), &ops, offsetof(ddmc_vm_ops, debugger_attached), NULL, NULL,
                                DDMC_VERSION_HEX, sizeof(ddmc_thread_info), sizeof(ddmc_frame)),
                   0);
  ddmc_vm_free(vm); /* would call the garbage log hook if it had been copied */
}

static int handle_nothing(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rt, ddmc_buf *b) {
  (void)ud, (void)vm, (void)req, (void)rt, (void)b;
  return 0;
}

static void test_handler_size(void **state) {
  (void)state;
  ddmc_options o;
  ddmc_options_init(&o);
  o.transport = DDMC_TRANSPORT_SOCKET;
  ddmc_vm *vm;
  assert_int_equal(ddmc_vm_new(&vm, &o, NULL, NULL, NULL), 0);
  ddmc_chunk_handler h;
  memset(&h, 0xff, sizeof(h)); /* garbage hooks past the caller's size */
  h.handle = handle_nothing;
  assert_int_equal(ddmc_register_handler_(vm, DDMC_FOURCC('X', 'X', 'X', 'X'), &h, 2, NULL), DDMC_EINVAL);
  assert_int_equal(ddmc_register_handler_(vm, DDMC_FOURCC('X', 'X', 'X', 'X'), &h, sizeof(h.handle), NULL), 0);
  ddmc_vm_free(vm); /* calls destroy only if it was copied: it must not have been */
}

/* Released values never move. */
static void test_error_codes_fixed(void **state) {
  (void)state;
  assert_int_equal(DDMC_EINVAL, -999);
  assert_int_equal(DDMC_ENOMEM, -998);
  assert_int_equal(DDMC_EIO, -997);
  assert_int_equal(DDMC_ENOTCONN, -996);
  assert_int_equal(DDMC_EPROTO, -995);
  assert_int_equal(DDMC_ETOOBIG, -994);
  assert_int_equal(DDMC_EQFULL, -993);
  assert_int_equal(DDMC_EEXIST, -992);
  assert_int_equal(DDMC_ENOENT, -991);
  assert_int_equal(DDMC_ESTATE, -990);
  assert_int_equal(DDMC_ETIMEDOUT, -989);
  assert_int_equal(DDMC_EADDR, -988);
  assert_int_equal(DDMC_EVERSION, -987);
  assert_int_equal(DDMC_ENOTSUP, -986);
  assert_int_equal(DDMC_ECONNREFUSED, -985);
  assert_int_equal(DDMC_ECLOSED, -984);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stats_smaller_struct),       cmocka_unit_test(test_options_init_respects_size),
      cmocka_unit_test(test_options_parse_respects_size), cmocka_unit_test(test_vm_new_refuses_other_layouts),
      cmocka_unit_test(test_handler_size),               cmocka_unit_test(test_error_codes_fixed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
