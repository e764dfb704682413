/* SPDX-License-Identifier: Apache-2.0 */
/* The web server of `ddmc ui` (ui_http.h). Requests are answered by path:
 *   /                  index.html from the web directory, the token written into it
 *   /static/NAME       a file of the web directory (NAME: letters, digits, '.', '-', '_'; no '/'
 *                      and no leading '.', so nothing outside the directory can be named)
 *   /api/state         the latest snapshot (ui_snap.c)
 *   /api/events        server-sent events: one "state" event per snapshot
 *   /api/legend        the heap map's colours (heapimg.h)
 *   POST /api/op/NAME  a VM operation (ui_vm_call), ?arg=...
 *   GET /api/export/NAME  a download of what the page holds (ui_export.c) */
#include "ui_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapimg.h"

/* Files the page may load, each at most this big. */
#define MAX_ASSET_BYTES (8u << 20)

struct ui_http {
  struct MHD_Daemon *d;
  ui_vm *v;
  char web_dir[1024];
  char token[UI_HTTP_TOKEN_HEX + 1];
  char host_ip[32], host_name[32]; /* "127.0.0.1:PORT", "localhost:PORT" */
  atomic_int streams;
  int fd;
};

int ui_http_new_token(char *out) {
  uint8_t b[UI_HTTP_TOKEN_HEX / 2];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t n = getrandom(b + got, sizeof b - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof b; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
  return 0;
}

/* Constant time over the expected length: how much of a guess matched is not observable. */
static int token_ok(const ui_http *s, const char *t) {
  if (t == NULL || strlen(t) != UI_HTTP_TOKEN_HEX) return 0;
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < UI_HTTP_TOKEN_HEX; i++) diff |= (unsigned char)(t[i] ^ s->token[i]);
  return diff == 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype, void *body, size_t len,
                             int owned) {
  struct MHD_Response *r = owned ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
                                 : MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL) {
    if (owned) free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", ctype);
  MHD_add_response_header(r, "Cache-Control", "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  /* Everything the page loads comes from here: no other origin, nothing inline but styles. */
  MHD_add_response_header(r, "Content-Security-Policy",
                          "default-src 'self'; img-src 'self' blob: data:; style-src 'self' 'unsafe-inline'; "
                          "connect-src 'self'; frame-ancestors 'none'");
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg) {
  return reply(c, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg), 0);
}

/* ---- files ------------------------------------------------------------------------------------ */

static const char *ctype_of(const char *name) {
  const char *dot = strrchr(name, '.');
  if (dot == NULL) return "application/octet-stream";
  if (strcmp(dot, ".html") == 0) return "text/html; charset=utf-8";
  if (strcmp(dot, ".js") == 0) return "text/javascript; charset=utf-8";
  if (strcmp(dot, ".css") == 0) return "text/css; charset=utf-8";
  if (strcmp(dot, ".png") == 0) return "image/png";
  if (strcmp(dot, ".svg") == 0) return "image/svg+xml";
  return "application/octet-stream";
}

static int name_ok(const char *name) {
  if (name[0] == '\0' || name[0] == '.' || strlen(name) > 100) return 0;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
          *p == '-' || *p == '_'))
      return 0;
  return 1;
}

/* The whole file into a malloc'd buffer (at most MAX_ASSET_BYTES); NULL when it cannot. */
static char *slurp(const ui_http *s, const char *name, size_t *len) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", s->web_dir, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return NULL;
  struct stat st;
  char *buf = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= MAX_ASSET_BYTES &&
      (buf = malloc((size_t)st.st_size + 1)) != NULL) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += (size_t)n;
    }
    if (got != (size_t)st.st_size) {
      free(buf);
      buf = NULL;
    } else {
      buf[got] = '\0';
      *len = got;
    }
  }
  close(fd);
  return buf;
}

static enum MHD_Result serve_file(ui_http *s, struct MHD_Connection *c, const char *name) {
  if (!name_ok(name)) return text(c, 404, "not found");
  size_t len = 0;
  char *buf = slurp(s, name, &len);
  if (buf == NULL) return text(c, 404, "not found");
  return reply(c, 200, ctype_of(name), buf, len, 1);
}

/* index.html with each "{{TOKEN}}" replaced by the token, so the page's own URLs carry it. */
static enum MHD_Result serve_index(ui_http *s, struct MHD_Connection *c) {
  size_t len = 0;
  char *page = slurp(s, "index.html", &len);
  if (page == NULL) return text(c, 500, "index.html is missing from the web directory");
  char *out = NULL;
  size_t olen = 0;
  FILE *f = open_memstream(&out, &olen);
  if (f == NULL) {
    free(page);
    return text(c, 500, "out of memory");
  }
  const char *p = page, *hit;
  while ((hit = strstr(p, "{{TOKEN}}")) != NULL) {
    fwrite(p, 1, (size_t)(hit - p), f);
    fputs(s->token, f);
    p = hit + 9;
  }
  fputs(p, f);
  free(page);
  if (fclose(f) != 0) {
    free(out);
    return text(c, 500, "out of memory");
  }
  return reply(c, 200, "text/html; charset=utf-8", out, olen, 1);
}

/* ---- the API ---------------------------------------------------------------------------------- */

typedef struct stream {
  ui_http *s;
  uint64_t version;
  char *buf; /* the event being sent */
  size_t len, off;
} stream;

/* Blocks (this connection's own thread) until the next snapshot, or 15 s for a keep-alive. */
static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max) {
  (void)pos;
  stream *st = cls;
  if (st->off == st->len) {
    free(st->buf);
    st->buf = NULL;
    st->off = st->len = 0;
    size_t n = 0;
    char *snap = ui_vm_snapshot(st->s->v, st->version, 15000, &st->version, &n);
    if (snap == NULL) {
      if (atomic_load(&st->s->streams) < 0) return MHD_CONTENT_READER_END_OF_STREAM;
      static const char keep[] = ": keep-alive\n\n";
      if ((st->buf = strdup(keep)) == NULL) return MHD_CONTENT_READER_END_WITH_ERROR;
      st->len = sizeof keep - 1;
    } else {
      while (n > 0 && snap[n - 1] == '\n') n--; /* one data line: the JSON is compact */
      st->len = (size_t)snprintf(NULL, 0, "event: state\ndata: %.*s\n\n", (int)n, snap);
      if ((st->buf = malloc(st->len + 1)) == NULL) {
        free(snap);
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      snprintf(st->buf, st->len + 1, "event: state\ndata: %.*s\n\n", (int)n, snap);
      free(snap);
    }
  }
  size_t k = st->len - st->off < max ? st->len - st->off : max;
  memcpy(out, st->buf + st->off, k);
  st->off += k;
  return (ssize_t)k;
}

static void stream_free(void *cls) {
  stream *st = cls;
  atomic_fetch_sub(&st->s->streams, 1);
  free(st->buf);
  free(st);
}

static enum MHD_Result serve_events(ui_http *s, struct MHD_Connection *c) {
  if (atomic_fetch_add(&s->streams, 1) >= UI_HTTP_MAX_STREAMS) {
    atomic_fetch_sub(&s->streams, 1);
    return text(c, 503, "too many live pages");
  }
  stream *st = calloc(1, sizeof *st);
  struct MHD_Response *r = st ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, st,
                                                                  stream_free)
                              : NULL;
  if (r == NULL) {
    free(st);
    atomic_fetch_sub(&s->streams, 1);
    return MHD_NO;
  }
  st->s = s;
  MHD_add_response_header(r, "Content-Type", "text/event-stream");
  MHD_add_response_header(r, "Cache-Control", "no-store");
  enum MHD_Result rc = MHD_queue_response(c, 200, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result serve_state(ui_http *s, struct MHD_Connection *c) {
  uint64_t version;
  size_t len;
  char *snap = ui_vm_snapshot(s->v, 0, 5000, &version, &len);
  if (snap == NULL) return text(c, 503, "no snapshot yet");
  return reply(c, 200, "application/json", snap, len, 1);
}

static enum MHD_Result serve_legend(struct MHD_Connection *c) {
  char buf[2048];
  size_t n = (size_t)snprintf(buf, sizeof buf, "[");
  for (int i = 1; i < HEAPIMG_NCOLORS && n < sizeof buf - 200; i++) {
    if (i == HEAPIMG_TEXT) continue;
    const heapimg_color *k = heapimg_color_of(i);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s{\"name\":\"%s\",\"label\":\"%s\",\"rgb\":\"#%02x%02x%02x\"}",
                          n > 1 ? "," : "", k->name, k->label, k->r, k->g, k->b);
  }
  n += (size_t)snprintf(buf + n, sizeof buf - n, "]");
  return reply(c, 200, "application/json", buf, n, 0);
}

/* What the VM answered is not an HTTP error: a refusal (502), no answer in time (504) or no VM
 * (409) comes back as 200 with X-Ddmc-Error: STATUS and the reason as the body, so the page tells
 * it apart from a request the server itself refused (400, 403, 404, 503). */
static enum MHD_Result serve_op(ui_http *s, struct MHD_Connection *c, const char *op) {
  const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "arg");
  ui_vm_result r;
  ui_vm_call(s->v, op, arg ? arg : "", &r);
  if (r.body == NULL) return text(c, 500, "out of memory");
  int vm_said = r.status == 409 || r.status == 502 || r.status == 504;
  struct MHD_Response *resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_FREE);
  if (resp == NULL) {
    free(r.body);
    return MHD_NO;
  }
  char st[8];
  snprintf(st, sizeof st, "%d", r.status);
  MHD_add_response_header(resp, "Content-Type", r.ctype);
  MHD_add_response_header(resp, "Cache-Control", "no-store");
  if (vm_said) MHD_add_response_header(resp, "X-Ddmc-Error", st);
  enum MHD_Result rc = MHD_queue_response(c, vm_said ? 200 : (unsigned)r.status, resp);
  MHD_destroy_response(resp);
  return rc;
}

/* A download of what the page holds (ui_export.c), named so the browser saves it as a file. */
static enum MHD_Result serve_export(ui_http *s, struct MHD_Connection *c, const char *name) {
  if (!name_ok(name)) return text(c, 404, "no such export");
  ui_vm_result r;
  ui_vm_call(s->v, "export", name, &r);
  if (r.body == NULL) return text(c, 500, "out of memory");
  struct MHD_Response *resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_FREE);
  if (resp == NULL) {
    free(r.body);
    return MHD_NO;
  }
  char disp[128];
  snprintf(disp, sizeof disp, "attachment; filename=\"ddmc-%s\"", name);
  MHD_add_response_header(resp, "Content-Type", r.ctype);
  MHD_add_response_header(resp, "Cache-Control", "no-store");
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  if (r.status == 200) MHD_add_response_header(resp, "Content-Disposition", disp);
  enum MHD_Result rc = MHD_queue_response(c, (unsigned)r.status, resp);
  MHD_destroy_response(resp);
  return rc;
}

/* ---- the handler ------------------------------------------------------------------------------ */

static int host_ok(const ui_http *s, struct MHD_Connection *c) {
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
  return h != NULL && (strcmp(h, s->host_ip) == 0 || strcmp(h, s->host_name) == 0);
}

static enum MHD_Result route(ui_http *s, struct MHD_Connection *c, const char *url, int post) {
  if (post) {
    if (strncmp(url, "/api/op/", 8) == 0) return serve_op(s, c, url + 8);
    return text(c, 405, "method not allowed");
  }
  if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0) return serve_index(s, c);
  if (strncmp(url, "/static/", 8) == 0) return serve_file(s, c, url + 8);
  if (strcmp(url, "/api/state") == 0) return serve_state(s, c);
  if (strcmp(url, "/api/events") == 0) return serve_events(s, c);
  if (strcmp(url, "/api/legend") == 0) return serve_legend(c);
  if (strncmp(url, "/api/export/", 12) == 0) return serve_export(s, c, url + 12);
  return text(c, 404, "not found");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls) {
  (void)version;
  (void)upload;
  ui_http *s = cls;
  static int first, too_big;
  if (*con_cls == NULL) {
    *con_cls = &first; /* headers only so far: answer once the body (if any) is in */
    return MHD_YES;
  }
  if (*upload_size > 0) {
    *upload_size = 0; /* no request has a body: it is dropped and refused */
    *con_cls = &too_big;
    return MHD_YES;
  }
  int post = strcmp(method, "POST") == 0;
  if (!post && strcmp(method, "GET") != 0) return text(c, 405, "method not allowed");
  if (!host_ok(s, c)) return text(c, 403, "forbidden: wrong Host");
  const char *tok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
  if (tok == NULL) tok = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Ddmc-Token");
  if (!token_ok(s, tok)) return text(c, 403, "forbidden: this page needs the token ddmc ui printed");
  if (*con_cls == &too_big) return text(c, 413, "request bodies are not accepted");
  if (strlen(url) > 1024) return text(c, 414, "URL too long");
  return route(s, c, url, post);
}

static int listen_loopback(uint16_t port, uint16_t *bound, char *err, size_t errlen) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
    snprintf(err, errlen, "cannot listen on 127.0.0.1:%u: %s", (unsigned)port, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  *bound = ntohs(a.sin_port);
  return fd;
}

ui_http *ui_http_start(ui_vm *v, const char *web_dir, const char *token, uint16_t port, uint16_t *bound, char *err,
                       size_t errlen) {
  ui_http *s = calloc(1, sizeof *s);
  if (s == NULL || strlen(token) != UI_HTTP_TOKEN_HEX || strlen(web_dir) >= sizeof s->web_dir) {
    snprintf(err, errlen, "bad arguments");
    free(s);
    return NULL;
  }
  s->v = v;
  snprintf(s->web_dir, sizeof s->web_dir, "%s", web_dir);
  memcpy(s->token, token, UI_HTTP_TOKEN_HEX + 1);
  if ((s->fd = listen_loopback(port, bound, err, errlen)) < 0) {
    free(s);
    return NULL;
  }
  snprintf(s->host_ip, sizeof s->host_ip, "127.0.0.1:%u", (unsigned)*bound);
  snprintf(s->host_name, sizeof s->host_name, "localhost:%u", (unsigned)*bound);
  s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handle, s,
                          MHD_OPTION_LISTEN_SOCKET, s->fd, MHD_OPTION_CONNECTION_LIMIT,
                          (unsigned)UI_HTTP_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_END);
  if (s->d == NULL) {
    snprintf(err, errlen, "libmicrohttpd did not start");
    close(s->fd);
    free(s);
    return NULL;
  }
  return s;
}

void ui_http_stop(ui_http *s) {
  if (s == NULL) return;
  atomic_store(&s->streams, -1000); /* the live streams end at their next wake-up */
  MHD_stop_daemon(s->d);
  close(s->fd);
  free(s);
}
