/* SPDX-License-Identifier: Apache-2.0 */
/* The state of one heap dump while it is built (hprof_meta.c: strings and classes; hprof_dump.c:
 * the heap records and the driver). Private to those two files. */
#ifndef DDMC_PROFILE_HPROF_BUILD_H
#define DDMC_PROFILE_HPROF_BUILD_H

#include "profile/hprof.h"

/* hprof's basic types */
enum {
  HT_OBJECT = 2,
  HT_BOOLEAN = 4,
  HT_CHAR = 5,
  HT_FLOAT = 6,
  HT_DOUBLE = 7,
  HT_BYTE = 8,
  HT_SHORT = 9,
  HT_INT = 10,
  HT_LONG = 11
};

#define DDMC__HP_SYNTHETIC 0xF0000000u /* ids of classes without a class object start here */
#define DDMC__HP_MAX_CLASSES (1u << 22)
/* A CLASS DUMP counts its instance fields in a u2. */
#define DDMC__HPROF_MAX_FIELDS 65535u

typedef struct hp_field {
  uint32_t index; /* in its class, for get_field */
  uint32_t name;  /* string id */
  uint8_t type;   /* HT_* */
} hp_field;

typedef struct hp_class {
  ddmc_class cls;
  uint32_t id;
  uint32_t name; /* string id of the dotted name */
  int32_t super; /* index in the class table, -1 for none */
  ddmc_ref loader;
  uint8_t elem; /* arrays: HT_* of the elements; 0 for other classes */
  uint32_t ninst, nstat;
  hp_field *fields;    /* ninst instance fields then nstat statics, each in declaration order */
  uint32_t inst_bytes; /* an instance's values: own fields and every superclass's */
} hp_class;

typedef struct hp_strings {
  ddmc_buf chars; /* every string, NUL-terminated, at off[id - 1] */
  uint32_t *off;
  uint32_t n, cap;
  uint32_t *hash; /* id, 0 = empty; open addressing */
  uint32_t hcap;
} hp_strings;

/* Where a dump's finished blocks go while it is built (hprof_file.c's writer): chains in file
 * order, each block's len settled; take owns them from then on. failed: the sink gave up (a
 * write failed), so the build stops. spare: a block the sink is done with, for the build's next. A build without a sink
 * keeps the whole dump in memory. */
typedef struct hp_sink {
  void (*take)(void *arg, ddmc__prof_hpblk *chain);
  int (*failed)(void *arg);
  ddmc__prof_hpblk *(*spare)(void *arg); /* a block taken and done with, or NULL */
  void *arg;
} hp_sink;

typedef struct hp_build {
  ddmc_vm *vm;
  const ddmc__mem *mem;
  const ddmc_vm_bridge *bridge;
  void *data;
  ddmc__prof_hpout strs, head, body;
  hp_strings s;
  hp_class *cls;
  uint32_t ncls, capcls;
  uint32_t *by_class; /* index + 1 by ddmc_class; open addressing over hcap */
  uint32_t *by_obj;   /* index + 1 by class object ref */
  uint32_t hcap;
  int32_t class_class; /* java.lang.Class, or -1 */
  /* the segment being written */
  uint8_t *seg_len;
  uint64_t seg_start;
  uint32_t heap;
  uint64_t objects, roots;
  hp_sink *sink;         /* NULL: keep the dump */
  uint64_t handed;       /* bytes the sink took */
  uint32_t heap_name[4]; /* string ids of "default", "app", "zygote", "image" */
  ddmc_value vals[256];  /* array_get batches */
  int rc;
  char *msg;
  size_t msglen;
} hp_build;

/* Builds a dump (hprof_dump.c): what ddmc__prof_hprof_build does, with every finished block given to
 * sink (if not NULL) as soon as nothing will change in it; *out then holds no bytes, only the
 * length and counts. JDWP thread. */
int ddmc__prof_hp_build(ddmc_vm *vm, hp_sink *sink, ddmc__prof_hprof **out, char *msg, size_t msglen);

/* Records the first error (later ones are dropped): rc and a message. Returns rc. */
int ddmc__prof_hp_fail(hp_build *b, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* String id of s (1..), writing its STRING record on first use; 0 after an error. */
uint32_t ddmc__prof_hp_string(hp_build *b, const char *s);
/* Reads every class through the bridge, numbers them and writes their LOAD CLASS records.
 * Inside with_world_stopped. Returns b->rc. */
int ddmc__prof_hp_classes(hp_build *b);
/* The class table entry of c, or NULL. */
hp_class *ddmc__prof_hp_class_of(hp_build *b, ddmc_class c);
/* The class whose class object is ref, or NULL. */
hp_class *ddmc__prof_hp_class_by_object(hp_build *b, ddmc_ref ref);
void ddmc__prof_hp_meta_free(hp_build *b);

static inline unsigned ddmc__prof_hp_type_size(uint8_t t) {
  switch (t) {
    case HT_BOOLEAN:
    case HT_BYTE: return 1;
    case HT_CHAR:
    case HT_SHORT: return 2;
    case HT_DOUBLE:
    case HT_LONG: return 8;
    default: return 4;
  }
}

static inline void ddmc__prof_hp_record(ddmc__prof_hpout *o, uint8_t tag, uint32_t len) {
  uint8_t *d = ddmc__prof_hpout_room(o, 9);
  if (d == NULL) return;
  d[0] = tag;
  ddmc__put_u32(d + 1, 0);
  ddmc__put_u32(d + 5, len);
}

#endif
