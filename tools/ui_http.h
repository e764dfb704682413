/* SPDX-License-Identifier: Apache-2.0 */
/* `ddmc ui`'s web server, on libmicrohttpd: the page and its assets (files of one directory),
 * the snapshot (/api/state), its live stream (/api/events, server-sent events) and the VM
 * operations (POST /api/op/NAME). Listens on 127.0.0.1 only, on a port the kernel picks; every
 * request must carry the token (?token=... or the X-Ddmc-Token header), compared in constant
 * time, and a Host header naming this server (127.0.0.1:PORT or localhost:PORT: a page of
 * another site that rebinds a name to 127.0.0.1 is refused); anything else gets 403.
 *
 * Bounds: UI_HTTP_MAX_CONNECTIONS connections at a time (one thread each), UI_HTTP_MAX_STREAMS
 * of them live streams, request bodies refused, URLs over 1 KiB refused by name.
 *
 * Threads: libmicrohttpd's, one per connection; they call ui_vm_snapshot/ui_vm_call. */
#ifndef DDMC_TOOLS_UI_HTTP_H
#define DDMC_TOOLS_UI_HTTP_H

#include <stdint.h>

#include "ui_vm.h"

#define UI_HTTP_MAX_CONNECTIONS 32
#define UI_HTTP_MAX_STREAMS 8
#define UI_HTTP_TOKEN_HEX 48 /* 24 random bytes */

typedef struct ui_http ui_http;

/* Starts serving web_dir's files and v. token: UI_HTTP_TOKEN_HEX lowercase hex digits (copied).
 * port 0 lets the kernel choose; *bound receives the port. Returns NULL with a message in err. */
ui_http *ui_http_start(ui_vm *v, const char *web_dir, const char *token, uint16_t port, uint16_t *bound, char *err,
                       size_t errlen);
/* Stops after ui_vm_shutdown(v) (which ends the live streams), waits for the connections. */
void ui_http_stop(ui_http *s);

/* A fresh token from getrandom(2) into out (UI_HTTP_TOKEN_HEX + 1 bytes). Returns 0 or -1. */
int ui_http_new_token(char *out);

#endif
