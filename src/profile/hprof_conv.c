/* SPDX-License-Identifier: Apache-2.0 */
/* A VM's own hprof into Android's (hprof_conv.h has what changes and why). Both passes run the
 * same code: the first counts what it would write (emit == 0) and skips object contents, the
 * second writes; so the lengths the first pass promised are the bytes the second gives. The one
 * exception, instances and arrays (nearly all of a dump, so each pass has a loop of its own for
 * them: seg_scan, seg_fast), take their lengths in both passes from one function, object_lens;
 * anything those loops do not take whole goes through the general code. */
#include "profile/hprof_conv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define IN_BYTES ((size_t)1 << 20)       /* the input buffer; also the largest non-array unit */
/* What one read asks for, unless a unit needs more: the buffer's pages beyond it are then never
 * touched. A first touch costs 18 us a page on the bench machine (bench/RESULTS.md), 4.6 ms for
 * the whole buffer, a tenth of a small dump's conversion; more reads cost nothing measurable. */
#define READ_STEP ((size_t)256 << 10)
/* The string table grows eightfold up to STR_BIG, then twofold: HotSpot writes every symbol of
 * the VM, 30,000-41,000 in any dump, and doubling up to that touched twice the final table's
 * pages (1,024 to 65,536 entries, 1.5 MiB); eightfold touches an eighth more. A small file still
 * gets a small table (a test converts thousands of them). */
#define STR_FIRST ((size_t)1 << 10)
#define STR_BIG ((size_t)1 << 16)
#define ARRAY_STEP ((uint32_t)1 << 16)   /* array elements converted per step */
#define OUT_MAX ((size_t)8 << 20)        /* the output of one step, at most */
#define OUT_FIRST ((size_t)64 << 10)     /* the output buffer at first: most units are small */
#define ID_LIMIT ((uint64_t)0xF0000000u) /* ids stay below, as the library's own dumps */

enum { PH_HEADER, PH_TOP, PH_SEG, PH_ARRAY, PH_DONE };

typedef struct str_ent {
  uint64_t key; /* the input's id; 0: empty slot */
  uint32_t id;
  int32_t delta; /* output length - input length when it is a class name */
  uint32_t in_len;
  uint8_t seen, is_class, used;
} str_ent;

typedef struct cls_ent {
  uint64_t key, super;
  uint32_t types; /* offset in the types array */
  uint32_t nf;
  int32_t sup;       /* index of the superclass; -1 none, -2 not resolved yet */
  int32_t chain_obj; /* object fields of the class and its superclasses; -1 not known yet */
  uint64_t chain_in; /* their bytes in the input */
} cls_ent;

struct ddmc__prof_hpconv {
  const ddmc__mem *mem;
  ddmc__prof_hpconv_input src;
  uint8_t *in; /* the input buffer (IN_BYTES) */
  size_t in_len, in_pos;
  int eof;
  unsigned isz; /* the input's id size: 4 or 8 */
  int emit;
  uint8_t *out;
  size_t out_len, out_pos, out_cap;
  uint64_t total; /* bytes "written" so far in this pass */
  uint64_t promised, given; /* the output's length by the first pass; bytes the second gave */
  int phase, seen_end;
  uint64_t lim; /* bytes left in the current record (or segment) */
  uint32_t arr_left;
  uint8_t arr_type;
  uint32_t *seglen;
  size_t nseg, segcap, segi;
  uint64_t seg_start;
  uint8_t header[31];
  str_ent *strs;
  size_t str_cap, nstr;
  uint32_t *cls_slots; /* index + 1; 0: empty */
  size_t cls_slot_cap;
  cls_ent *cls;
  size_t ncls, cls_cap;
  uint8_t *types;
  size_t ntypes, types_cap;
  uint64_t *lc_keys; /* LOAD CLASS: the class ids met, and the ordinal of each one's first */
  uint32_t *lc_first;
  size_t lc_cap, nlc;
  uint32_t lc_seq;
  uint64_t omin, omax, oor, nobj;
  /* The objects the dump defines: a bit per 8 bytes of address, in 2 MiB pieces of the address
   * space made as the first pass meets them (so 1/64 of the heap in use). */
  uint64_t *chunk_keys; /* piece number + 1; 0: empty */
  uint8_t **chunk_bits;
  size_t chunk_cap, nchunk;
  uint64_t last_key, mark_key;
  uint8_t *last_bits, *mark_bits;
  uint8_t **dir; /* second pass: the pieces' bits by piece number - dir0 (make_dir), or NULL */
  uint64_t dir0, ospan;
  uint64_t cls_key; /* the class found last, and its index */
  size_t cls_index;
  unsigned shift;
  uint64_t objects, roots, dangling;
  int err;
  char why[200];
};

static int fail(ddmc__prof_hpconv *c, int err, const char *fmt, ...) {
  if (c->err != 0) return c->err;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
  c->err = err;
  return err;
}

/* ---- input */

/* n contiguous bytes of the input (n <= IN_BYTES), or NULL with err set: the buffer refilled. */
static __attribute__((noinline)) const uint8_t *need_slow(ddmc__prof_hpconv *c, size_t n) {
  if (c->err != 0) return NULL;
  if (n > IN_BYTES) {
    fail(c, DDMC_ENOTSUP, "heap dump: a record of the VM's file holds a unit of %zu bytes (1 MiB at most)", n);
    return NULL;
  }
  memmove(c->in, c->in + c->in_pos, c->in_len - c->in_pos);
  c->in_len -= c->in_pos;
  c->in_pos = 0;
  while (c->in_len < n && !c->eof) {
    size_t got = 0;
    size_t ask = DDMC__MIN(IN_BYTES - c->in_len, DDMC__MAX(n - c->in_len, READ_STEP));
    int e = c->src.fill(c->src.arg, c->in + c->in_len, ask, &got);
    if (e != 0) {
      fail(c, DDMC_EIO, "heap dump: the VM's file could not be read (errno %d)", e);
      return NULL;
    }
    if (got == 0) c->eof = 1;
    c->in_len += got;
  }
  if (c->in_len < n) {
    fail(c, DDMC_ENOTSUP, "heap dump: the VM's file ends inside a record");
    return NULL;
  }
  return c->in;
}

static inline const uint8_t *need(ddmc__prof_hpconv *c, size_t n) {
  if (c->in_len - c->in_pos >= n) return c->in + c->in_pos;
  return need_slow(c, n);
}

/* n bytes of the current record, consumed. */
static inline const uint8_t *take(ddmc__prof_hpconv *c, size_t n) {
  if (n > c->lim) {
    fail(c, DDMC_ENOTSUP, "heap dump: a sub-record runs past its record in the VM's file");
    return NULL;
  }
  const uint8_t *p = need(c, n);
  if (p == NULL) return NULL;
  c->in_pos += n;
  c->lim -= n;
  return p;
}

static void skip(ddmc__prof_hpconv *c, uint64_t n) {
  if (n > c->lim) {
    fail(c, DDMC_ENOTSUP, "heap dump: a sub-record runs past its record in the VM's file");
    return;
  }
  c->lim -= n;
  uint64_t have = c->in_len - c->in_pos;
  if (n <= have) {
    c->in_pos += (size_t)n;
    return;
  }
  c->in_pos = c->in_len = 0;
  int e = c->src.skip(c->src.arg, n - have);
  if (e != 0) fail(c, DDMC_EIO, "heap dump: the VM's file could not be read (errno %d)", e);
}

static inline uint64_t be(const uint8_t *p, unsigned n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n == 8) { /* ids and longs: one load, not eight */
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
  }
  if (n == 4) {
    uint32_t v;
    memcpy(&v, p, 4);
    return __builtin_bswap32(v);
  }
#endif
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}

static uint32_t r_u1(ddmc__prof_hpconv *c) {
  const uint8_t *p = take(c, 1);
  return p ? p[0] : 0;
}
static uint32_t r_u2(ddmc__prof_hpconv *c) {
  const uint8_t *p = take(c, 2);
  return p ? (uint32_t)be(p, 2) : 0;
}
static uint32_t r_u4(ddmc__prof_hpconv *c) {
  const uint8_t *p = take(c, 4);
  return p ? (uint32_t)be(p, 4) : 0;
}
static uint64_t r_id(ddmc__prof_hpconv *c) {
  const uint8_t *p = take(c, c->isz);
  return p ? be(p, c->isz) : 0;
}

/* ---- output */

static uint8_t *room(ddmc__prof_hpconv *c, size_t n) {
  c->total += n;
  if (!c->emit) return NULL;
  if (c->out_cap - c->out_len < n) {
    size_t want = c->out_len + n;
    size_t cap = c->out_cap ? c->out_cap : OUT_FIRST;
    while (cap < want) cap *= 2;
    uint8_t *o = cap <= OUT_MAX + IN_BYTES ? ddmc__realloc(c->mem, c->out, cap) : NULL;
    if (o == NULL) {
      fail(c, DDMC_ENOMEM, "heap dump: out of memory converting the VM's file");
      c->emit = 0; /* count on, write nothing */
      return NULL;
    }
    c->out = o;
    c->out_cap = cap;
  }
  uint8_t *p = c->out + c->out_len;
  c->out_len += n;
  return p;
}

static void o_u1(ddmc__prof_hpconv *c, uint32_t v) {
  uint8_t *p = room(c, 1);
  if (p) p[0] = (uint8_t)v;
}
static void o_u2(ddmc__prof_hpconv *c, uint32_t v) {
  uint8_t *p = room(c, 2);
  if (p) ddmc__put_u16(p, (uint16_t)v);
}
static void o_u4(ddmc__prof_hpconv *c, uint32_t v) {
  uint8_t *p = room(c, 4);
  if (p) ddmc__put_u32(p, v);
}
static void o_bytes(ddmc__prof_hpconv *c, const uint8_t *s, size_t n) {
  uint8_t *p = room(c, n);
  if (p && s) memcpy(p, s, n);
}

/* ---- ids */

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  return k ^ (k >> 33);
}

/* The string of input id key; made when the first pass meets it first. NULL: none (0, or the
 * second pass met an id the first did not). */
static str_ent *str_get(ddmc__prof_hpconv *c, uint64_t key) {
  if (key == 0) return NULL;
  if (c->nstr * 4 >= c->str_cap * 3 && !c->emit) { /* 3/4 full at most: a big table costs its page faults */
    size_t cap = c->str_cap == 0 ? STR_FIRST : c->str_cap * (c->str_cap < STR_BIG ? 8 : 2);
    str_ent *t = ddmc__calloc(c->mem, cap, sizeof(*t));
    if (t == NULL) {
      fail(c, DDMC_ENOMEM, "heap dump: out of memory converting the VM's file");
      return NULL;
    }
    for (size_t i = 0; i < c->str_cap; i++) {
      if (c->strs[i].key == 0) continue;
      size_t j = mix(c->strs[i].key) & (cap - 1);
      while (t[j].key != 0) j = (j + 1) & (cap - 1);
      t[j] = c->strs[i];
    }
    ddmc__free(c->mem, c->strs);
    c->strs = t;
    c->str_cap = cap;
  }
  if (c->str_cap == 0) return NULL;
  size_t j = mix(key) & (c->str_cap - 1);
  while (c->strs[j].key != 0 && c->strs[j].key != key) j = (j + 1) & (c->str_cap - 1);
  if (c->strs[j].key == 0) {
    if (c->emit) return NULL;
    c->strs[j].key = key;
    c->strs[j].id = (uint32_t)++c->nstr;
  }
  return &c->strs[j];
}

static void o_str(ddmc__prof_hpconv *c, uint64_t key) {
  str_ent *e = str_get(c, key);
  if (e != NULL) e->used = 1;
  o_u4(c, e ? e->id : 0);
}

#define CHUNK_SHIFT 21
#define CHUNK_BITS_BYTES (((size_t)1 << CHUNK_SHIFT) / 8 / 8)

static uint8_t **chunk_slot(ddmc__prof_hpconv *c, uint64_t key) {
  if (c->chunk_cap == 0) return NULL;
  size_t j = mix(key) & (c->chunk_cap - 1);
  while (c->chunk_keys[j] != 0 && c->chunk_keys[j] != key) j = (j + 1) & (c->chunk_cap - 1);
  return c->chunk_keys[j] == key ? &c->chunk_bits[j] : NULL;
}

static int chunk_grow(ddmc__prof_hpconv *c) {
  size_t cap = c->chunk_cap ? c->chunk_cap * 2 : 256;
  uint64_t *k = ddmc__calloc(c->mem, cap, sizeof(*k));
  uint8_t **v = ddmc__calloc(c->mem, cap, sizeof(*v));
  if (k == NULL || v == NULL) {
    ddmc__free(c->mem, k);
    ddmc__free(c->mem, v);
    return fail(c, DDMC_ENOMEM, "heap dump: out of memory converting the VM's file");
  }
  for (size_t i = 0; i < c->chunk_cap; i++) {
    if (c->chunk_keys[i] == 0) continue;
    size_t j = mix(c->chunk_keys[i]) & (cap - 1);
    while (k[j] != 0) j = (j + 1) & (cap - 1);
    k[j] = c->chunk_keys[i];
    v[j] = c->chunk_bits[i];
  }
  ddmc__free(c->mem, c->chunk_keys);
  ddmc__free(c->mem, c->chunk_bits);
  c->chunk_keys = k;
  c->chunk_bits = v;
  c->chunk_cap = cap;
  return 0;
}

/* First pass: a defines an object. */
static void mark(ddmc__prof_hpconv *c, uint64_t a) {
  if (a & 7) {
    fail(c, DDMC_ENOTSUP, "heap dump: object id 0x%llx in the VM's file is not 8-byte aligned", (unsigned long long)a);
    return;
  }
  uint64_t key = (a >> CHUNK_SHIFT) + 1;
  size_t bit = (size_t)((a >> 3) & ((CHUNK_BITS_BYTES * 8) - 1));
  if (key == c->mark_key) {
    c->mark_bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    return;
  }
  uint8_t **slot = chunk_slot(c, key);
  if (slot == NULL) {
    if ((c->nchunk + 1) * 2 > c->chunk_cap && chunk_grow(c) != 0) return;
    size_t j = mix(key) & (c->chunk_cap - 1);
    while (c->chunk_keys[j] != 0) j = (j + 1) & (c->chunk_cap - 1);
    c->chunk_bits[j] = ddmc__calloc(c->mem, 1, CHUNK_BITS_BYTES);
    if (c->chunk_bits[j] == NULL) {
      fail(c, DDMC_ENOMEM, "heap dump: out of memory converting the VM's file");
      return;
    }
    c->chunk_keys[j] = key;
    c->nchunk++;
    slot = &c->chunk_bits[j];
  }
  c->mark_key = key;
  c->mark_bits = *slot; /* the bits stay where they are when the table grows */
  c->mark_bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
}

/* Second pass: the bits of the 2 MiB piece holding a, or NULL (no object there). */
static const uint8_t *bits_of(ddmc__prof_hpconv *c, uint64_t a) {
  uint64_t n = a >> CHUNK_SHIFT;
  if (c->dir != NULL) return c->dir[n - c->dir0]; /* the caller checked a is in the objects' range */
  if (n + 1 != c->last_key) {
    uint8_t **slot = chunk_slot(c, n + 1);
    c->last_key = n + 1;
    c->last_bits = slot ? *slot : NULL;
  }
  return c->last_bits;
}

/* First pass: a defines an object (the range of the ids, their common alignment, its bit). */
static void note_def(ddmc__prof_hpconv *c, uint64_t a) {
  if (a == 0) return;
  if (c->nobj++ == 0) c->omin = c->omax = a;
  c->omin = a < c->omin ? a : c->omin;
  c->omax = a > c->omax ? a : c->omax;
  c->oor |= a;
  mark(c, a);
}

static inline uint32_t def_id(const ddmc__prof_hpconv *c, uint64_t a) {
  return a == 0 ? 0 : (uint32_t)(c->nstr + 1 + ((a - c->omin) >> c->shift));
}

/* An object's id, defined here (the first pass learns the range from these). */
static void o_def(ddmc__prof_hpconv *c, uint64_t a) {
  if (!c->emit) note_def(c, a);
  o_u4(c, def_id(c, a));
}

/* A reference to an object: its id, or 0 when the dump defines nothing there. */
static inline uint32_t ref_of(ddmc__prof_hpconv *c, uint64_t a) {
  if (a == 0 || !c->emit) return 0;
  uint64_t d = a - c->omin; /* below omin: wraps past ospan */
  if (d <= c->ospan && (a & 7) == 0) {
    const uint8_t *b = bits_of(c, a);
    size_t bit = (size_t)((a >> 3) & ((CHUNK_BITS_BYTES * 8) - 1));
    if (b != NULL && (b[bit >> 3] >> (bit & 7) & 1)) return (uint32_t)(c->nstr + 1 + (d >> c->shift));
  }
  c->dangling++; /* HotSpot 17 leaves out some objects of the CDS archive that others name */
  return 0;
}

static void o_ref(ddmc__prof_hpconv *c, uint64_t a) { o_u4(c, ref_of(c, a)); }

/* The pieces' bits by piece number from the lowest object's on, when that table is small
 * (DIR_MAX pointers: objects over 256 GiB of addresses); the hash table otherwise. */
#define DIR_MAX ((uint64_t)1 << 17)
static void make_dir(ddmc__prof_hpconv *c) {
  uint64_t n = (c->omax >> CHUNK_SHIFT) - (c->omin >> CHUNK_SHIFT) + 1;
  if (n > DIR_MAX || (c->dir = ddmc__calloc(c->mem, (size_t)n, sizeof(*c->dir))) == NULL) return;
  c->dir0 = c->omin >> CHUNK_SHIFT;
  for (size_t i = 0; i < c->chunk_cap; i++)
    if (c->chunk_keys[i] != 0) c->dir[c->chunk_keys[i] - 1 - c->dir0] = c->chunk_bits[i];
}

/* After the first pass: the shift and the check that every object id fits. */
static int settle_ids(ddmc__prof_hpconv *c) {
  if (c->nobj == 0) return 0;
  unsigned k = 0;
  uint64_t g = c->oor | ((uint64_t)1 << 12);
  while (k < 12 && !(g >> k & 1)) k++;
  c->shift = k;
  c->ospan = c->omax - c->omin;
  uint64_t top = c->nstr + 1 + (c->ospan >> k);
  if (top >= ID_LIMIT)
    return fail(c, DDMC_ENOTSUP, "heap dump: the VM's object ids span too much to fit 4 bytes (%llu ids)",
                (unsigned long long)top);
  make_dir(c); /* without it (no memory), the hash table answers */
  return 0;
}

/* ---- classes */

static cls_ent *cls_find(ddmc__prof_hpconv *c, uint64_t key) {
  if (c->cls_slot_cap == 0 || key == 0) return NULL;
  if (key == c->cls_key) return &c->cls[c->cls_index]; /* objects of a class often come together */
  size_t j = mix(key) & (c->cls_slot_cap - 1);
  for (; c->cls_slots[j] != 0; j = (j + 1) & (c->cls_slot_cap - 1))
    if (c->cls[c->cls_slots[j] - 1].key == key) {
      c->cls_key = key;
      c->cls_index = c->cls_slots[j] - 1;
      return &c->cls[c->cls_index];
    }
  return NULL;
}

static int cls_slots_grow(ddmc__prof_hpconv *c) {
  size_t cap = c->cls_slot_cap ? c->cls_slot_cap * 2 : 1 << 12;
  uint32_t *t = ddmc__calloc(c->mem, cap, sizeof(*t));
  if (t == NULL) return fail(c, DDMC_ENOMEM, "heap dump: out of memory converting the VM's file");
  for (size_t i = 0; i < c->ncls; i++) {
    size_t j = mix(c->cls[i].key) & (cap - 1);
    while (t[j] != 0) j = (j + 1) & (cap - 1);
    t[j] = (uint32_t)i + 1;
  }
  ddmc__free(c->mem, c->cls_slots);
  c->cls_slots = t;
  c->cls_slot_cap = cap;
  return 0;
}

static int grow(ddmc__prof_hpconv *c, void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap * 2 : 256;
  while (n < need) n *= 2;
  void *q = n < ((size_t)1 << 31) ? ddmc__realloc(c->mem, *p, n * size) : NULL;
  if (q == NULL) return fail(c, DDMC_ENOMEM, "heap dump: out of memory converting the VM's file");
  *p = q;
  *cap = n;
  return 0;
}

static cls_ent *cls_add(ddmc__prof_hpconv *c, uint64_t key, uint64_t super) {
  if (cls_find(c, key) != NULL) {
    fail(c, DDMC_ENOTSUP, "heap dump: class 0x%llx dumped twice in the VM's file", (unsigned long long)key);
    return NULL;
  }
  if ((c->ncls + 1) * 2 > c->cls_slot_cap && cls_slots_grow(c) != 0) return NULL;
  if (grow(c, (void **)&c->cls, &c->cls_cap, c->ncls + 1, sizeof(cls_ent)) != 0) return NULL;
  cls_ent *e = &c->cls[c->ncls];
  *e = (cls_ent){key, super, (uint32_t)c->ntypes, 0, -2, -1, 0};
  size_t j = mix(key) & (c->cls_slot_cap - 1);
  while (c->cls_slots[j] != 0) j = (j + 1) & (c->cls_slot_cap - 1);
  c->cls_slots[j] = (uint32_t)++c->ncls;
  return e;
}

static unsigned type_size(ddmc__prof_hpconv *c, uint32_t t) {
  static const uint8_t sizes[12] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};
  if (t == 2) return c->isz;
  return t < 12 ? sizes[t] : 0;
}

/* The class's and its superclasses' object fields and input bytes; 0, or an error when a
 * superclass is not (yet) in the file or the chain loops. */
static int chain(ddmc__prof_hpconv *c, cls_ent *e) {
  if (e->chain_obj >= 0) return 0;
  int32_t obj = 0;
  uint64_t in = 0;
  size_t depth = 0;
  for (cls_ent *k = e; k != NULL; depth++) {
    if (depth > c->ncls) return fail(c, DDMC_ENOTSUP, "heap dump: superclasses form a cycle in the VM's file");
    for (uint32_t i = 0; i < k->nf; i++) {
      obj += c->types[k->types + i] == 2;
      in += type_size(c, c->types[k->types + i]);
    }
    if (k->sup == -2) {
      cls_ent *s = cls_find(c, k->super);
      if (k->super != 0 && s == NULL)
        return fail(c, DDMC_ENOTSUP, "heap dump: an object's superclass comes after it in the VM's file");
      k->sup = s ? (int32_t)(s - c->cls) : -1;
    }
    k = k->sup >= 0 ? &c->cls[k->sup] : NULL;
  }
  e->chain_obj = obj;
  e->chain_in = in;
  return 0;
}

/* ---- values */

static void value(ddmc__prof_hpconv *c, uint32_t t) {
  unsigned n = type_size(c, t);
  if (n == 0) {
    fail(c, DDMC_ENOTSUP, "heap dump: a value of unknown type %u in the VM's file", t);
    return;
  }
  if (t == 2) {
    o_ref(c, r_id(c));
    return;
  }
  const uint8_t *p = take(c, n);
  o_bytes(c, p, n);
}

/* ---- class names: HotSpot's "java/lang/String", "[I", "[[Ljava/lang/Object;" as Android's
 * "java.lang.String", "int[]", "java.lang.Object[][]" (what the library's own dumps hold). */

static size_t android_name(const uint8_t *s, size_t n, uint8_t *dst) {
  static const char *const prims[] = {"boolean", "byte", "char", "short", "int", "long", "float", "double"};
  static const char codes[] = "ZBCSIJFD";
  size_t dims = 0, o = 0;
  while (dims < n && s[dims] == '[') dims++;
  const uint8_t *e = s + dims;
  size_t en = n - dims;
  const char *prim = NULL;
  if (dims > 0 && en == 1 && memchr(codes, e[0], 8) != NULL && e[0] != 0) {
    prim = prims[(const char *)memchr(codes, e[0], 8) - codes];
  } else if (dims > 0 && en >= 2 && e[0] == 'L' && e[en - 1] == ';') {
    e++;
    en -= 2;
  } else if (dims > 0) {
    dims = 0; /* not a descriptor: left as it is */
    e = s;
    en = n;
  }
  if (prim != NULL) {
    size_t pn = strlen(prim);
    if (dst) memcpy(dst, prim, pn);
    o = pn;
  } else {
    for (size_t i = 0; i < en; i++)
      if (dst) dst[i] = e[i] == '/' ? '.' : e[i];
    o = en;
  }
  for (size_t i = 0; i < dims; i++, o += 2)
    if (dst) memcpy(dst + o, "[]", 2);
  return o;
}

/* ---- top-level records */

static void rec_head(ddmc__prof_hpconv *c, uint32_t tag, uint64_t len) {
  o_u1(c, tag);
  o_u4(c, 0);
  o_u4(c, (uint32_t)len);
}

static void rec_string(ddmc__prof_hpconv *c) {
  uint64_t key = r_id(c);
  size_t n = (size_t)c->lim;
  const uint8_t *s = take(c, n);
  if (s == NULL) return;
  str_ent *e = str_get(c, key);
  if (e == NULL) {
    fail(c, DDMC_ENOTSUP, "heap dump: a string without an id in the VM's file");
    return;
  }
  if (!c->emit) { /* counted once every use is known (strings_total) */
    if (e->seen) {
      fail(c, DDMC_ENOTSUP, "heap dump: string 0x%llx defined twice in the VM's file", (unsigned long long)key);
      return;
    }
    e->seen = 1;
    e->in_len = (uint32_t)n;
    e->delta = (int32_t)android_name(s, n, NULL) - (int32_t)n;
    return;
  }
  if (!e->used) return; /* HotSpot writes every symbol of the VM; only names the dump uses go */
  size_t on = e->is_class ? (size_t)((int64_t)n + e->delta) : n;
  rec_head(c, 0x01, 4 + (uint64_t)on);
  o_u4(c, e->id);
  uint8_t *d = room(c, on);
  if (d == NULL) return;
  if (e->is_class)
    android_name(s, n, d);
  else
    memcpy(d, s, n);
}

static int lc_grow(ddmc__prof_hpconv *c) {
  size_t cap = c->lc_cap ? c->lc_cap * 2 : 1 << 12;
  uint64_t *k = ddmc__calloc(c->mem, cap, sizeof(*k));
  uint32_t *v = ddmc__calloc(c->mem, cap, sizeof(*v));
  if (k == NULL || v == NULL) {
    ddmc__free(c->mem, k);
    ddmc__free(c->mem, v);
    return fail(c, DDMC_ENOMEM, "heap dump: out of memory converting the VM's file");
  }
  for (size_t i = 0; i < c->lc_cap; i++) {
    if (c->lc_keys[i] == 0) continue;
    size_t j = mix(c->lc_keys[i]) & (cap - 1);
    while (k[j] != 0) j = (j + 1) & (cap - 1);
    k[j] = c->lc_keys[i];
    v[j] = c->lc_first[i];
  }
  ddmc__free(c->mem, c->lc_keys);
  ddmc__free(c->mem, c->lc_first);
  c->lc_keys = k;
  c->lc_first = v;
  c->lc_cap = cap;
  return 0;
}

/* Non-zero for the first LOAD CLASS of cls: HotSpot names some array classes twice (two serials,
 * one class), which Android's readers take for two classes. */
static int lc_first(ddmc__prof_hpconv *c, uint64_t cls) {
  uint32_t seq = ++c->lc_seq;
  if (!c->emit && (c->nlc + 1) * 2 > c->lc_cap && lc_grow(c) != 0) return 0;
  if (c->lc_cap == 0) return 0;
  size_t j = mix(cls) & (c->lc_cap - 1);
  while (c->lc_keys[j] != 0 && c->lc_keys[j] != cls) j = (j + 1) & (c->lc_cap - 1);
  if (c->lc_keys[j] == 0 && !c->emit) {
    c->lc_keys[j] = cls;
    c->lc_first[j] = seq;
    c->nlc++;
  }
  return c->lc_keys[j] == cls && c->lc_first[j] == seq;
}

static void rec_load_class(ddmc__prof_hpconv *c) {
  uint32_t serial = r_u4(c);
  uint64_t cls = r_id(c);
  uint32_t stack = r_u4(c);
  uint64_t name = r_id(c);
  if (!lc_first(c, cls)) return;
  str_ent *e = str_get(c, name);
  if (e != NULL) e->is_class = e->used = 1;
  rec_head(c, 0x02, 16);
  o_u4(c, serial);
  o_ref(c, cls);
  o_u4(c, stack);
  o_u4(c, e ? e->id : 0);
}

static void o_frame(ddmc__prof_hpconv *c, uint64_t f) {
  if (f > UINT32_MAX) fail(c, DDMC_ENOTSUP, "heap dump: a stack frame id does not fit 4 bytes");
  o_u4(c, (uint32_t)f);
}

static void rec_frame(ddmc__prof_hpconv *c) {
  uint64_t f = r_id(c), name = r_id(c), sig = r_id(c), file = r_id(c);
  uint32_t cls = r_u4(c), line = r_u4(c);
  rec_head(c, 0x04, 24);
  o_frame(c, f);
  o_str(c, name);
  o_str(c, sig);
  o_str(c, file);
  o_u4(c, cls);
  o_u4(c, line);
}

static void rec_trace(ddmc__prof_hpconv *c) {
  uint32_t serial = r_u4(c), thread = r_u4(c), n = r_u4(c);
  if ((uint64_t)n * c->isz != c->lim) {
    fail(c, DDMC_ENOTSUP, "heap dump: a stack trace's frame count does not match its length");
    return;
  }
  rec_head(c, 0x05, 12 + (uint64_t)n * 4);
  o_u4(c, serial);
  o_u4(c, thread);
  o_u4(c, n);
  for (uint32_t i = 0; i < n && c->err == 0; i++) o_frame(c, r_id(c));
}

static void seg_begin(ddmc__prof_hpconv *c, uint64_t len) {
  if (!c->emit) {
    if (grow(c, (void **)&c->seglen, &c->segcap, c->nseg + 1, sizeof(uint32_t)) != 0) return;
    c->nseg++;
    rec_head(c, 0x1C, 0);
    c->seg_start = c->total;
  } else {
    rec_head(c, 0x1C, c->segi < c->nseg ? c->seglen[c->segi] : 0);
  }
  c->segi++;
  c->phase = PH_SEG;
  c->lim = len;
}

static void seg_end(ddmc__prof_hpconv *c) {
  if (!c->emit) {
    uint64_t n = c->total - c->seg_start;
    if (n > UINT32_MAX) fail(c, DDMC_ENOTSUP, "heap dump: a segment of the VM's file is too long");
    c->seglen[c->nseg - 1] = (uint32_t)n;
  }
  c->phase = PH_TOP;
}

/* One top-level record whose body is lim bytes; the heap dump's segment only starts here. */
static void top_record(ddmc__prof_hpconv *c) {
  const uint8_t *p = need(c, 9);
  if (p == NULL) {
    if (c->err == DDMC_ENOTSUP && c->in_len == 0 && c->eof) { /* the file's end, between records */
      c->err = 0;
      c->phase = PH_DONE;
      if (!c->seen_end) fail(c, DDMC_ENOTSUP, "heap dump: the VM's file has no HEAP DUMP END");
    }
    return;
  }
  uint32_t tag = p[0];
  uint64_t len = be(p + 5, 4);
  c->in_pos += 9;
  if (c->seen_end) {
    fail(c, DDMC_ENOTSUP, "heap dump: a record after HEAP DUMP END in the VM's file");
    return;
  }
  if (tag == 0x0C || tag == 0x1C) {
    if (len == 0 && c->src.growing != NULL && c->src.growing(c->src.arg)) {
      fail(c, DDMC_ESTATE, "heap dump: the VM's file holds a heap dump whose length is not written yet");
      return;
    }
    seg_begin(c, len);
    return;
  }
  if (len > IN_BYTES) {
    fail(c, DDMC_ENOTSUP, "heap dump: record 0x%02x of %llu bytes in the VM's file", tag, (unsigned long long)len);
    return;
  }
  c->lim = len;
  switch (tag) {
    case 0x01: rec_string(c); break;
    case 0x02: rec_load_class(c); break;
    case 0x04: rec_frame(c); break;
    case 0x05: rec_trace(c); break;
    case 0x2C:
      rec_head(c, 0x2C, 0);
      c->seen_end = 1;
      break;
    default: fail(c, DDMC_ENOTSUP, "heap dump: record 0x%02x in the VM's file is not one Android's hprof has", tag);
  }
  if (c->err == 0 && c->lim != 0) fail(c, DDMC_ENOTSUP, "heap dump: record 0x%02x has bytes left over", tag);
}

/* ---- heap dump sub-records */

static void sub_root(ddmc__prof_hpconv *c, uint32_t tag) {
  o_u1(c, tag);
  o_ref(c, r_id(c));
  c->roots += !c->emit;
  switch (tag) {
    case 0x01: /* JNI global: the global ref's own id is no object of the dump */
      r_id(c);
      o_u4(c, 0);
      break;
    case 0x02:
    case 0x03:
    case 0x08:
      o_u4(c, r_u4(c));
      o_u4(c, r_u4(c));
      break;
    case 0x04:
    case 0x06: o_u4(c, r_u4(c)); break;
    default: break;
  }
}

static void sub_class(ddmc__prof_hpconv *c) {
  uint64_t id = r_id(c);
  uint32_t stack = r_u4(c);
  uint64_t super = r_id(c), loader = r_id(c), signers = r_id(c), pd = r_id(c);
  r_id(c);
  r_id(c);
  uint32_t isize = r_u4(c);
  cls_ent *e = c->emit ? cls_find(c, id) : cls_add(c, id, super);
  if (e == NULL) {
    fail(c, DDMC_ENOTSUP, "heap dump: a class the first pass did not see");
    return;
  }
  o_u1(c, 0x20);
  o_def(c, id);
  o_u4(c, stack);
  o_ref(c, super);
  o_ref(c, loader);
  o_ref(c, signers);
  o_ref(c, pd);
  o_u4(c, 0);
  o_u4(c, 0);
  /* the instance size counts object fields at the input's id size */
  if (c->emit && chain(c, e) == 0 && (uint64_t)e->chain_obj * (c->isz - 4) <= isize)
    isize -= (uint32_t)e->chain_obj * (c->isz - 4);
  o_u4(c, isize);
  uint32_t n = r_u2(c);
  o_u2(c, n);
  for (uint32_t i = 0; i < n && c->err == 0; i++) {
    o_u2(c, r_u2(c));
    uint32_t t = r_u1(c);
    o_u1(c, t);
    value(c, t);
  }
  n = r_u2(c);
  o_u2(c, n);
  for (uint32_t i = 0; i < n && c->err == 0; i++) {
    o_str(c, r_id(c));
    uint32_t t = r_u1(c);
    o_u1(c, t);
    value(c, t);
  }
  n = r_u2(c);
  o_u2(c, n);
  if (!c->emit && grow(c, (void **)&c->types, &c->types_cap, c->ntypes + n, 1) != 0) return;
  for (uint32_t i = 0; i < n && c->err == 0; i++) {
    o_str(c, r_id(c));
    uint32_t t = r_u1(c);
    if (type_size(c, t) == 0) fail(c, DDMC_ENOTSUP, "heap dump: a field of unknown type %u in the VM's file", t);
    o_u1(c, t);
    if (!c->emit) c->types[c->ntypes++] = (uint8_t)t;
  }
  if (!c->emit) e->nf = n;
}

/* An instance's fields (its class's, then each superclass's), the input's at p into d: each run
 * of primitive fields copied as one, each reference rewritten (second pass). */
static void inst_fields(ddmc__prof_hpconv *c, const cls_ent *e, const uint8_t *p, uint8_t *d) {
  static const uint8_t sizes[12] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8}; /* type_size's, but 2 */
  const unsigned z = c->isz;
  size_t run = 0; /* primitive bytes not copied yet: copied as one before the next reference */
  for (const cls_ent *k = e; k != NULL; k = k->sup >= 0 ? &c->cls[k->sup] : NULL) {
    const uint8_t *t = c->types + k->types;
    for (uint32_t i = 0; i < k->nf; i++) {
      if (t[i] != 2) {
        run += sizes[t[i]]; /* types were checked below 12 by sub_class */
        continue;
      }
      if (run != 0) memcpy(d, p, run);
      d += run;
      p += run;
      run = 0;
      ddmc__put_u32(d, ref_of(c, be(p, z)));
      d += 4;
      p += z;
    }
  }
  if (run != 0) memcpy(d, p, run);
}

/* n references of the input's id size at p into 4-byte ids at d (second pass). */
static void refs(ddmc__prof_hpconv *c, const uint8_t *p, uint32_t n, uint8_t *d) {
  const unsigned z = c->isz;
  for (uint32_t i = 0; i < n; i++, p += z, d += 4) ddmc__put_u32(d, ref_of(c, be(p, z)));
}

static void sub_instance(ddmc__prof_hpconv *c) {
  uint64_t id = r_id(c);
  uint32_t stack = r_u4(c);
  uint64_t cls = r_id(c);
  uint32_t n = r_u4(c);
  cls_ent *e = cls_find(c, cls);
  if (e == NULL || chain(c, e) != 0 || e->chain_in != n) {
    fail(c, DDMC_ENOTSUP, "heap dump: instance 0x%llx does not match its class in the VM's file",
         (unsigned long long)id);
    return;
  }
  if (n > IN_BYTES) {
    fail(c, DDMC_ENOTSUP, "heap dump: instance 0x%llx of %u bytes in the VM's file (1 MiB at most)",
         (unsigned long long)id, n);
    return;
  }
  c->objects += !c->emit;
  o_u1(c, 0x21);
  o_def(c, id);
  o_u4(c, stack);
  o_ref(c, cls);
  uint32_t on = n - (uint32_t)e->chain_obj * (c->isz - 4);
  o_u4(c, on);
  if (!c->emit) {
    c->total += on;
    skip(c, n);
    return;
  }
  const uint8_t *p = take(c, n);
  uint8_t *d = room(c, on);
  if (p != NULL && d != NULL) inst_fields(c, e, p, d);
}

static void sub_array(ddmc__prof_hpconv *c, uint32_t tag) {
  uint64_t id = r_id(c);
  uint32_t stack = r_u4(c);
  uint32_t n = r_u4(c);
  c->objects += !c->emit;
  o_u1(c, tag);
  o_def(c, id);
  o_u4(c, stack);
  o_u4(c, n);
  if (tag == 0x22) {
    o_ref(c, r_id(c));
    c->arr_type = 2;
  } else {
    uint32_t t = r_u1(c);
    if (t == 2 || type_size(c, t) == 0) {
      fail(c, DDMC_ENOTSUP, "heap dump: a primitive array of type %u in the VM's file", t);
      return;
    }
    o_u1(c, t);
    c->arr_type = (uint8_t)t;
  }
  unsigned s = type_size(c, c->arr_type);
  if (!c->emit) {
    c->total += (uint64_t)n * (c->arr_type == 2 ? 4 : s);
    skip(c, (uint64_t)n * s);
    return;
  }
  c->arr_left = n;
  c->phase = PH_ARRAY;
}

/* Up to ARRAY_STEP elements of the array being converted (second pass). */
static void array_step(ddmc__prof_hpconv *c) {
  uint32_t k = c->arr_left < ARRAY_STEP ? c->arr_left : ARRAY_STEP;
  unsigned s = type_size(c, c->arr_type);
  const uint8_t *p = take(c, (size_t)k * s);
  uint8_t *d = room(c, (size_t)k * (c->arr_type == 2 ? 4 : s));
  if (p == NULL || d == NULL) return;
  if (c->arr_type == 2)
    refs(c, p, k, d);
  else
    memcpy(d, p, (size_t)k * s);
  c->arr_left -= k;
  if (c->arr_left == 0) c->phase = PH_SEG;
}

/* The head of an instance (0x21) or array (0x22, 0x23) sub-record at the input's id size z; 0
 * for any other tag. Their fields: id at 1, stack serial at 1 + z, then 0x21: class at 5 + z,
 * byte count at 5 + 2z; 0x22 and 0x23: element count at 5 + z, then the class (0x22) or the
 * element type (0x23) at 9 + z. */
static inline size_t head_len(unsigned z, uint32_t tag) {
  return tag == 0x21 || tag == 0x22 ? 9 + 2 * (size_t)z : tag == 0x23 ? 10 + (size_t)z : 0;
}

/* The instance or array whose head is at p: its bytes after the head in the input (*body) and
 * its whole length in the output (*out), or 0 when it is something the general path must take
 * (which refuses it with its reason when it is wrong). *e: an instance's class. */
static int object_lens(ddmc__prof_hpconv *c, const uint8_t *p, cls_ent **e, uint64_t *body, uint64_t *out) {
  const unsigned z = c->isz;
  if (p[0] == 0x21) {
    uint32_t n = (uint32_t)be(p + 5 + 2 * z, 4);
    *e = cls_find(c, be(p + 5 + z, z));
    if (*e == NULL || (c->emit ? (*e)->chain_obj < 0 : chain(c, *e) != 0) || (*e)->chain_in != n || n > IN_BYTES)
      return 0;
    *body = n;
    *out = 17 + (uint64_t)n - (uint64_t)(*e)->chain_obj * (z - 4);
    return 1;
  }
  uint64_t n = be(p + 5 + z, 4);
  unsigned s = p[0] == 0x22 ? z : p[9 + z] == 2 ? 0 : type_size(c, p[9 + z]);
  *body = n * s;
  *out = p[0] == 0x22 ? 17 + 4 * n : 14 + n * s;
  return s != 0;
}

/* First pass, inside a segment: the instances and arrays, the bulk of a dump, read in place:
 * their ids noted, their output counted, their contents skipped. Stops at anything else. */
static void seg_scan(ddmc__prof_hpconv *c) {
  while (c->err == 0 && c->lim > 0) {
    const uint8_t *p = need(c, 1);
    size_t hl = p != NULL ? head_len(c->isz, p[0]) : 0;
    cls_ent *e;
    uint64_t body, out;
    if (hl == 0 || hl > c->lim || (p = need(c, hl)) == NULL || !object_lens(c, p, &e, &body, &out) ||
        body > c->lim - hl)
      return;
    c->objects++;
    note_def(c, be(p + 1, c->isz));
    c->total += out;
    c->in_pos += hl;
    c->lim -= hl;
    skip(c, body);
  }
}

/* Second pass, inside a segment: whole instances and arrays converted from the input straight
 * into dst while they fit in cap. Returns the bytes written; stops at anything else. */
static size_t seg_fast(ddmc__prof_hpconv *c, uint8_t *dst, size_t cap) {
  const unsigned z = c->isz;
  size_t done = 0;
  while (c->err == 0 && c->lim > 0) {
    const uint8_t *p = need(c, 1);
    size_t hl = p != NULL ? head_len(z, p[0]) : 0;
    cls_ent *e = NULL;
    uint64_t body, out;
    if (hl == 0 || hl > c->lim || (p = need(c, hl)) == NULL || !object_lens(c, p, &e, &body, &out) ||
        out > cap - done || body > IN_BYTES - hl || body > c->lim - hl || (p = need(c, hl + (size_t)body)) == NULL)
      break;
    uint8_t *d = dst + done;
    d[0] = p[0];
    ddmc__put_u32(d + 1, def_id(c, be(p + 1, z)));
    ddmc__put_u32(d + 5, (uint32_t)be(p + 1 + z, 4));
    if (p[0] == 0x21) {
      ddmc__put_u32(d + 9, ref_of(c, be(p + 5 + z, z)));
      ddmc__put_u32(d + 13, (uint32_t)(out - 17));
      inst_fields(c, e, p + hl, d + 17);
    } else {
      memcpy(d + 9, p + 5 + z, 4); /* the element count */
      if (p[0] == 0x22) {
        ddmc__put_u32(d + 13, ref_of(c, be(p + 9 + z, z)));
        refs(c, p + hl, (uint32_t)be(p + 5 + z, 4), d + 17);
      } else {
        d[13] = p[9 + z];
        memcpy(d + 14, p + hl, (size_t)body);
      }
    }
    c->in_pos += hl + (size_t)body;
    c->lim -= hl + body;
    c->total += out;
    done += (size_t)out;
  }
  return done;
}

static void sub_record(ddmc__prof_hpconv *c) {
  if (c->lim == 0) {
    seg_end(c);
    return;
  }
  uint32_t tag = r_u1(c);
  switch (tag) {
    case 0xFF:
    case 0x01:
    case 0x02:
    case 0x03:
    case 0x04:
    case 0x05:
    case 0x06:
    case 0x07:
    case 0x08: sub_root(c, tag); break;
    case 0x20: sub_class(c); break;
    case 0x21: sub_instance(c); break;
    case 0x22:
    case 0x23: sub_array(c, tag); break;
    default: fail(c, DDMC_ENOTSUP, "heap dump: sub-record 0x%02x in the VM's file is not one Android's hprof has", tag);
  }
}

/* ---- the passes */

static void header(ddmc__prof_hpconv *c) {
  static const char magic[] = "JAVA PROFILE 1.0.3";
  const uint8_t *p = need(c, 19);
  if (p == NULL) return;
  if (memcmp(p, "JAVA PROFILE 1.0.", 17) != 0 || (p[17] != '1' && p[17] != '2') || p[18] != 0) {
    fail(c, DDMC_ENOTSUP, "heap dump: the VM's file is not a JAVA PROFILE 1.0.1 / 1.0.2 hprof");
    return;
  }
  p = need(c, 31);
  if (p == NULL) return;
  c->isz = (unsigned)be(p + 19, 4);
  if (c->isz != 4 && c->isz != 8) {
    fail(c, DDMC_ENOTSUP, "heap dump: the VM's file has ids of %u bytes", c->isz);
    return;
  }
  o_bytes(c, (const uint8_t *)magic, sizeof magic);
  o_u4(c, 4);
  o_bytes(c, p + 23, 8); /* the VM's timestamp */
  c->in_pos += 31;
  c->phase = PH_TOP;
}

static void step(ddmc__prof_hpconv *c) {
  switch (c->phase) {
    case PH_HEADER: header(c); break;
    case PH_TOP: top_record(c); break;
    case PH_SEG: sub_record(c); break;
    case PH_ARRAY: array_step(c); break;
    default: break;
  }
}

static void reset(ddmc__prof_hpconv *c, int emit) {
  c->emit = emit;
  c->in_len = c->in_pos = 0;
  c->eof = 0;
  c->out_len = c->out_pos = 0;
  c->total = 0;
  c->phase = PH_HEADER;
  c->seen_end = 0;
  c->lim = 0;
  c->segi = 0;
  c->lc_seq = 0;
  c->dangling = 0;
}

/* After the first pass: the STRING records the second will write. */
static void strings_total(ddmc__prof_hpconv *c) {
  for (size_t i = 0; i < c->str_cap; i++) {
    const str_ent *e = &c->strs[i];
    if (e->key != 0 && e->used && e->seen)
      c->total += 13 + (uint64_t)((int64_t)e->in_len + (e->is_class ? e->delta : 0));
  }
}

/* After the first pass: every class's chain resolves, so the second pass cannot fail on one. */
static int check_classes(ddmc__prof_hpconv *c) {
  for (size_t i = 0; i < c->ncls && c->err == 0; i++) chain(c, &c->cls[i]);
  return c->err;
}

int ddmc__prof_hpconv_open(const ddmc__mem *mem, const ddmc__prof_hpconv_input *in, ddmc__prof_hpconv **out,
                           uint64_t *len, char *msg, size_t msglen) {
  *out = NULL;
  ddmc__prof_hpconv *c = ddmc__calloc(mem, 1, sizeof(*c));
  uint8_t *buf = ddmc__malloc(mem, IN_BYTES);
  if (c == NULL || buf == NULL) {
    ddmc__free(mem, c);
    ddmc__free(mem, buf);
    snprintf(msg, msglen, "heap dump: out of memory");
    return DDMC_ENOMEM;
  }
  c->mem = mem;
  c->src = *in;
  c->in = buf;
  reset(c, 0);
  while (c->err == 0 && c->phase != PH_DONE) {
    if (c->phase == PH_SEG) seg_scan(c);
    if (c->err == 0) step(c);
  }
  if (c->err == 0) settle_ids(c);
  strings_total(c);
  if (c->err == 0) check_classes(c);
  if (c->err == 0 && c->src.rewind(c->src.arg) != 0)
    fail(c, DDMC_EIO, "heap dump: the VM's file could not be read again");
  int rc = c->err;
  if (rc != 0) {
    snprintf(msg, msglen, "%s", c->why);
    ddmc__prof_hpconv_free(c);
    return rc;
  }
  *len = c->promised = c->total;
  reset(c, 1);
  *out = c;
  return 0;
}

/* The second pass read other bytes than the first: the VM's file changed under the conversion. */
static void changed(ddmc__prof_hpconv *c) {
  if (c->err == 0) fail(c, DDMC_EIO, "heap dump: the VM's file changed between the two passes");
}

ssize_t ddmc__prof_hpconv_read(ddmc__prof_hpconv *c, uint8_t *dst, size_t cap) {
  size_t done = 0;
  while (done < cap && c->err == 0) {
    if (c->out_pos < c->out_len) {
      size_t n = DDMC__MIN(cap - done, c->out_len - c->out_pos);
      memcpy(dst + done, c->out + c->out_pos, n);
      c->out_pos += n;
      done += n;
      continue;
    }
    c->out_len = c->out_pos = 0;
    if (c->phase == PH_DONE) {
      if (c->given + done != c->promised) changed(c);
      break;
    }
    if (c->phase == PH_SEG) {
      size_t k = seg_fast(c, dst + done, cap - done);
      done += k;
      if (k > 0 || c->err != 0) continue;
    }
    step(c);
  }
  if (done > c->promised - c->given) changed(c);
  if (c->err != 0) return c->err;
  c->given += done;
  return (ssize_t)done;
}

const char *ddmc__prof_hpconv_why(const ddmc__prof_hpconv *c) { return c->why; }

void ddmc__prof_hpconv_counts(const ddmc__prof_hpconv *c, uint64_t *objects, uint64_t *classes, uint64_t *roots,
                              uint64_t *dangling) {
  *objects = c->objects;
  *classes = c->ncls;
  *roots = c->roots;
  *dangling = c->dangling;
}

void ddmc__prof_hpconv_free(ddmc__prof_hpconv *c) {
  if (c == NULL) return;
  ddmc__free(c->mem, c->in);
  ddmc__free(c->mem, c->out);
  ddmc__free(c->mem, c->seglen);
  ddmc__free(c->mem, c->strs);
  ddmc__free(c->mem, c->cls_slots);
  ddmc__free(c->mem, c->cls);
  ddmc__free(c->mem, c->types);
  for (size_t i = 0; i < c->chunk_cap; i++) ddmc__free(c->mem, c->chunk_bits[i]);
  ddmc__free(c->mem, c->chunk_keys);
  ddmc__free(c->mem, c->chunk_bits);
  ddmc__free(c->mem, c->dir);
  ddmc__free(c->mem, c->lc_keys);
  ddmc__free(c->mem, c->lc_first);
  ddmc__free(c->mem, c);
}
