/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc info: the VM's identity (HELO, FEAT, APNM, WAIT). */
#include "cli.h"

#include <stdio.h>

static int info_run(sess *s) {
  /* A WAIT goes out right after the VM's first DDM packet, and an APNM may follow late: listen a
   * little before reporting. */
  sess_pump(s, 200, NULL);
  if (s->o->json) {
    jw w;
    cli_json_begin(s, &w);
    jw_kstr(&w, "debugger", s->waiting ? "waiting" : "not-waiting");
    return cli_json_finish(s, &w);
  }
  const ddmc_host_helo *h = &s->helo;
  const char *app = s->apnm_seen ? s->apnm.name : h->app_name;
  printf("%-18s %u\n", "pid", (unsigned)h->pid);
  printf("%-18s %s\n", "vm", sess_tx(h->vm_ident));
  printf("%-18s %s\n", "app name", app[0] ? sess_tx(app) : "(none)");
  if (s->apnm_seen && s->apnm.has_user_id)
    printf("%-18s %d\n", "user id", (int)s->apnm.user_id);
  else if (h->present & DDMC_HOST_HELO_USER_ID)
    printf("%-18s %d\n", "user id", (int)h->user_id);
  const char *pkg = s->apnm_seen && s->apnm.pkg_name ? s->apnm.pkg_name : h->pkg_name;
  if (pkg && pkg[0]) printf("%-18s %s\n", "package", sess_tx(pkg));
  if (h->abi) printf("%-18s %s\n", "abi", sess_tx(h->abi));
  if (h->jvm_flags) printf("%-18s %s\n", "flags", sess_tx(h->jvm_flags));
  if (h->present & DDMC_HOST_HELO_NATIVE_DEBUGGABLE)
    printf("%-18s %s\n", "native debuggable", h->native_debuggable ? "yes" : "no");
  printf("%-18s ", "features");
  if (!(h->present & DDMC_HOST_HELO_FEATURES) || h->n_features == 0) {
    printf("(none)\n");
  } else {
    for (size_t i = 0; i < h->n_features; i++) printf("%s%s", i ? ", " : "", sess_tx(h->features[i]));
    putchar('\n');
  }
  printf("%-18s %s\n", "debugger", s->waiting ? "waiting for a debugger (WAIT)" : "not waiting");
  return cli_finish_text(s);
}

static int info_main(opts *o, int argc, char **argv) {
  if (argc > 0) cli_usage_error("this command takes no arguments (got '%s')", argv[0]);
  sess s;
  sess_open(&s, o);
  int rc = info_run(&s);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_info = {
    .name = "info",
    .summary = "  info                   pid, VM, app name, user id, ABI, flags, features, debugger status\n",
    .help =
        "usage: ddmc [OPTIONS] info\n"
        "\n"
        "The VM's identity (HELO, FEAT, APNM, WAIT): pid, VM, app name, user id, package, ABI, JVM flags,\n"
        "native debuggability, features, and whether it waits for a debugger.\n"
        "\n"
        "Options: none.\n",
    .run = info_main,
};
