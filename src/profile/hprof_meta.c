/* SPDX-License-Identifier: Apache-2.0 */
/* A heap dump's strings and classes: the STRING and LOAD CLASS records, and the class table the
 * heap records are written from (hprof_build.h). */
#include <stdarg.h>
#include <stdio.h>

#include "profile/hprof_build.h"

int ddmc__prof_hp_fail(hp_build *b, int rc, const char *fmt, ...) {
  if (b->rc != 0) return b->rc;
  b->rc = rc;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->msg, b->msglen, fmt, ap);
  va_end(ap);
  return rc;
}

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static uint32_t hash_u64(uint64_t v) { return (uint32_t)((v * 0x9E3779B97F4A7C15ull) >> 32); }

static int strings_grow(hp_build *b) {
  hp_strings *t = &b->s;
  if (t->n + 1 > t->cap) {
    uint32_t ncap = t->cap ? t->cap * 2 : 256;
    uint32_t *no = ddmc__realloc(b->mem, t->off, (size_t)ncap * sizeof(*no));
    if (no == NULL) return DDMC_ENOMEM;
    t->off = no;
    t->cap = ncap;
  }
  if ((t->n + 1) * 2 <= t->hcap) return 0;
  uint32_t nh = t->hcap ? t->hcap * 2 : 512;
  uint32_t *h = ddmc__calloc(b->mem, nh, sizeof(*h));
  if (h == NULL) return DDMC_ENOMEM;
  for (uint32_t i = 0; i < t->hcap; i++) {
    uint32_t id = t->hash[i];
    if (id == 0) continue;
    uint32_t j = hash_str((const char *)t->chars.p + t->off[id - 1]) & (nh - 1);
    while (h[j] != 0) j = (j + 1) & (nh - 1);
    h[j] = id;
  }
  ddmc__free(b->mem, t->hash);
  t->hash = h;
  t->hcap = nh;
  return 0;
}

uint32_t ddmc__prof_hp_string(hp_build *b, const char *s) {
  hp_strings *t = &b->s;
  if (b->rc != 0) return 0;
  if (s == NULL) s = "";
  if (strings_grow(b) != 0) {
    ddmc__prof_hp_fail(b, DDMC_ENOMEM, "heap dump: out of memory for its strings");
    return 0;
  }
  uint32_t j = hash_str(s) & (t->hcap - 1);
  for (uint32_t id; (id = t->hash[j]) != 0; j = (j + 1) & (t->hcap - 1))
    if (strcmp((const char *)t->chars.p + t->off[id - 1], s) == 0) return id;
  size_t n = strlen(s);
  if (t->chars.len > UINT32_MAX - n - 1 || n > UINT32_MAX - 4) {
    ddmc__prof_hp_fail(b, DDMC_ETOOBIG, "heap dump: too many names");
    return 0;
  }
  uint32_t off = (uint32_t)t->chars.len;
  ddmc_buf_put_bytes(&t->chars, s, n + 1);
  if (t->chars.err != 0) {
    ddmc__prof_hp_fail(b, DDMC_ENOMEM, "heap dump: out of memory for its strings");
    return 0;
  }
  t->off[t->n++] = off;
  t->hash[j] = t->n;
  ddmc__prof_hp_record(&b->strs, DDMC__HPROF_STRING, 4 + (uint32_t)n);
  ddmc__prof_hp_u4(&b->strs, t->n);
  ddmc__prof_hp_bytes(&b->strs, s, n);
  return t->n;
}

/* ---- the class table */

static int index_put(uint32_t *h, uint32_t hcap, uint64_t key, uint32_t idx, const hp_class *cls, int by_obj) {
  uint32_t j = hash_u64(key) & (hcap - 1);
  while (h[j] != 0) {
    const hp_class *c = &cls[h[j] - 1];
    if ((by_obj ? (uint64_t)c->id : c->cls) == key) return -1; /* twice */
    j = (j + 1) & (hcap - 1);
  }
  h[j] = idx + 1;
  return 0;
}

hp_class *ddmc__prof_hp_class_of(hp_build *b, ddmc_class c) {
  uint32_t j = hash_u64(c) & (b->hcap - 1);
  for (uint32_t i; (i = b->by_class[j]) != 0; j = (j + 1) & (b->hcap - 1))
    if (b->cls[i - 1].cls == c) return &b->cls[i - 1];
  return NULL;
}

hp_class *ddmc__prof_hp_class_by_object(hp_build *b, ddmc_ref ref) {
  uint32_t j = hash_u64(ref) & (b->hcap - 1);
  for (uint32_t i; (i = b->by_obj[j]) != 0; j = (j + 1) & (b->hcap - 1))
    if (b->cls[i - 1].id == ref) return &b->cls[i - 1];
  return NULL;
}

static int add_class(void *arg, ddmc_class c) {
  hp_build *b = arg;
  if (b->ncls == DDMC__HP_MAX_CLASSES)
    return ddmc__prof_hp_fail(b, DDMC_ETOOBIG, "heap dump: more than %u classes", DDMC__HP_MAX_CLASSES) != 0;
  if (b->ncls == b->capcls) {
    uint32_t ncap = b->capcls ? b->capcls * 2 : 256;
    hp_class *n = ddmc__realloc(b->mem, b->cls, (size_t)ncap * sizeof(*n));
    if (n == NULL) return ddmc__prof_hp_fail(b, DDMC_ENOMEM, "heap dump: out of memory for the class table") != 0;
    b->cls = n;
    b->capcls = ncap;
  }
  memset(&b->cls[b->ncls], 0, sizeof(hp_class));
  b->cls[b->ncls].cls = c;
  b->cls[b->ncls].super = -1;
  b->ncls++;
  return 0;
}

static uint8_t basic_type(char sig0) {
  switch (sig0) {
    case 'Z': return HT_BOOLEAN;
    case 'C': return HT_CHAR;
    case 'F': return HT_FLOAT;
    case 'D': return HT_DOUBLE;
    case 'B': return HT_BYTE;
    case 'S': return HT_SHORT;
    case 'I': return HT_INT;
    case 'J': return HT_LONG;
    case 'L':
    case '[': return HT_OBJECT;
    default: return 0;
  }
}

/* "Ljava/lang/String;" -> "java.lang.String", "[[I" -> "int[][]": how Dalvik and ART name
 * classes in hprof (dvmHumanReadableDescriptor, PrettyDescriptor). */
static int pretty_name(const char *sig, char *out, size_t cap) {
  static const struct {
    char c;
    const char *name;
  } prims[] = {{'Z', "boolean"}, {'B', "byte"},  {'C', "char"},   {'S', "short"}, {'I', "int"},
               {'J', "long"},    {'F', "float"}, {'D', "double"}, {'V', "void"}};
  size_t dims = 0, n = 0;
  while (sig[dims] == '[') dims++;
  const char *e = sig + dims;
  const char *base = NULL;
  size_t blen = 0;
  if (*e == 'L') {
    base = e + 1;
    const char *semi = strchr(base, ';');
    blen = semi ? (size_t)(semi - base) : strlen(base);
  } else {
    for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
      if (prims[i].c == *e && e[1] == 0) base = prims[i].name;
    if (base == NULL) base = sig, dims = 0; /* not a descriptor: as it is */
    blen = strlen(base);
  }
  if (blen + dims * 2 + 1 > cap) return -1;
  for (size_t i = 0; i < blen; i++) out[n++] = base[i] == '/' ? '.' : base[i];
  for (size_t i = 0; i < dims; i++) out[n++] = '[', out[n++] = ']';
  out[n] = 0;
  return 0;
}

static int describe(hp_build *b, hp_class *c, ddmc_class_info *ci) {
  int rc = b->bridge->class_info(b->data, c->cls, ci);
  if (rc != 0 || ci->signature == NULL)
    return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: class_info failed for a listed class (JDWP error %d)", rc);
  if (ci->nfields > DDMC__HPROF_MAX_FIELDS)
    return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: class %s has %u fields (hprof holds at most 65535)",
                              ci->signature, ci->nfields);
  char name[1024];
  if (pretty_name(ci->signature, name, sizeof name) != 0)
    return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: a class name longer than 1 KiB");
  c->name = ddmc__prof_hp_string(b, name);
  c->loader = ci->loader;
  if (ci->signature[0] == '[') c->elem = basic_type(ci->signature[1]);
  if (ci->class_object != 0) {
    if (ci->class_object >= DDMC__HP_SYNTHETIC)
      return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: the class object of %s does not fit a 4-byte hprof id",
                                ci->signature);
    c->id = (uint32_t)ci->class_object;
  }
  if (strcmp(ci->signature, "Ljava/lang/Class;") == 0) b->class_class = (int32_t)(c - b->cls);
  if (ci->nfields == 0) return b->rc;
  c->fields = ddmc__calloc(b->mem, ci->nfields, sizeof(hp_field));
  if (c->fields == NULL) return ddmc__prof_hp_fail(b, DDMC_ENOMEM, "heap dump: out of memory for the class table");
  /* Two passes so instance fields come first, statics after, each in declaration order. */
  for (int statics = 0; statics < 2 && b->rc == 0; statics++)
    for (uint32_t i = 0; i < ci->nfields && b->rc == 0; i++) {
      ddmc_field_info fi;
      memset(&fi, 0, sizeof(fi));
      if ((rc = b->bridge->field_info(b->data, c->cls, i, &fi)) != 0 || fi.signature == NULL)
        return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: field_info failed for %s field %u (JDWP error %d)",
                                  ci->signature, i, rc);
      if (((fi.modifiers & DDMC_ACC_STATIC) != 0) != statics) continue;
      hp_field *f = &c->fields[c->ninst + c->nstat];
      f->index = i;
      f->type = basic_type(fi.signature[0]);
      if (f->type == 0)
        return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: field %s of %s has signature '%s'", fi.name ? fi.name : "?",
                                  ci->signature, fi.signature);
      f->name = ddmc__prof_hp_string(b, fi.name);
      if (statics)
        c->nstat++;
      else
        c->ninst++;
    }
  return b->rc;
}

/* An instance's value bytes: its class's fields and every superclass's (bounded: a cycle of
 * superclasses is an error, not a loop). */
static int instance_bytes(hp_build *b, hp_class *c) {
  uint64_t n = 0;
  uint32_t steps = 0;
  for (hp_class *k = c; k != NULL; k = k->super >= 0 ? &b->cls[k->super] : NULL) {
    if (++steps > b->ncls) return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: the superclasses form a cycle");
    for (uint32_t i = 0; i < k->ninst; i++) n += ddmc__prof_hp_type_size(k->fields[i].type);
  }
  if (n > UINT32_MAX) return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: an instance over 4 GiB");
  c->inst_bytes = (uint32_t)n;
  return 0;
}

int ddmc__prof_hp_classes(hp_build *b) {
  int rc = b->bridge->for_each_class(b->data, add_class, b);
  if (b->rc != 0) return b->rc;
  if (rc != 0) return ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: for_each_class failed (JDWP error %d)", rc);
  b->hcap = 16;
  while (b->hcap < b->ncls * 2) b->hcap <<= 1;
  b->by_class = ddmc__calloc(b->mem, b->hcap, sizeof(uint32_t));
  b->by_obj = ddmc__calloc(b->mem, b->hcap, sizeof(uint32_t));
  if (b->by_class == NULL || b->by_obj == NULL)
    return ddmc__prof_hp_fail(b, DDMC_ENOMEM, "heap dump: out of memory for the class table");
  ddmc_class *supers = ddmc__calloc(b->mem, b->ncls ? b->ncls : 1, sizeof(ddmc_class));
  if (supers == NULL) return ddmc__prof_hp_fail(b, DDMC_ENOMEM, "heap dump: out of memory for the class table");
  uint32_t synthetic = 0;
  for (uint32_t i = 0; i < b->ncls && b->rc == 0; i++) {
    hp_class *c = &b->cls[i];
    ddmc_class_info ci;
    memset(&ci, 0, sizeof(ci));
    if (describe(b, c, &ci) != 0) break;
    supers[i] = ci.superclass;
    if (c->id == 0) c->id = DDMC__HP_SYNTHETIC + synthetic++;
    if (index_put(b->by_class, b->hcap, c->cls, i, b->cls, 0) != 0 ||
        index_put(b->by_obj, b->hcap, c->id, i, b->cls, 1) != 0)
      ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: class %s listed twice, or sharing its class object", ci.signature);
  }
  for (uint32_t i = 0; i < b->ncls && b->rc == 0; i++) {
    if (supers[i] == 0) continue;
    hp_class *s = ddmc__prof_hp_class_of(b, supers[i]);
    if (s == NULL)
      ddmc__prof_hp_fail(b, DDMC_EIO, "heap dump: a superclass that for_each_class does not list");
    else
      b->cls[i].super = (int32_t)(s - b->cls);
  }
  ddmc__free(b->mem, supers);
  for (uint32_t i = 0; i < b->ncls && b->rc == 0; i++) instance_bytes(b, &b->cls[i]);
  for (uint32_t i = 0; i < b->ncls && b->rc == 0; i++) {
    ddmc__prof_hp_record(&b->head, DDMC__HPROF_LOAD_CLASS, 16);
    ddmc__prof_hp_u4(&b->head, i + 1);
    ddmc__prof_hp_u4(&b->head, b->cls[i].id);
    ddmc__prof_hp_u4(&b->head, 0);
    ddmc__prof_hp_u4(&b->head, b->cls[i].name);
  }
  return b->rc;
}

void ddmc__prof_hp_meta_free(hp_build *b) {
  for (uint32_t i = 0; i < b->ncls; i++) ddmc__free(b->mem, b->cls[i].fields);
  ddmc__free(b->mem, b->cls);
  ddmc__free(b->mem, b->by_class);
  ddmc__free(b->mem, b->by_obj);
  ddmc__free(b->mem, b->s.off);
  ddmc__free(b->mem, b->s.hash);
  ddmc__buf_free(&b->s.chars);
}
