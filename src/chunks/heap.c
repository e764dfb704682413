/* SPDX-License-Identifier: Apache-2.0 */
/* Heap monitoring: HPIF, HPGC, HPSG/HPSO and NHSG requests, and the dumps at GC time
 * (docs/protocol/ddm-wire.md §2.8 and §3).
 *   HPIF  H->V [u1 when]: 0 never, 1 now, 2 at the next GC, 3 at every GC; empty reply
 *         V->H [u4 numHeaps = 1] + [u4 heapId][u8 timestamp ms since epoch][u1 reason = when]
 *              [u4 max bytes][u4 footprint][u4 bytes allocated][u4 objects allocated]  (33 bytes)
 *   HPGC  H->V (empty): the VM collects on a thread of its own; empty reply
 *   HPSG  H->V [u1 when: 0 never, 1 every GC][u1 what: 0 merged (HPSG), 1 per object (HPSO)]
 *   NHSG  H->V [u1 when][u1 what]: the same for the native heap
 *   dumps V->H HPST [u4 heap], HPSG|HPSO..., HPEN [u4 heap]; NHST, NHSG..., NHEN
 * A dump goes into the send queue as one unit, so the host sees a whole dump or none of it. The
 * u4 fields of HPIF saturate at 0x7fffffff, not at the 0xffffffff a u4 could hold (see hpif32). */
#include <string.h>

#include "heap/rle.h"
#include "chunks/families.h"
#include "send/send.h"

#define CHUNK_HPIF DDMC_FOURCC('H', 'P', 'I', 'F')
#define CHUNK_HPGC DDMC_FOURCC('H', 'P', 'G', 'C')
#define CHUNK_HPSG DDMC_FOURCC('H', 'P', 'S', 'G')
#define CHUNK_HPSO DDMC_FOURCC('H', 'P', 'S', 'O')
#define CHUNK_HPST DDMC_FOURCC('H', 'P', 'S', 'T')
#define CHUNK_HPEN DDMC_FOURCC('H', 'P', 'E', 'N')
#define CHUNK_NHSG DDMC_FOURCC('N', 'H', 'S', 'G')
#define CHUNK_NHST DDMC_FOURCC('N', 'H', 'S', 'T')
#define CHUNK_NHEN DDMC_FOURCC('N', 'H', 'E', 'N')

#define HPIF_LEN 33

/* The draft calls HPIF's size fields u4, but ddmlib (the client everyone uses) reads each with
 * getInt() and masks it with the int literal 0x00000000ffffffff, which is -1: the mask is a no-op
 * and 2 GiB or more shows as a negative size (a default HotSpot heap limit read as -1). Wire
 * compatibility with the real client wins over the draft: clamp to what a Java int can carry. */
#define HPIF_FIELD_MAX 0x7fffffffu

static uint32_t hpif32(uint64_t v) { return v > HPIF_FIELD_MAX ? HPIF_FIELD_MAX : (uint32_t)v; }

static int send_hpif(ddmc_vm *vm, uint8_t reason) {
  if (vm->ops.heap_info == NULL) return DDMC_ENOTSUP;
  ddmc_heap_info hi;
  memset(&hi, 0, sizeof(hi));
  int rc = vm->ops.heap_info(vm->vm_data, DDMC_HEAP_MANAGED, &hi);
  if (rc != 0) return rc;
  uint8_t p[HPIF_LEN];
  uint64_t ts = (uint64_t)ddmc__wall_ms();
  ddmc__put_u32(p, 1);
  ddmc__put_u32(p + 4, DDMC_HEAP_MANAGED);
  ddmc__put_u32(p + 8, (uint32_t)(ts >> 32));
  ddmc__put_u32(p + 12, (uint32_t)ts);
  p[16] = reason;
  ddmc__put_u32(p + 17, hpif32(hi.max_bytes));
  ddmc__put_u32(p + 21, hpif32(hi.footprint));
  ddmc__put_u32(p + 25, hpif32(hi.allocated_bytes));
  ddmc__put_u32(p + 29, hpif32(hi.allocated_objects));
  return ddmc_send_chunk(vm, CHUNK_HPIF, p, sizeof(p));
}

static int handle_hpif(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  uint8_t when = ddmc_read_u8(&r);
  if (r.err || when > 3) return ddmc_reply_fail(b, rtype, DDMC_EINVAL, "Unsupported HPIF what");
  if (when == 1) {
    int rc = send_hpif(vm, 1);
    if (rc != 0) return ddmc_reply_fail(b, rtype, rc, ddmc_strerror(rc));
  } else {
    atomic_store(&vm->heap.hpif_when, when);
  }
  return 0;
}

static int handle_hpgc(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  if (vm->ops.request_gc == NULL) return ddmc_reply_fail(b, rtype, DDMC_ENOTSUP, "this VM cannot collect on request");
  int rc = vm->ops.request_gc(vm->vm_data);
  return rc == 0 ? 0 : ddmc_reply_fail(b, rtype, rc, "GC request refused");
}

static int handle_segments(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  int native = ud != NULL;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  uint8_t when = ddmc_read_u8(&r);
  uint8_t what = ddmc_read_u8(&r);
  if (r.err || when > 1 || what > 1)
    return ddmc_reply_fail(b, rtype, DDMC_EINVAL, native ? "Unsupported NHSG what/when" : "Unsupported HPSG what/when");
  if (vm->ops.walk_heap == NULL) return ddmc_reply_fail(b, rtype, DDMC_ENOTSUP, "this VM cannot walk its heap");
  if (native) {
    atomic_store(&vm->heap.nhsg_what, what);
    atomic_store(&vm->heap.nhsg_when, when);
  } else {
    atomic_store(&vm->heap.hpsg_what, what);
    atomic_store(&vm->heap.hpsg_when, when);
  }
  return 0;
}

static void heap_disconnected(void *ud, ddmc_vm *vm) {
  (void)ud;
  atomic_store(&vm->heap.hpif_when, 0);
  atomic_store(&vm->heap.hpsg_when, 0);
  atomic_store(&vm->heap.nhsg_when, 0);
}

static int heap_gc_done(ddmc_vm *vm, void *ud);

int ddmc__chunk_heap_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler hpif = {.handle = handle_hpif, .disconnected = heap_disconnected};
  static const ddmc_chunk_handler hpgc = {.handle = handle_hpgc};
  static const ddmc_chunk_handler seg = {.handle = handle_segments};
  static int native_tag;
  int rc = ddmc_register_handler(vm, CHUNK_HPIF, &hpif, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_HPGC, &hpgc, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_HPSG, &seg, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_NHSG, &seg, &native_tag);
  static const ddmc__hub_client client = {.name = "DDM heap", .rank = DDMC__HUB_RANK_HEAP, .gc_done = heap_gc_done};
  if (rc == 0) rc = ddmc__hub_subscribe(vm, &client, NULL, NULL, NULL);
  return rc;
}

/* ---- dumps at GC time */

typedef struct dump_ctx {
  ddmc__heap_rle *rle;
  ddmc__send_batch *batch;
  uint32_t seg_type;
} dump_ctx;

static int emit_segment(void *arg, const uint8_t *payload, size_t len) {
  dump_ctx *c = arg;
  return ddmc__send_batch_add(c->batch, c->seg_type, payload, len);
}

static int visit_region(void *arg, uintptr_t addr, size_t bytes, ddmc_heap_kind kind, ddmc_heap_solidity solidity) {
  dump_ctx *c = arg;
  /* Free space has no kind: one state for all of it lets adjacent free regions merge. */
  uint8_t state = solidity == DDMC_SOLID_FREE ? 0 : DDMC__HPSG_STATE(solidity, kind);
  return ddmc__heap_rle_add(c->rle, addr, bytes, state);
}

static int dump_heap(ddmc_vm *vm, ddmc__heap_rle *rle, int heap, int merge, uint32_t start, uint32_t seg,
                     uint32_t end) {
  ddmc_heap_info hi;
  memset(&hi, 0, sizeof(hi));
  if (vm->ops.heap_info != NULL) vm->ops.heap_info(vm->vm_data, heap, &hi);
  ddmc__send_batch batch;
  ddmc__send_batch_init(&batch, vm);
  dump_ctx c = {rle, &batch, seg};
  uint8_t id[4];
  ddmc__put_u32(id, (uint32_t)heap);
  ddmc__send_batch_add(&batch, start, id, 4);
  ddmc__heap_rle_init(rle, (uint32_t)heap, hi.base, merge, emit_segment, &c);
  int rc = vm->ops.walk_heap(vm->vm_data, heap, visit_region, &c);
  if (rc == 0) rc = ddmc__heap_rle_finish(rle);
  if (rc == 0) rc = ddmc__send_batch_add(&batch, end, id, 4);
  if (rc != 0 && batch.data.err == 0) {
    ddmc__send_batch_discard(&batch);
    ddmc__log(vm, DDMC_LOG_WARN, "heap dump abandoned: %s", ddmc_strerror(rc));
    return rc;
  }
  rc = ddmc__send_batch_commit(&batch);
  if (rc != 0) ddmc__log(vm, DDMC_LOG_WARN, "heap dump dropped: %s", ddmc_strerror(rc));
  return rc;
}

int ddmc_gc_walk_wanted(const ddmc_vm *cvm) {
  ddmc_vm *vm = (ddmc_vm *)cvm;
  return vm != NULL && atomic_load_explicit(&vm->ddm_active, memory_order_acquire) &&
         (atomic_load(&vm->heap.hpsg_when) || atomic_load(&vm->heap.nhsg_when));
}

int ddmc_gc_walk(ddmc_vm *vm) {
  if (vm == NULL) return DDMC_EINVAL;
  if (!ddmc_gc_walk_wanted(vm)) return DDMC_ENOTCONN;
  if (vm->ops.walk_heap == NULL) return DDMC_ENOTSUP;
  /* 16 KiB of encoder state: from the library's allocator, never the VM heap being walked. */
  ddmc__heap_rle *rle = ddmc__malloc(&vm->mem, sizeof(*rle));
  if (rle == NULL) return DDMC_ENOMEM;
  int rc = 0;
  if (atomic_load(&vm->heap.hpsg_when)) {
    int merge = atomic_load(&vm->heap.hpsg_what) == 0;
    rc = dump_heap(vm, rle, DDMC_HEAP_MANAGED, merge, CHUNK_HPST, merge ? CHUNK_HPSG : CHUNK_HPSO, CHUNK_HPEN);
  }
  if (atomic_load(&vm->heap.nhsg_when)) {
    int rc2 = dump_heap(vm, rle, DDMC_HEAP_NATIVE, 0, CHUNK_NHST, CHUNK_NHSG, CHUNK_NHEN);
    if (rc == 0) rc = rc2;
  }
  ddmc__free(&vm->mem, rle);
  return rc;
}

/* After a collection (the hub's gc_done): HPIF if the peer asked for it at the next or every GC. */
static int heap_gc_done(ddmc_vm *vm, void *ud) {
  (void)ud;
  if (!atomic_load_explicit(&vm->ddm_active, memory_order_acquire)) return DDMC_ENOTCONN;
  int when = atomic_load(&vm->heap.hpif_when);
  if (when == 2) {
    int expected = 2;
    if (!atomic_compare_exchange_strong(&vm->heap.hpif_when, &expected, 0)) return 0;
    return send_hpif(vm, 2);
  }
  if (when == 3) return send_hpif(vm, 3);
  return 0;
}
