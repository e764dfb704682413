/* SPDX-License-Identifier: Apache-2.0 */
/* jmethodID and jfieldID: (class, index) pairs interned in one table, so the same method always
 * has the same ID (agents key their tables by it) and a made-up ID names nothing. An ID is
 * (entry + 1) << 1 | is_field; entries are never removed (the VM never unloads a class here).
 * The table is bounded (2^22 entries). */
#include <string.h>

#include "jvmti/funcs.h"

#define DDMC__MEMBERS_MAX ((uint32_t)1 << 22)

int ddmc__jv_members_init(ddmc__jv_members *m) {
  memset(m, 0, sizeof(*m));
  return pthread_mutex_init(&m->lock, NULL) == 0 ? 0 : DDMC_ENOMEM;
}

void ddmc__jv_members_destroy(ddmc__jv_members *m, const ddmc__mem *mem) {
  ddmc__free(mem, m->v);
  ddmc__free(mem, m->hash);
  pthread_mutex_destroy(&m->lock);
}

static uint32_t hash_of(ddmc_class c, uint32_t index, int is_field) {
  uint64_t h = c * 0x9E3779B97F4A7C15ull ^ ((uint64_t)index << 1 | (uint64_t)is_field) * 0xC2B2AE3D27D4EB4Full;
  return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static int rehash(ddmc__jvmti *jv, ddmc__jv_members *m, uint32_t cap) {
  uint32_t *h = ddmc__calloc(jv->mem, cap, sizeof(uint32_t));
  if (h == NULL) return -1;
  for (uint32_t i = 0; i < m->n; i++) {
    uint32_t k = hash_of(m->v[i].cls, m->v[i].index, m->v[i].is_field) & (cap - 1);
    while (h[k] != 0) k = (k + 1) & (cap - 1);
    h[k] = i + 1;
  }
  ddmc__free(jv->mem, m->hash);
  m->hash = h;
  m->hash_cap = cap;
  return 0;
}

static struct ddmc__jmember *intern(ddmc__jvmti *jv, ddmc_class c, uint32_t index, int is_field) {
  if (c == 0) return NULL;
  ddmc__jv_members *m = &jv->members;
  uint32_t id = 0;
  ddmc__lock(&m->lock);
  if (m->hash_cap != 0) {
    uint32_t k = hash_of(c, index, is_field) & (m->hash_cap - 1);
    for (; m->hash[k] != 0; k = (k + 1) & (m->hash_cap - 1)) {
      const ddmc__jv_member *e = &m->v[m->hash[k] - 1];
      if (e->cls == c && e->index == index && e->is_field == is_field) {
        id = m->hash[k];
        break;
      }
    }
  }
  if (id == 0 && m->n < DDMC__MEMBERS_MAX) {
    if (m->n == m->cap) {
      uint32_t cap = m->cap ? m->cap * 2 : 256;
      ddmc__jv_member *v = ddmc__realloc(jv->mem, m->v, sizeof(ddmc__jv_member) * cap);
      if (v != NULL) {
        m->v = v;
        m->cap = cap;
      }
    }
    if ((m->n + 1) * 2 > m->hash_cap && rehash(jv, m, m->hash_cap ? m->hash_cap * 2 : 512) != 0) {
      /* no room: fall through with id 0 */
    } else if (m->n < m->cap) {
      m->v[m->n] = (ddmc__jv_member){c, index, (uint8_t)is_field};
      uint32_t k = hash_of(c, index, is_field) & (m->hash_cap - 1);
      while (m->hash[k] != 0) k = (k + 1) & (m->hash_cap - 1);
      m->hash[k] = ++m->n;
      id = m->n;
    }
  }
  ddmc__unlock(&m->lock);
  return id == 0 ? NULL : (struct ddmc__jmember *)(uintptr_t)((uintptr_t)id << 1 | (uintptr_t)is_field);
}

jmethodID ddmc__jv_method_id(ddmc__jvmti *jv, ddmc_class c, uint32_t index) { return intern(jv, c, index, 0); }

jfieldID ddmc__jv_field_id(ddmc__jvmti *jv, ddmc_class c, uint32_t index) { return intern(jv, c, index, 1); }

static int lookup(ddmc__jvmti *jv, struct ddmc__jmember *p, int is_field, ddmc_class *c, uint32_t *index) {
  uintptr_t v = (uintptr_t)p;
  if (v == 0 || (int)(v & 1) != is_field) return -1;
  uintptr_t id = v >> 1;
  ddmc__jv_members *m = &jv->members;
  int rc = -1;
  ddmc__lock(&m->lock);
  if (id >= 1 && id <= m->n) {
    *c = m->v[id - 1].cls;
    *index = m->v[id - 1].index;
    rc = 0;
  }
  ddmc__unlock(&m->lock);
  return rc;
}

int ddmc__jv_method_of(ddmc__jvmti *jv, jmethodID mid, ddmc_class *c, uint32_t *index) {
  return lookup(jv, mid, 0, c, index) == 0 ? 0 : JVMTI_ERROR_INVALID_METHODID;
}

int ddmc__jv_field_of(ddmc__jvmti *jv, jfieldID fid, ddmc_class *c, uint32_t *index) {
  return lookup(jv, fid, 1, c, index) == 0 ? 0 : JVMTI_ERROR_INVALID_FIELDID;
}
