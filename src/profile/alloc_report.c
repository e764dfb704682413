/* SPDX-License-Identifier: Apache-2.0 */
/* The REAL payload: the allocation ring as ddmlib's AllocationsParser reads it
 * (docs/protocol/profiling.md §2.3; big-endian):
 *
 *   [u1 15 header length][u1 9 entry header length][u1 8 frame length]
 *   [u2 entries N][u4 offset of the string tables from the payload's start]
 *   [u2 class names C][u2 method names M][u2 file names F]
 *   N entries, newest first:
 *     [u4 size][u2 thread id][u2 class index][u1 depth D]
 *     D frames, innermost first: [u2 class index][u2 method index][u2 file index][u2 line]
 *   C class strings, M method strings, F file strings: [u4 UTF-16 units][UTF-16BE]
 *
 * Classes are VM descriptors ("Ljava/lang/String;", "[I"), methods bare names, files "" when
 * unknown; lines are -1 without line information and -2 for native frames, clipped to 32767
 * as Dalvik did. Every count and index is a u2: the report stops before the entry that would
 * need a 65536th string in any table (older records are then left out), never wraps.
 *
 * Load: up to 65535 records of up to 16 frames on the JDWP thread, per REAL; each frame costs
 * two hash lookups (names.c), each distinct class or method one bridge call. */
#include <string.h>

#include "profile/alloc_ring.h"
#include "profile/names.h"
#include "profile/strtab.h"

#define HDR_LEN 15
#define ENTRY_LEN 9
#define FRAME_LEN 8

typedef struct tables {
  ddmc__prof_strtab cls, meth, file;
} tables;

/* The class-table index of c (REAL's class names are descriptors). */
static int32_t class_index(tables *t, ddmc__prof_nclass *c) {
  if (c->idx[0] < 0) {
    int32_t i = ddmc__prof_strtab_add(&t->cls, c->sig);
    if (i < 0) return i;
    c->idx[0] = i;
  }
  return c->idx[0];
}

static int32_t file_index(tables *t, ddmc__prof_nclass *c) {
  if (c->idx[1] < 0) {
    int32_t i = ddmc__prof_strtab_add(&t->file, c->file);
    if (i < 0) return i;
    c->idx[1] = i;
  }
  return c->idx[1];
}

static int32_t method_index(tables *t, ddmc__prof_nmethod *m) {
  if (m->idx < 0) {
    int32_t i = ddmc__prof_strtab_add(&t->meth, m->name);
    if (i < 0) return i;
    m->idx = i;
  }
  return m->idx;
}

static uint16_t line16(int32_t line) { return (uint16_t)(int16_t)(line > 32767 ? 32767 : line); }

/* Appends one entry, or nothing: returns 0, DDMC_ETOOBIG (a table is full: stop), or ENOMEM. */
static int put_entry(ddmc_buf *out, tables *t, ddmc__prof_names *names, const ddmc__prof_alloc_rec *rec) {
  uint8_t e[ENTRY_LEN + 64 * FRAME_LEN], *p = e;
  ddmc__prof_nclass *c = ddmc__prof_names_class(names, rec->cls);
  if (c == NULL) return DDMC_ENOMEM;
  int32_t ci = class_index(t, c);
  if (ci < 0) return ci;
  ddmc__put_u32(p, rec->bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)rec->bytes);
  ddmc__put_u16(p + 4, (uint16_t)rec->thread);
  ddmc__put_u16(p + 6, (uint16_t)ci);
  p[8] = (uint8_t)rec->nframes;
  p += ENTRY_LEN;
  for (uint32_t i = 0; i < rec->nframes; i++, p += FRAME_LEN) {
    const ddmc_location *f = &rec->frames[i];
    ddmc__prof_nmethod *m = ddmc__prof_names_method(names, f->cls, f->method);
    if (m == NULL) return DDMC_ENOMEM;
    int32_t fc = class_index(t, (ddmc__prof_nclass *)m->cls), fm = method_index(t, m),
            ff = file_index(t, (ddmc__prof_nclass *)m->cls);
    if (fc < 0) return fc;
    if (fm < 0) return fm;
    if (ff < 0) return ff;
    ddmc__put_u16(p, (uint16_t)fc);
    ddmc__put_u16(p + 2, (uint16_t)fm);
    ddmc__put_u16(p + 4, (uint16_t)ff);
    ddmc__put_u16(p + 6, line16(ddmc__prof_names_line(m, f->index)));
  }
  return ddmc_buf_put_bytes(out, e, (size_t)(p - e));
}

int ddmc__prof_alloc_report(const ddmc__prof_alloc_ring *r, ddmc__prof_names *names, const ddmc__mem *mem,
                            uint32_t max_entries, ddmc_buf *out) {
  size_t start = ddmc_buf_len(out);
  uint8_t *h = ddmc__buf_append(out, HDR_LEN);
  if (h == NULL) return ddmc_buf_error(out);
  tables t;
  ddmc__prof_strtab_init(&t.cls, mem, DDMC__STRTAB_MAX);
  ddmc__prof_strtab_init(&t.meth, mem, DDMC__STRTAB_MAX);
  ddmc__prof_strtab_init(&t.file, mem, DDMC__STRTAB_MAX);
  uint32_t n = 0;
  int rc = 0;
  if (max_entries > 65535) max_entries = 65535;
  if (r != NULL) {
    uint64_t head = atomic_load(&((ddmc__prof_alloc_ring *)r)->head);
    uint64_t avail = head < r->cap ? head : r->cap;
    ddmc__prof_alloc_rec rec;
    for (uint64_t k = 0; k < avail && n < max_entries && rc == 0; k++) {
      if (!ddmc__prof_alloc_ring_get(r, head - 1 - k, &rec)) continue; /* being rewritten: skip */
      rc = put_entry(out, &t, names, &rec);
      if (rc == 0) n++;
    }
    if (rc == DDMC_ETOOBIG && ddmc_buf_error(out) == 0) rc = 0; /* a full string table: a shorter report */
  }
  size_t tables_at = ddmc_buf_len(out) - start;
  if (rc == 0) {
    ddmc__prof_strtab_write(&t.cls, out);
    ddmc__prof_strtab_write(&t.meth, out);
    rc = ddmc__prof_strtab_write(&t.file, out);
  }
  if (rc == 0 && tables_at > UINT32_MAX) rc = DDMC_ETOOBIG;
  if (rc == 0) {
    h = out->p + start; /* the buffer may have moved */
    h[0] = HDR_LEN;
    h[1] = ENTRY_LEN;
    h[2] = FRAME_LEN;
    ddmc__put_u16(h + 3, (uint16_t)n);
    ddmc__put_u32(h + 5, (uint32_t)tables_at);
    ddmc__put_u16(h + 9, (uint16_t)t.cls.n);
    ddmc__put_u16(h + 11, (uint16_t)t.meth.n);
    ddmc__put_u16(h + 13, (uint16_t)t.file.n);
  }
  ddmc__prof_strtab_free(&t.cls);
  ddmc__prof_strtab_free(&t.meth);
  ddmc__prof_strtab_free(&t.file);
  return rc;
}
