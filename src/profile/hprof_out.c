/* SPDX-License-Identifier: Apache-2.0 */
/* See hprof_out.h. */
#include "profile/hprof_out.h"

void ddmc__prof_hpout_init(ddmc__prof_hpout *o, const ddmc__mem *mem, uint64_t max) {
  memset(o, 0, sizeof(*o));
  o->mem = mem;
  o->max = max;
}

void ddmc__prof_hpout_free(ddmc__prof_hpout *o) {
  for (ddmc__prof_hpblk *b = o->head, *next; b != NULL; b = next) {
    next = b->next;
    ddmc__big_free(o->mem, b, sizeof(*b) + DDMC__HPBLK_BYTES);
  }
  o->head = o->tail = NULL;
  o->p = o->end = NULL;
  o->base = 0;
}

uint8_t *ddmc__prof_hpout_grow(ddmc__prof_hpout *o, size_t n) {
  if (o->err != 0) return NULL;
  uint64_t pos = ddmc__prof_hpout_pos(o);
  if (n > DDMC__HPBLK_BYTES || pos + n > o->max) {
    o->err = DDMC_ETOOBIG;
    o->p = o->end; /* every later write takes this path and fails */
    return NULL;
  }
  ddmc__prof_hpblk *b = o->spare != NULL ? o->spare(o->spare_arg) : NULL;
  if (b == NULL) b = ddmc__big_alloc(o->mem, sizeof(*b) + DDMC__HPBLK_BYTES);
  if (b == NULL) {
    o->err = DDMC_ENOMEM;
    o->p = o->end;
    return NULL;
  }
  b->next = NULL;
  b->len = 0;
  if (o->tail != NULL) {
    o->tail->len = (size_t)(o->p - o->tail->data);
    o->base += o->tail->len;
    o->tail->next = b;
  } else {
    o->head = b;
  }
  o->tail = b;
  o->p = b->data + n;
  o->end = b->data + DDMC__HPBLK_BYTES;
  return b->data;
}

void ddmc__prof_hp_bytes(ddmc__prof_hpout *o, const void *p, size_t n) {
  const uint8_t *s = p;
  while (n > 0 && o->err == 0) {
    size_t room = (size_t)(o->end - o->p);
    if (room == 0) {
      if (ddmc__prof_hpout_grow(o, 0) == NULL) return;
      continue;
    }
    size_t k = DDMC__MIN(room, n);
    memcpy(o->p, s, k);
    o->p += k;
    s += k;
    n -= k;
  }
}

static void swap_into(uint8_t *d, const uint8_t *s, size_t count, unsigned width) {
  switch (width) {
    case 2:
      for (size_t i = 0; i < count; i++) {
        uint16_t v;
        memcpy(&v, s + i * 2, 2);
        v = __builtin_bswap16(v);
        memcpy(d + i * 2, &v, 2);
      }
      break;
    case 4:
      for (size_t i = 0; i < count; i++) {
        uint32_t v;
        memcpy(&v, s + i * 4, 4);
        v = __builtin_bswap32(v);
        memcpy(d + i * 4, &v, 4);
      }
      break;
    default:
      for (size_t i = 0; i < count; i++) {
        uint64_t v;
        memcpy(&v, s + i * 8, 8);
        v = __builtin_bswap64(v);
        memcpy(d + i * 8, &v, 8);
      }
      break;
  }
}

void ddmc__prof_hp_elements(ddmc__prof_hpout *o, const void *p, size_t count, unsigned width) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  count *= width;
  width = 1;
#endif
  if (width == 1) {
    ddmc__prof_hp_bytes(o, p, count);
    return;
  }
  const uint8_t *s = p;
  while (count > 0 && o->err == 0) {
    size_t fit = (size_t)(o->end - o->p) / width;
    if (fit == 0) {
      if (ddmc__prof_hpout_grow(o, 0) == NULL) return;
      /* a block boundary may split an element: the rest of the old block stays unused */
      continue;
    }
    size_t k = DDMC__MIN(fit, count);
    swap_into(o->p, s, k, width);
    o->p += k * width;
    s += k * width;
    count -= k;
  }
}

int ddmc__prof_hpout_finish(ddmc__prof_hpout *o) {
  if (o->tail != NULL) o->tail->len = (size_t)(o->p - o->tail->data);
  return o->err;
}

void ddmc__prof_hpout_append(ddmc__prof_hpout *dst, ddmc__prof_hpout *src) {
  if (src->head == NULL) return;
  uint64_t dst_total = ddmc__prof_hpout_pos(dst);
  if (dst->tail != NULL) {
    dst->tail->len = (size_t)(dst->p - dst->tail->data);
    dst->tail->next = src->head;
  } else {
    dst->head = src->head;
  }
  dst->base = dst_total + src->base;
  dst->tail = src->tail;
  dst->p = src->p;
  dst->end = src->end;
  if (dst->err == 0) dst->err = src->err;
  memset(src, 0, sizeof(*src));
}
