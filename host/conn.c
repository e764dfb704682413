/* SPDX-License-Identifier: Apache-2.0 */
/* One host-side JDWP connection: connect/adopt, handshake, packet framing, DDM requests with an
 * out-of-order FIFO, ZLIB inflation, and the HELO/FEAT session step.
 *
 * Design notes (why it looks like this):
 * - All socket I/O is poll() + recv/send with MSG_DONTWAIT|MSG_NOSIGNAL, so timeouts hold even on
 *   an adopted blocking fd, and a peer that vanished never raises SIGPIPE in the host process.
 * - The framer keeps a growable read buffer. The 11-byte header is checked (11 <= length <= cap,
 *   flags 0x00/0x80) BEFORE the buffer is grown for the body, so a hostile length never makes
 *   us allocate. A framing error is fatal and sticky: a byte stream cannot be resynchronised.
 * - Each complete packet is copied out of the read buffer into its own allocation. That costs a
 *   copy, but lets request() park unsolicited packets in the FIFO untouched (they are decoded,
 *   and possibly inflated, only when recv() hands them out) and lets the buffer compact freely.
 * - Replies to requests given up on (timeout) are remembered in a small ring and dropped when
 *   they turn up, so a slow VM cannot make a stale reply look like an unsolicited packet. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "ddmc_host.h"
#include "host_int.h"

#define HANDSHAKE DDMC_HOST_HANDSHAKE
#define HANDSHAKE_LEN DDMC_HOST_HANDSHAKE_LEN
#define ABANDONED_MAX 64
#define CMD_IDS_MAX 4096

typedef struct frame {
  uint8_t *data; /* whole packet, header included */
  uint32_t len;
} frame;

struct ddmc_host {
  int fd;
  int fatal;    /* sticky receive-side error (framing, handshake) */
  int send_err; /* sticky send-side error (a packet went out only in part) */
  int eof;
  int handshake_done;
  uint32_t next_id, last_id;
  uint32_t max_packet;
  size_t max_queue;
  int send_timeout_ms;

  uint8_t *rbuf;
  size_t rcap, rpos, rlen;

  frame *q; /* ring buffer of raw frames not yet handed out */
  size_t qhead, qcount, qcap, qbytes;

  uint8_t *cur, *cur_infl; /* memory behind the last packet handed out */

  uint32_t *cmd_ids; /* ids of non-DDM commands awaiting a reply (not DDM-decoded) */
  size_t n_cmd_ids;
  uint32_t abandoned[ABANDONED_MAX];
  size_t n_abandoned, abandoned_next;

  ddmc_host_stats st;
  void (*progress)(void *ud, uint64_t have, uint64_t total);
  void *progress_ud;
};

/* ---- errors ---------------------------------------------------------------------------------- */

const char *ddmc_host_strerror(int err) {
  if (err == 0) return "success";
  switch (err) {
#define XX(name, msg) \
  case DDMC_##name:   \
    return msg;
    DDMC_ERRNO_MAP(XX)
#undef XX
  default:
    return "unknown error";
  }
}

/* ---- time ------------------------------------------------------------------------------------ */

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
/* Deadline -1 = forever. */
static int64_t deadline_of(int timeout_ms) { return timeout_ms < 0 ? -1 : now_ms() + timeout_ms; }
static int remaining(int64_t deadline) {
  if (deadline < 0) return -1;
  int64_t r = deadline - now_ms();
  if (r <= 0) return 0;
  return r > 0x7fffffff ? 0x7fffffff : (int)r;
}

/* Waits for ev on the fd. Returns 0 when ready, DDMC_ETIMEDOUT, DDMC_EIO. */
static int wait_fd(int fd, short ev, int64_t deadline) {
  for (;;) {
    struct pollfd pfd = {.fd = fd, .events = ev};
    int rc = poll(&pfd, 1, remaining(deadline));
    if (rc > 0) return 0; /* POLLHUP/POLLERR too: the recv/send that follows reports it */
    if (rc == 0) return DDMC_ETIMEDOUT;
    if (errno != EINTR) return DDMC_EIO;
  }
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static int host_new(ddmc_host **out, int fd) {
  ddmc_host *h = calloc(1, sizeof *h);
  if (!h) return DDMC_ENOMEM;
  h->fd = fd;
  h->next_id = DDMC_HOST_FIRST_ID;
  h->max_packet = DDMC_HOST_DEFAULT_MAX_PACKET;
  h->max_queue = DDMC_HOST_DEFAULT_MAX_QUEUE;
  h->send_timeout_ms = DDMC_HOST_DEFAULT_SEND_TIMEOUT_MS;
  *out = h;
  return 0;
}

int ddmc_host_from_fd(ddmc_host **out, int fd) {
  if (!out) return DDMC_EINVAL;
  *out = NULL;
  int type = 0;
  socklen_t tl = sizeof type;
  /* MSG_DONTWAIT/MSG_NOSIGNAL only exist for sockets, and adb hands over a socket anyway. */
  if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM)
    return DDMC_EINVAL;
  return host_new(out, fd);
}

static int connect_one(const struct addrinfo *ai, int64_t deadline, int *fd_out) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return errno == ENOMEM || errno == ENOBUFS ? DDMC_ENOMEM : DDMC_EIO;
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS || err == EINTR) {
    int w = wait_fd(fd, POLLOUT, deadline);
    if (w) {
      close(fd);
      return w;
    }
    socklen_t l = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0) err = errno;
  }
  if (err) {
    close(fd);
    return err == ECONNREFUSED ? DDMC_ECONNREFUSED : err == ETIMEDOUT ? DDMC_ETIMEDOUT : DDMC_EIO;
  }
  /* DDM is request/response with small packets: Nagle would only add latency. */
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  *fd_out = fd;
  return 0;
}

int ddmc_host_connect_tcp(ddmc_host **out, const char *host, uint16_t port, int timeout_ms) {
  if (!out || !host) return DDMC_EINVAL;
  *out = NULL;
  int64_t deadline = deadline_of(timeout_ms);
  char ps[8];
  snprintf(ps, sizeof ps, "%u", (unsigned)port);
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
  struct addrinfo *res = NULL;
  int g = getaddrinfo(host, ps, &hints, &res);
  if (g != 0) return g == EAI_MEMORY ? DDMC_ENOMEM : DDMC_EADDR;
  int rc = DDMC_EADDR, fd = -1;
  for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
    int r = connect_one(ai, deadline, &fd);
    if (r == 0) {
      rc = 0;
      break;
    }
    /* Keep the most telling error: a refusal beats a generic failure; time is shared. */
    if (rc == DDMC_EADDR || r != DDMC_EIO) rc = r;
    if (r == DDMC_ETIMEDOUT || r == DDMC_ENOMEM) break;
  }
  freeaddrinfo(res);
  if (rc) return rc;
  rc = host_new(out, fd);
  if (rc) close(fd);
  return rc;
}

static void release_cur(ddmc_host *h) {
  free(h->cur);
  free(h->cur_infl);
  h->cur = h->cur_infl = NULL;
}

void ddmc_host_close(ddmc_host *h) {
  if (!h || h->fd < 0) return;
  close(h->fd);
  h->fd = -1;
}

void ddmc_host_free(ddmc_host *h) {
  if (!h) return;
  ddmc_host_close(h);
  release_cur(h);
  for (size_t i = 0; i < h->qcount; i++) free(h->q[(h->qhead + i) % h->qcap].data);
  free(h->q);
  free(h->rbuf);
  free(h->cmd_ids);
  free(h);
}

int ddmc_host_fd(const ddmc_host *h) { return h ? h->fd : -1; }

int ddmc_host_set_max_packet(ddmc_host *h, uint32_t bytes) {
  if (!h || bytes < DDMC_HOST_HEADER_LEN + 8) return DDMC_EINVAL;
  h->max_packet = bytes;
  return 0;
}
int ddmc_host_set_max_queue(ddmc_host *h, size_t bytes) {
  if (!h) return DDMC_EINVAL;
  h->max_queue = bytes;
  return 0;
}
void ddmc_host_set_progress(ddmc_host *h, void (*fn)(void *ud, uint64_t have, uint64_t total), void *ud) {
  h->progress = fn;
  h->progress_ud = ud;
}

void ddmc_host_set_send_timeout(ddmc_host *h, int timeout_ms) {
  if (h) h->send_timeout_ms = timeout_ms;
}
uint32_t ddmc_host_last_id(const ddmc_host *h) { return h ? h->last_id : 0; }

void ddmc_host_stats_get(const ddmc_host *h, ddmc_host_stats *out) {
  if (!out) return;
  if (!h) {
    memset(out, 0, sizeof *out);
    return;
  }
  *out = h->st;
}

/* ---- sending --------------------------------------------------------------------------------- */

/* Writes all of iov. Returns 0, DDMC_ECLOSED, DDMC_ETIMEDOUT, DDMC_EIO. A failure after part of
 * the data went out poisons later sends: the peer would misframe whatever we write next. */
static int send_all(ddmc_host *h, struct iovec *iov, int cnt, int64_t deadline) {
  if (h->fd < 0) return DDMC_ECLOSED;
  if (h->send_err) return h->send_err;
  size_t sent = 0;
  while (cnt > 0) {
    if (iov->iov_len == 0) {
      iov++, cnt--;
      continue;
    }
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
    ssize_t n = sendmsg(h->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      int e = errno, rc;
      if (e == EINTR) continue;
      if (e == EAGAIN || e == EWOULDBLOCK) {
        rc = wait_fd(h->fd, POLLOUT, deadline);
        if (rc == 0) continue;
      } else {
        rc = (e == EPIPE || e == ECONNRESET || e == ENOTCONN) ? DDMC_ECLOSED : DDMC_EIO;
      }
      if (sent) h->send_err = rc;
      return rc;
    }
    sent += (size_t)n;
    h->st.bytes_out += (uint64_t)n;
    size_t k = (size_t)n;
    while (cnt > 0 && k >= iov->iov_len) {
      k -= iov->iov_len;
      iov++, cnt--;
    }
    if (cnt > 0) {
      iov->iov_base = (uint8_t *)iov->iov_base + k;
      iov->iov_len -= k;
    }
  }
  return 0;
}

static uint32_t take_id(ddmc_host *h) {
  uint32_t id = h->next_id++;
  if (h->next_id >= 0x80000000u) h->next_id = DDMC_HOST_FIRST_ID;
  h->last_id = id;
  return id;
}

/* Header [u4 len][u4 id][u1 0][u1 set][u1 cmd], then the optional chunk header, then data. */
static int send_packet(ddmc_host *h, uint8_t set, uint8_t cmd, const uint32_t *chunk_type,
                       const void *data, size_t len, uint32_t *id_out) {
  if (!h || (!data && len)) return DDMC_EINVAL;
  size_t hl = DDMC_HOST_HEADER_LEN + (chunk_type ? 8 : 0);
  if (len > UINT32_MAX - hl) return DDMC_ETOOBIG;
  uint8_t hdr[19];
  uint32_t id = take_id(h);
  ddmc_host__put32(hdr, (uint32_t)(hl + len));
  ddmc_host__put32(hdr + 4, id);
  hdr[8] = 0;
  hdr[9] = set;
  hdr[10] = cmd;
  if (chunk_type) {
    ddmc_host__put32(hdr + 11, *chunk_type);
    ddmc_host__put32(hdr + 15, (uint32_t)len);
  }
  struct iovec iov[2] = {{hdr, hl}, {(void *)data, len}};
  int rc = send_all(h, iov, 2, deadline_of(h->send_timeout_ms));
  if (rc) return rc;
  h->st.packets_out++;
  if (id_out) *id_out = id;
  return 0;
}

int ddmc_host_send_chunk(ddmc_host *h, uint32_t type, const void *data, size_t len, uint32_t *id) {
  return send_packet(h, DDMC_HOST_DDM_CMDSET, DDMC_HOST_DDM_CMD, &type, data, len, id);
}

int ddmc_host_send_command(ddmc_host *h, uint8_t cmd_set, uint8_t cmd, const void *data, size_t len,
                           uint32_t *id) {
  uint32_t myid;
  int rc = send_packet(h, cmd_set, cmd, NULL, data, len, &myid);
  if (rc) return rc;
  if (id) *id = myid;
  if (!(cmd_set == DDMC_HOST_DDM_CMDSET && cmd == DDMC_HOST_DDM_CMD)) {
    /* Remember it so the reply is not mistaken for a DDM chunk. Bounded: a VM that never answers
     * must not grow this forever; the oldest id is forgotten first. */
    if (!h->cmd_ids) {
      h->cmd_ids = malloc(CMD_IDS_MAX * sizeof *h->cmd_ids);
      if (!h->cmd_ids) return 0; /* sent; its reply will just be looked at as DDM */
    }
    if (h->n_cmd_ids == CMD_IDS_MAX) {
      memmove(h->cmd_ids, h->cmd_ids + 1, (CMD_IDS_MAX - 1) * sizeof *h->cmd_ids);
      h->n_cmd_ids--;
    }
    h->cmd_ids[h->n_cmd_ids++] = myid;
  }
  return 0;
}

int ddmc_host_send_raw(ddmc_host *h, const void *bytes, size_t n) {
  if (!h || (!bytes && n)) return DDMC_EINVAL;
  struct iovec iov[1] = {{(void *)bytes, n}};
  return send_all(h, iov, 1, deadline_of(h->send_timeout_ms));
}

/* ---- receiving: the framer ------------------------------------------------------------------- */

/* Reads more bytes into rbuf so that it can hold at least `need` unread bytes. Returns 0 (some
 * bytes arrived), DDMC_ECLOSED (EOF/reset), DDMC_ETIMEDOUT, DDMC_ENOMEM, DDMC_EIO. */
static int fill(ddmc_host *h, size_t need, int64_t deadline) {
  if (h->eof || h->fd < 0) return DDMC_ECLOSED;
  if (h->rpos > 0) { /* compact: unread bytes to the front */
    memmove(h->rbuf, h->rbuf + h->rpos, h->rlen - h->rpos);
    h->rlen -= h->rpos;
    h->rpos = 0;
  }
  size_t want = need < 65536 ? 65536 : need;
  if (h->rcap < want) {
    uint8_t *nb = realloc(h->rbuf, want);
    if (!nb) return DDMC_ENOMEM;
    h->rbuf = nb;
    h->rcap = want;
  }
  for (;;) {
    ssize_t n = recv(h->fd, h->rbuf + h->rlen, h->rcap - h->rlen, MSG_DONTWAIT);
    if (n > 0) {
      h->rlen += (size_t)n;
      h->st.bytes_in += (uint64_t)n;
      return 0;
    }
    if (n == 0) {
      h->eof = 1;
      return DDMC_ECLOSED;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int rc = wait_fd(h->fd, POLLIN, deadline);
      if (rc) return rc;
      continue;
    }
    if (errno == ECONNRESET || errno == ENOTCONN || errno == EPIPE) {
      h->eof = 1;
      return DDMC_ECLOSED;
    }
    return DDMC_EIO;
  }
}

/* Next complete packet from the socket (not the FIFO). */
static int next_frame(ddmc_host *h, frame *out, int64_t deadline) {
  if (h->fatal) return h->fatal;
  for (;;) {
    size_t avail = h->rlen - h->rpos;
    size_t need = DDMC_HOST_HEADER_LEN;
    if (avail >= DDMC_HOST_HEADER_LEN) {
      uint32_t len;
      int rc = ddmc_host__check_header(h->rbuf + h->rpos, h->max_packet, &len);
      if (rc) return h->fatal = rc;
      if (avail >= len) {
        if (h->progress && len >= DDMC_HOST_PROGRESS_MIN) h->progress(h->progress_ud, len, len);
        uint8_t *d = malloc(len);
        if (!d) return DDMC_ENOMEM;
        memcpy(d, h->rbuf + h->rpos, len);
        h->rpos += len;
        if (h->rpos == h->rlen) {
          h->rpos = h->rlen = 0;
          /* Give back the memory of a one-off huge packet (heap dump) once it is consumed. */
          if (h->rcap > (1u << 20)) {
            free(h->rbuf);
            h->rbuf = NULL;
            h->rcap = 0;
          }
        }
        out->data = d;
        out->len = len;
        h->st.packets_in++;
        return 0;
      }
      need = len;
      if (h->progress && len >= DDMC_HOST_PROGRESS_MIN) h->progress(h->progress_ud, avail, len);
    }
    int rc = fill(h, need, deadline);
    if (rc) return rc;
  }
}

/* ---- the FIFO -------------------------------------------------------------------------------- */

/* force: keep f even over the cap (it was already read off the socket; dropping it would lose
 * a packet and break the order). Returns 0, DDMC_EQFULL (kept anyway when forced), DDMC_ENOMEM. */
static int q_push(ddmc_host *h, frame f, int force) {
  int over = h->qbytes + f.len > h->max_queue;
  if (over && !force) return DDMC_EQFULL;
  if (h->qcount == h->qcap) {
    size_t nc = h->qcap ? h->qcap * 2 : 16;
    frame *nq = malloc(nc * sizeof *nq);
    if (!nq) return DDMC_ENOMEM;
    for (size_t i = 0; i < h->qcount; i++) nq[i] = h->q[(h->qhead + i) % h->qcap];
    free(h->q);
    h->q = nq;
    h->qcap = nc;
    h->qhead = 0;
  }
  h->q[(h->qhead + h->qcount) % h->qcap] = f;
  h->qcount++;
  h->qbytes += f.len;
  return over ? DDMC_EQFULL : 0;
}

static int q_pop(ddmc_host *h, frame *f) {
  if (h->qcount == 0) return 0;
  *f = h->q[h->qhead];
  h->qhead = (h->qhead + 1) % h->qcap;
  h->qcount--;
  h->qbytes -= f->len;
  return 1;
}

/* ---- ids ------------------------------------------------------------------------------------- */

static void abandon(ddmc_host *h, uint32_t id) {
  h->abandoned[h->abandoned_next] = id;
  h->abandoned_next = (h->abandoned_next + 1) % ABANDONED_MAX;
  if (h->n_abandoned < ABANDONED_MAX) h->n_abandoned++;
}

/* True (and forgets it) when f is a reply to an abandoned request. */
static int is_abandoned_reply(ddmc_host *h, const frame *f) {
  if (!(f->data[8] & DDMC_HOST_FLAG_REPLY) || h->n_abandoned == 0) return 0;
  uint32_t id = ddmc_host__get32(f->data + 4);
  for (size_t i = 0; i < ABANDONED_MAX; i++) {
    if (h->abandoned[i] == id && id != 0) {
      h->abandoned[i] = 0;
      return 1;
    }
  }
  return 0;
}

static int take_cmd_id(ddmc_host *h, uint32_t id) {
  for (size_t i = 0; i < h->n_cmd_ids; i++) {
    if (h->cmd_ids[i] == id) {
      memmove(h->cmd_ids + i, h->cmd_ids + i + 1, (h->n_cmd_ids - i - 1) * sizeof *h->cmd_ids);
      h->n_cmd_ids--;
      return 1;
    }
  }
  return 0;
}

/* ---- decoding -------------------------------------------------------------------------------- */

/* Inflates a ZLIB chunk payload (layout in ddmc_host.h) into h->cur_infl as a rebuilt body
 * [u4 inner type][u4 inner len][data], and points pkt at it. */
static int inflate_chunk(ddmc_host *h, ddmc_host_packet *pkt) {
  const uint8_t *p = pkt->chunk;
  size_t n = pkt->chunk_len;
  if (n < 12) return DDMC_EPROTO;
  uint32_t clen = ddmc_host__get32(p), itype = ddmc_host__get32(p + 4), ilen = ddmc_host__get32(p + 8);
  if (clen != n - 12) return DDMC_EPROTO;
  if (ilen > h->max_packet) return DDMC_ETOOBIG;
  /* +1: zlib refuses a NULL next_out even when there is nothing to write. */
  uint8_t *out = malloc((size_t)ilen + 9);
  if (!out) return DDMC_ENOMEM;
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit(&zs) != Z_OK) {
    free(out);
    return DDMC_ENOMEM;
  }
  zs.next_in = (Bytef *)(p + 12);
  zs.avail_in = clen;
  zs.next_out = out + 8;
  zs.avail_out = ilen;
  int zr = inflate(&zs, Z_FINISH);
  int rc = 0;
  if (zr == Z_MEM_ERROR) {
    rc = DDMC_ENOMEM;
  } else if (zr != Z_STREAM_END || zs.total_out != ilen || zs.avail_in != 0) {
    /* Z_BUF_ERROR with no room left = more data than announced; with input left over or a
     * short output = less; Z_DATA_ERROR = not a zlib stream. All are length/format lies. */
    rc = DDMC_EPROTO;
  }
  inflateEnd(&zs);
  if (rc) {
    free(out);
    return rc;
  }
  ddmc_host__put32(out, itype);
  ddmc_host__put32(out + 4, ilen);
  h->st.zlib_chunks_in++;
  h->st.zlib_in_wire += n;
  h->st.zlib_in_raw += ilen;
  h->cur_infl = out;
  pkt->was_compressed = 1;
  pkt->body = out;
  pkt->body_len = (size_t)ilen + 8;
  pkt->chunk_type = itype;
  pkt->chunk = out + 8;
  pkt->chunk_len = ilen;
  return 0;
}

/* Takes ownership of f and fills pkt. On error the packet is consumed (freed). */
static int decode(ddmc_host *h, frame f, ddmc_host_packet *pkt) {
  release_cur(h);
  h->cur = f.data;
  const uint8_t *d = f.data;
  /* A reply is DDM unless it answers a command sent with ddmc_host_send_command. */
  int reply_is_ddm = (d[8] & DDMC_HOST_FLAG_REPLY) == 0 || !take_cmd_id(h, ddmc_host__get32(d + 4));
  if (ddmc_host__packet_view(d, f.len, reply_is_ddm, pkt) != 0) {
    release_cur(h);
    return DDMC_EPROTO;
  }
  if (pkt->is_ddm && pkt->chunk_type == DDMC_HOST_TYPE_ZLIB) {
    int rc = inflate_chunk(h, pkt);
    if (rc) {
      release_cur(h);
      memset(pkt, 0, sizeof *pkt);
      return rc;
    }
  }
  return 0;
}

int ddmc_host_recv(ddmc_host *h, ddmc_host_packet *pkt, int timeout_ms) {
  if (!h || !pkt) return DDMC_EINVAL;
  release_cur(h);
  int64_t deadline = deadline_of(timeout_ms);
  frame f;
  while (q_pop(h, &f)) {
    if (is_abandoned_reply(h, &f)) {
      free(f.data);
      continue;
    }
    return decode(h, f, pkt);
  }
  for (;;) {
    int rc = next_frame(h, &f, deadline);
    if (rc) return rc;
    if (is_abandoned_reply(h, &f)) {
      free(f.data);
      continue;
    }
    return decode(h, f, pkt);
  }
}

/* Reads from the socket until a reply to one of ids[0..n) arrives; everything else goes to the
 * FIFO (stale replies are dropped). *which gets the index. */
static int wait_reply(ddmc_host *h, const uint32_t *ids, size_t n, int64_t deadline, frame *out,
                      size_t *which) {
  for (;;) {
    frame f;
    int rc = next_frame(h, &f, deadline);
    if (rc) return rc;
    if (f.data[8] & DDMC_HOST_FLAG_REPLY) {
      uint32_t id = ddmc_host__get32(f.data + 4);
      for (size_t i = 0; i < n; i++) {
        if (ids[i] == id) {
          *out = f;
          *which = i;
          return 0;
        }
      }
      if (is_abandoned_reply(h, &f)) {
        free(f.data);
        continue;
      }
    }
    rc = q_push(h, f, 1);
    if (rc == DDMC_ENOMEM) free(f.data);
    if (rc) return rc;
  }
}

int ddmc_host_request(ddmc_host *h, uint32_t type, const void *data, size_t len,
                      ddmc_host_packet *reply, int timeout_ms) {
  if (!h || !reply) return DDMC_EINVAL;
  release_cur(h);
  memset(reply, 0, sizeof *reply);
  int64_t deadline = deadline_of(timeout_ms);
  uint32_t id;
  int rc = ddmc_host_send_chunk(h, type, data, len, &id);
  if (rc) return rc;
  frame f;
  size_t which;
  rc = wait_reply(h, &id, 1, deadline, &f, &which);
  if (rc) {
    abandon(h, id);
    return rc;
  }
  return decode(h, f, reply);
}

/* ---- handshake ------------------------------------------------------------------------------- */

int ddmc_host_handshake(ddmc_host *h, int timeout_ms) {
  if (!h) return DDMC_EINVAL;
  if (h->handshake_done) return DDMC_ESTATE;
  if (h->fatal) return h->fatal;
  int64_t deadline = deadline_of(timeout_ms);
  struct iovec iov[1] = {{(void *)HANDSHAKE, HANDSHAKE_LEN}};
  int rc = send_all(h, iov, 1, deadline);
  if (rc) return rc;
  for (;;) {
    size_t avail = h->rlen - h->rpos;
    const uint8_t *p = h->rbuf ? h->rbuf + h->rpos : NULL;
    size_t k = avail < HANDSHAKE_LEN ? avail : HANDSHAKE_LEN;
    int prefix_ok = k == 0 || memcmp(p, HANDSHAKE, k) == 0;
    size_t need = HANDSHAKE_LEN;
    if (prefix_ok && avail >= HANDSHAKE_LEN) {
      h->rpos += HANDSHAKE_LEN;
      if (h->rpos == h->rlen) h->rpos = h->rlen = 0;
      h->handshake_done = 1;
      return 0;
    }
    if (!prefix_ok) {
      uint32_t len = 0;
      int e = ddmc_host__early_ddm_packet(p, avail, h->max_packet, &len);
      if (e == 0) return h->fatal = DDMC_EPROTO;
      if (e == 1 && avail >= len) {
        frame f = {malloc(len), len};
        if (!f.data) return DDMC_ENOMEM;
        memcpy(f.data, p, len);
        h->rpos += len;
        h->st.packets_in++;
        rc = q_push(h, f, 1);
        if (rc == DDMC_ENOMEM) {
          free(f.data);
          return rc;
        }
        continue;
      }
      need = e == 1 ? len : DDMC_HOST_HEADER_LEN;
    }
    rc = fill(h, need, deadline);
    /* EOF after bytes that are not the echo: the peer is not JDWP; say so rather than "closed". */
    if (rc == DDMC_ECLOSED && !prefix_ok) return h->fatal = DDMC_EPROTO;
    if (rc) return rc;
  }
}

/* ---- ZLIB opt-in ----------------------------------------------------------------------------- */

int ddmc_host_opt_in_zlib(ddmc_host *h) {
  if (!h) return DDMC_EINVAL;
  uint8_t buf[12 + 64];
  uLongf clen = sizeof buf - 12;
  if (compress2(buf + 12, &clen, (const Bytef *)"", 0, Z_DEFAULT_COMPRESSION) != Z_OK)
    return DDMC_ENOMEM;
  ddmc_host__put32(buf, (uint32_t)clen);
  ddmc_host__put32(buf + 4, DDMC_HOST_FOURCC('F', 'E', 'A', 'T'));
  ddmc_host__put32(buf + 8, 0);
  return ddmc_host_send_chunk(h, DDMC_HOST_TYPE_ZLIB, buf, 12 + clen, NULL);
}

/* ---- HELO + FEAT ----------------------------------------------------------------------------- */

static int take_feat(ddmc_host_helo *out, const ddmc_host_packet *pkt) {
  if (pkt->error || !pkt->is_ddm || pkt->chunk_type != DDMC_HOST_FOURCC('F', 'E', 'A', 'T'))
    return 0; /* best effort: no features */
  ddmc_host_feat feat;
  int rc = ddmc_host_feat_parse(pkt->chunk, pkt->chunk_len, &feat);
  if (rc == DDMC_ENOMEM) return rc;
  if (rc) return 0;
  out->features = feat.names;
  out->n_features = feat.count;
  out->present |= DDMC_HOST_HELO_FEATURES;
  return 0;
}

static int take_helo(ddmc_host_helo *out, const ddmc_host_packet *pkt) {
  /* The draft's way to decline DDM is a JDWP error reply; Dalvik answers an unhandled type with
   * an empty reply; a FAIL says the handler refused. All mean "not DDM-aware". */
  if (pkt->error || !pkt->is_ddm || pkt->chunk_type == DDMC_HOST_FOURCC('F', 'A', 'I', 'L'))
    return DDMC_ENOTSUP;
  if (pkt->chunk_type != DDMC_HOST_FOURCC('H', 'E', 'L', 'O')) return DDMC_EPROTO;
  char **features = out->features; /* FEAT may have answered first */
  size_t nf = out->n_features;
  unsigned fbit = out->present & DDMC_HOST_HELO_FEATURES;
  int rc = ddmc_host_helo_parse(pkt->chunk, pkt->chunk_len, out);
  out->features = features;
  out->n_features = nf;
  out->present |= fbit;
  return rc;
}

int ddmc_host_hello(ddmc_host *h, ddmc_host_helo *out, int timeout_ms) {
  if (!h || !out) return DDMC_EINVAL;
  memset(out, 0, sizeof *out);
  release_cur(h);
  int64_t deadline = deadline_of(timeout_ms);
  uint8_t ver[4];
  ddmc_host__put32(ver, 1); /* ddmlib's SERVER_PROTOCOL_VERSION */
  uint32_t ids[2];
  int rc = ddmc_host_send_chunk(h, DDMC_HOST_FOURCC('H', 'E', 'L', 'O'), ver, 4, &ids[0]);
  if (rc) return rc;
  rc = ddmc_host_send_chunk(h, DDMC_HOST_FOURCC('F', 'E', 'A', 'T'), NULL, 0, &ids[1]);
  if (rc) {
    abandon(h, ids[0]);
    return rc;
  }
  int helo_rc = 1; /* 1 = not answered yet */
  int feat_done = 0;
  while (helo_rc == 1 || !feat_done) {
    frame f;
    size_t which;
    uint32_t want[2];
    size_t nw = 0;
    if (helo_rc == 1) want[nw++] = ids[0];
    if (!feat_done) want[nw++] = ids[1];
    rc = wait_reply(h, want, nw, deadline, &f, &which);
    if (rc) {
      if (helo_rc == 1) abandon(h, ids[0]);
      if (!feat_done) abandon(h, ids[1]);
      /* FEAT is best effort once HELO has answered: a VM may never reply to it. */
      if (rc == DDMC_ETIMEDOUT && helo_rc != 1) break;
      return rc;
    }
    ddmc_host_packet pkt;
    uint32_t id = want[which];
    rc = decode(h, f, &pkt);
    if (id == ids[0]) {
      helo_rc = rc ? rc : take_helo(out, &pkt);
    } else {
      feat_done = 1;
      if (rc == 0) rc = take_feat(out, &pkt);
      if (rc == DDMC_ENOMEM) helo_rc = rc;
    }
    release_cur(h);
    if (helo_rc != 1 && helo_rc != 0) {
      if (!feat_done) abandon(h, ids[1]);
      return helo_rc;
    }
  }
  return helo_rc;
}
