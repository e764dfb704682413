/* SPDX-License-Identifier: Apache-2.0 */
/* A heap dump's heap records (roots, CLASS DUMPs, objects) and the driver that builds the whole
 * file inside the bridge's with_world_stopped (hprof.h has the layout). */
#include <stdio.h>

#include "profile/hprof_build.h"

#define SEGMENT_BYTES ((uint64_t)1 << 20) /* any split is legal; Android's was 4 KiB or 128 objects */

int ddmc__prof_hprof_supported(const ddmc_vm *vm) {
  const ddmc_vm_bridge *o = ddmc__bridge(vm);
  return o != NULL && o->with_world_stopped != NULL && o->for_each_object != NULL && o->for_each_root != NULL &&
         o->for_each_class != NULL && o->class_info != NULL && o->field_info != NULL && o->get_field != NULL &&
         o->array_get != NULL;
}

/* An object id: the VM's ref, checked to fit. */
static uint32_t id_of(hp_build *b, ddmc_ref r) {
  if (r < DDMC__HP_SYNTHETIC) return (uint32_t)r;
  ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: object reference 0x%llx does not fit a 4-byte hprof id",
                     (unsigned long long)r);
  return 0;
}

/* ---- segments */

static void segment_open(hp_build *b) {
  ddmc__prof_hp_record(&b->body, DDMC__HPROF_HEAP_DUMP_SEGMENT, 0);
  b->seg_len = b->body.err == 0 ? b->body.p - 4 : NULL;
  b->seg_start = ddmc__prof_hpout_pos(&b->body);
  b->heap = DDMC_HEAP_ID_DEFAULT;
}

static void segment_close(hp_build *b) {
  uint64_t n = ddmc__prof_hpout_pos(&b->body) - b->seg_start;
  if (b->body.err == 0 && b->seg_len != NULL) ddmc__put_u32(b->seg_len, (uint32_t)n);
}

static void segment_maybe_split(hp_build *b) {
  if (ddmc__prof_hpout_pos(&b->body) - b->seg_start < SEGMENT_BYTES) return;
  segment_close(b);
  segment_open(b);
}

/* Heap names are strings like any other, so each is written once, up front: the strings all
 * precede the heap dump, and a sink may have written them before the first object. */
static const char *const heap_names[4] = {"default", "app", "zygote", "image"};

static int heap_index(uint32_t id) {
  switch (id) {
    case DDMC_HEAP_ID_APP: return 1;
    case DDMC_HEAP_ID_ZYGOTE: return 2;
    case DDMC_HEAP_ID_IMAGE: return 3;
    default: return 0;
  }
}

static void heap_switch(hp_build *b, uint32_t heap) {
  if (heap == b->heap) return;
  ddmc__prof_hp_u1(&b->body, DDMC__HPROF_HEAP_DUMP_INFO);
  ddmc__prof_hp_u4(&b->body, heap);
  ddmc__prof_hp_u4(&b->body, b->heap_name[heap_index(heap)]);
  b->heap = heap;
}

/* ---- handing finished blocks to the sink */

/* o's blocks, all of them final, to the sink; o is left empty. */
static void hand_over(hp_build *b, ddmc__prof_hpout *o) {
  if (ddmc__prof_hpout_finish(o) != 0 || o->head == NULL) return;
  b->handed += ddmc__prof_hpout_pos(o);
  b->sink->take(b->sink->arg, o->head);
  const ddmc__mem *mem = o->mem;
  uint64_t max = o->max;
  ddmc__prof_hpout_init(o, mem, max);
}

static int holds(const ddmc__prof_hpblk *k, const uint8_t *p) {
  return p != NULL && p >= k->data && p < k->data + DDMC__HPBLK_BYTES;
}

/* The body's blocks before the one being filled, up to the one whose segment length is still to
 * be written, are final. Counted in: the bytes stay where ddmc__prof_hpout_pos counts them. */
static void spill(hp_build *b) {
  ddmc__prof_hpout *o = &b->body;
  ddmc__prof_hpblk *first = o->head, *last = NULL;
  for (ddmc__prof_hpblk *k = o->head; k != o->tail && !holds(k, b->seg_len); k = k->next) last = k;
  if (last == NULL) return;
  o->head = last->next;
  last->next = NULL;
  b->sink->take(b->sink->arg, first);
  if (b->sink->failed(b->sink->arg)) ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: the file could not be written");
}

/* ---- values */

static void put_value(hp_build *b, uint8_t type, const ddmc_value *v) {
  ddmc__prof_hpout *o = &b->body;
  uint32_t u32;
  uint64_t u64;
  switch (type) {
    case HT_OBJECT: ddmc__prof_hp_u4(o, id_of(b, v->u.l)); break;
    case HT_BOOLEAN:
    case HT_BYTE: ddmc__prof_hp_u1(o, (uint8_t)v->u.i); break;
    case HT_CHAR:
    case HT_SHORT: ddmc__prof_hp_u2(o, (uint16_t)v->u.i); break;
    case HT_FLOAT:
      memcpy(&u32, &v->u.f, 4);
      ddmc__prof_hp_u4(o, u32);
      break;
    case HT_DOUBLE:
      memcpy(&u64, &v->u.d, 8);
      ddmc__prof_hp_u8(o, u64);
      break;
    case HT_LONG: ddmc__prof_hp_u8(o, (uint64_t)v->u.j); break;
    default: ddmc__prof_hp_u4(o, (uint32_t)v->u.i); break;
  }
}

/* ---- roots */

static int visit_root(void *arg, const ddmc_gc_root *r) {
  hp_build *b = arg;
  static const uint8_t tags[] = {
      [DDMC_GC_ROOT_UNKNOWN] = DDMC__HPROF_ROOT_UNKNOWN,
      [DDMC_GC_ROOT_JNI_GLOBAL] = DDMC__HPROF_ROOT_JNI_GLOBAL,
      [DDMC_GC_ROOT_JNI_LOCAL] = DDMC__HPROF_ROOT_JNI_LOCAL,
      [DDMC_GC_ROOT_JAVA_FRAME] = DDMC__HPROF_ROOT_JAVA_FRAME,
      [DDMC_GC_ROOT_NATIVE_STACK] = DDMC__HPROF_ROOT_NATIVE_STACK,
      [DDMC_GC_ROOT_STICKY_CLASS] = DDMC__HPROF_ROOT_STICKY_CLASS,
      [DDMC_GC_ROOT_THREAD_BLOCK] = DDMC__HPROF_ROOT_THREAD_BLOCK,
      [DDMC_GC_ROOT_MONITOR_USED] = DDMC__HPROF_ROOT_MONITOR_USED,
      [DDMC_GC_ROOT_THREAD_OBJECT] = DDMC__HPROF_ROOT_THREAD_OBJECT,
      [DDMC_GC_ROOT_INTERNED_STRING] = DDMC__HPROF_ROOT_INTERNED_STRING,
      [DDMC_GC_ROOT_FINALIZING] = DDMC__HPROF_ROOT_FINALIZING,
      [DDMC_GC_ROOT_DEBUGGER] = DDMC__HPROF_ROOT_DEBUGGER,
      [DDMC_GC_ROOT_VM_INTERNAL] = DDMC__HPROF_ROOT_VM_INTERNAL,
      [DDMC_GC_ROOT_JNI_MONITOR] = DDMC__HPROF_ROOT_JNI_MONITOR};
  if (b->rc != 0) return 1;
  if (r->object == 0 || (unsigned)r->kind >= sizeof(tags)) {
    ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: for_each_root gave a null object or an unknown kind (%d)",
                       (int)r->kind);
    return 1;
  }
  segment_maybe_split(b);
  ddmc__prof_hpout *o = &b->body;
  ddmc__prof_hp_u1(o, tags[r->kind]);
  ddmc__prof_hp_u4(o, id_of(b, r->object));
  switch (r->kind) {
    case DDMC_GC_ROOT_JNI_GLOBAL: ddmc__prof_hp_u4(o, 0); break; /* the global ref itself: none to name */
    case DDMC_GC_ROOT_JNI_LOCAL:
    case DDMC_GC_ROOT_JAVA_FRAME:
    case DDMC_GC_ROOT_JNI_MONITOR:
      ddmc__prof_hp_u4(o, r->thread);
      ddmc__prof_hp_u4(o, UINT32_MAX); /* frame number / depth: -1, as Dalvik and ART write it */
      break;
    case DDMC_GC_ROOT_NATIVE_STACK:
    case DDMC_GC_ROOT_THREAD_BLOCK: ddmc__prof_hp_u4(o, r->thread); break;
    case DDMC_GC_ROOT_THREAD_OBJECT:
      ddmc__prof_hp_u4(o, r->thread);
      ddmc__prof_hp_u4(o, UINT32_MAX); /* stack trace serial: -1, as Dalvik and ART */
      break;
    default: break;
  }
  b->roots++;
  return b->rc != 0 || o->err != 0;
}

/* ---- classes */

static int class_dump(hp_build *b, hp_class *c) {
  ddmc__prof_hpout *o = &b->body;
  segment_maybe_split(b);
  ddmc__prof_hp_u1(o, DDMC__HPROF_CLASS_DUMP);
  ddmc__prof_hp_u4(o, c->id);
  ddmc__prof_hp_u4(o, 0);
  ddmc__prof_hp_u4(o, c->super >= 0 ? b->cls[c->super].id : 0);
  ddmc__prof_hp_u4(o, id_of(b, c->loader));
  for (int i = 0; i < 4; i++) ddmc__prof_hp_u4(o, 0); /* signers, protection domain, two reserved */
  ddmc__prof_hp_u4(o, c->inst_bytes);
  ddmc__prof_hp_u2(o, 0); /* constant pool */
  ddmc__prof_hp_u2(o, (uint16_t)c->nstat);
  for (uint32_t i = 0; i < c->nstat && b->rc == 0; i++) {
    const hp_field *f = &c->fields[c->ninst + i];
    ddmc_value v;
    memset(&v, 0, sizeof(v));
    int rc = b->bridge->get_field(b->data, 0, c->cls, f->index, &v);
    if (rc != 0) return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: get_field failed for a static (JDWP error %d)", rc);
    ddmc__prof_hp_u4(o, f->name);
    ddmc__prof_hp_u1(o, f->type);
    put_value(b, f->type, &v);
  }
  ddmc__prof_hp_u2(o, (uint16_t)c->ninst);
  for (uint32_t i = 0; i < c->ninst; i++) {
    ddmc__prof_hp_u4(o, c->fields[i].name);
    ddmc__prof_hp_u1(o, c->fields[i].type);
  }
  return b->rc;
}

/* ---- objects */

static void instance_dump(hp_build *b, const ddmc_heap_object *obj, const hp_class *c) {
  ddmc__prof_hpout *o = &b->body;
  ddmc__prof_hp_u1(o, DDMC__HPROF_INSTANCE_DUMP);
  ddmc__prof_hp_u4(o, id_of(b, obj->ref));
  ddmc__prof_hp_u4(o, 0);
  ddmc__prof_hp_u4(o, c->id);
  ddmc__prof_hp_u4(o, c->inst_bytes);
  /* this class's fields, then the superclass's, up to Object (the order hprof readers expect) */
  for (const hp_class *k = c; k != NULL && b->rc == 0; k = k->super >= 0 ? &b->cls[k->super] : NULL)
    for (uint32_t i = 0; i < k->ninst; i++) {
      ddmc_value v;
      int rc = b->bridge->get_field(b->data, obj->ref, k->cls, k->fields[i].index, &v);
      if (rc != 0) {
        ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: get_field failed on object 0x%llx (JDWP error %d)",
                           (unsigned long long)obj->ref, rc);
        return;
      }
      put_value(b, k->fields[i].type, &v);
    }
}

static void array_dump(hp_build *b, const ddmc_heap_object *obj, const hp_class *c) {
  ddmc__prof_hpout *o = &b->body;
  if (obj->length < 0) {
    ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: array 0x%llx without a length", (unsigned long long)obj->ref);
    return;
  }
  uint32_t n = (uint32_t)obj->length;
  ddmc__prof_hp_u1(o, c->elem == HT_OBJECT ? DDMC__HPROF_OBJECT_ARRAY_DUMP : DDMC__HPROF_PRIMITIVE_ARRAY_DUMP);
  ddmc__prof_hp_u4(o, id_of(b, obj->ref));
  ddmc__prof_hp_u4(o, 0);
  ddmc__prof_hp_u4(o, n);
  if (c->elem == HT_OBJECT)
    ddmc__prof_hp_u4(o, c->id);
  else
    ddmc__prof_hp_u1(o, c->elem);
  if (c->elem != HT_OBJECT && obj->elements != NULL) {
    ddmc__prof_hp_elements(o, obj->elements, n, ddmc__prof_hp_type_size(c->elem));
    return;
  }
  const uint32_t batch = sizeof(b->vals) / sizeof(b->vals[0]);
  for (uint32_t first = 0; first < n && b->rc == 0 && o->err == 0; first += batch) {
    int32_t k = (int32_t)DDMC__MIN(batch, n - first);
    int rc = b->bridge->array_get(b->data, obj->ref, (int32_t)first, k, b->vals);
    if (rc != 0) {
      ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: array_get failed on array 0x%llx (JDWP error %d)",
                         (unsigned long long)obj->ref, rc);
      return;
    }
    for (int32_t i = 0; i < k; i++) put_value(b, c->elem, &b->vals[i]);
  }
}

static int visit_object(void *arg, const ddmc_heap_object *obj) {
  hp_build *b = arg;
  if (b->rc != 0 || b->body.err != 0) return 1;
  hp_class *c = ddmc__prof_hp_class_of(b, obj->cls);
  if (c == NULL || obj->ref == 0) {
    ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: object 0x%llx is null or of a class for_each_class does not list",
                       (unsigned long long)obj->ref);
    return 1;
  }
  /* A class object: its CLASS DUMP is written already, under the same id. */
  if (b->class_class >= 0 && c == &b->cls[b->class_class] && ddmc__prof_hp_class_by_object(b, obj->ref) != NULL)
    return 0;
  segment_maybe_split(b);
  heap_switch(b, obj->heap_id);
  if (c->elem != 0)
    array_dump(b, obj, c);
  else
    instance_dump(b, obj, c);
  b->objects++;
  if (b->sink != NULL && b->body.head != b->body.tail) spill(b);
  return b->rc != 0 || b->body.err != 0;
}

/* ---- the driver */

static int out_error(hp_build *b, ddmc__prof_hpout *o) {
  if (o->err == DDMC_ETOOBIG)
    return ddmc__prof_hp_fail(b, DDMC_ETOOBIG, "heap dump larger than the %llu MiB allowed (hprof_max_bytes)",
                              (unsigned long long)(b->vm->prof.cfg.hprof_max_bytes >> 20));
  if (o->err != 0) return ddmc__prof_hp_fail(b, o->err, "heap dump: %s", ddmc_strerror(o->err));
  return 0;
}

/* Runs with the world stopped. */
static int build_stopped(void *arg) {
  hp_build *b = arg;
  if (ddmc__prof_hp_classes(b) != 0) return b->rc;
  for (int i = 0; i < 4; i++) b->heap_name[i] = ddmc__prof_hp_string(b, heap_names[i]);
  ddmc__prof_hp_record(&b->head, DDMC__HPROF_STACK_TRACE, 12);
  for (int i = 0; i < 3; i++) ddmc__prof_hp_u4(&b->head, 0);
  if (b->sink != NULL && out_error(b, &b->strs) == 0 && out_error(b, &b->head) == 0) {
    hand_over(b, &b->strs); /* nothing is added to either from here on */
    hand_over(b, &b->head);
  }
  segment_open(b);
  int rc = b->bridge->for_each_root(b->data, visit_root, b);
  if (rc != 0 && b->rc == 0) ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: for_each_root failed (JDWP error %d)", rc);
  for (uint32_t i = 0; i < b->ncls && b->rc == 0 && b->body.err == 0; i++) class_dump(b, &b->cls[i]);
  if (b->rc == 0 && b->body.err == 0) {
    rc = b->bridge->for_each_object(b->data, visit_object, b);
    if (rc != 0 && b->rc == 0) ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: for_each_object failed (JDWP error %d)", rc);
  }
  segment_close(b);
  ddmc__prof_hp_record(&b->body, DDMC__HPROF_HEAP_DUMP_END, 0);
  out_error(b, &b->strs);
  out_error(b, &b->head);
  out_error(b, &b->body);
  return b->rc;
}

static void write_header(ddmc__prof_hpout *o) {
  static const char magic[] = "JAVA PROFILE 1.0.3";
  ddmc__prof_hp_bytes(o, magic, sizeof(magic)); /* with its NUL */
  ddmc__prof_hp_u4(o, 4);
  ddmc__prof_hp_u8(o, (uint64_t)ddmc__wall_ms());
}

static void count(ddmc_vm *vm, int rc, uint64_t bytes) {
  if (rc != 0) {
    atomic_fetch_add(&vm->prof.st_hprof_failed, 1);
    return;
  }
  atomic_fetch_add(&vm->prof.st_hprof_dumps, 1);
  atomic_fetch_add(&vm->prof.st_hprof_bytes, bytes);
}

int ddmc__prof_hprof_build(ddmc_vm *vm, ddmc__prof_hprof **out, char *msg, size_t msglen) {
  return ddmc__prof_hp_build(vm, NULL, out, msg, msglen);
}

int ddmc__prof_hp_build(ddmc_vm *vm, hp_sink *sink, ddmc__prof_hprof **out, char *msg, size_t msglen) {
  *out = NULL;
  if (msglen > 0) msg[0] = 0;
  if (!ddmc__prof_hprof_supported(vm)) {
    snprintf(msg, msglen, "hprof dumps not supported in this VM");
    count(vm, DDMC_ENOTSUP, 0);
    return DDMC_ENOTSUP;
  }
  hp_build *b = ddmc__calloc(&vm->mem, 1, sizeof(*b));
  ddmc__prof_hprof *h = ddmc__calloc(&vm->mem, 1, sizeof(*h));
  if (b == NULL || h == NULL) {
    ddmc__free(&vm->mem, b);
    ddmc__free(&vm->mem, h);
    snprintf(msg, msglen, "heap dump: out of memory");
    count(vm, DDMC_ENOMEM, 0);
    return DDMC_ENOMEM;
  }
  uint64_t max = vm->prof.cfg.hprof_max_bytes;
  b->vm = vm;
  b->mem = &vm->mem;
  b->bridge = ddmc__bridge(vm);
  b->data = vm->bridge_data;
  b->class_class = -1;
  b->sink = sink;
  b->msg = msg;
  b->msglen = msglen;
  /* One cap for the three parts: each may take it all, and the sum is checked once joined. */
  ddmc__prof_hpout_init(&b->strs, &vm->mem, max);
  ddmc__prof_hpout_init(&b->head, &vm->mem, max);
  ddmc__prof_hpout_init(&b->body, &vm->mem, max);
  if (sink != NULL) {
    b->body.spare = sink->spare;
    b->body.spare_arg = sink->arg;
  }
  ddmc__buf_init(&b->s.chars, &vm->mem, UINT32_MAX);
  write_header(&b->strs);
  int rc = b->bridge->with_world_stopped(b->data, build_stopped, b);
  if (b->rc == 0 && rc != 0)
    ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: the VM could not stop its threads (error %d)", rc);
  if (b->rc == 0) {
    ddmc__prof_hpout_finish(&b->strs);
    ddmc__prof_hpout_finish(&b->head);
    ddmc__prof_hpout_finish(&b->body);
    ddmc__prof_hpout_append(&b->strs, &b->head);
    ddmc__prof_hpout_append(&b->strs, &b->body);
    h->len = b->handed + ddmc__prof_hpout_pos(&b->strs);
    if (h->len > max)
      ddmc__prof_hp_fail(b, DDMC_ETOOBIG, "heap dump larger than the %llu MiB allowed (hprof_max_bytes)",
                         (unsigned long long)(max >> 20));
    else if (out_error(b, &b->strs) == 0 && sink != NULL)
      hand_over(b, &b->strs);
  }
  rc = b->rc;
  h->out = b->strs;
  h->objects = b->objects;
  h->classes = b->ncls;
  h->roots = b->roots;
  memset(&b->strs, 0, sizeof(b->strs));
  ddmc__prof_hpout_free(&b->head);
  ddmc__prof_hpout_free(&b->body);
  ddmc__prof_hp_meta_free(b);
  ddmc__free(&vm->mem, b);
  count(vm, rc, h->len);
  if (rc != 0) {
    ddmc__prof_hprof_free(vm, h);
    return rc;
  }
  *out = h;
  return 0;
}

void ddmc__prof_hprof_free(ddmc_vm *vm, ddmc__prof_hprof *h) {
  if (h == NULL) return;
  ddmc__prof_hpout_free(&h->out);
  ddmc__free(&vm->mem, h);
}
