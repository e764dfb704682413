/* SPDX-License-Identifier: Apache-2.0 */
/* Method calls from the debugger: ClassType.InvokeMethod (3/3), ClassType.NewInstance (3/4, a
 * constructor call), InterfaceType.InvokeMethod (5/1), ObjectReference.InvokeMethod (9/6).
 *
 * JDWP runs the call on a thread that an event left suspended. Here that thread is parked inside
 * its ddmc_post_* call: the handler checks the request, hands the thread a job and returns
 * DDMC__REPLY_DEFERRED; the thread makes the call through bridge.invoke and sends the reply itself
 * through the send path. The JDWP thread never waits for the call, which may run for ever or hit
 * a breakpoint of its own: the thread's count is 0 during the call, so that breakpoint is
 * reported and parks it like any other event, and the call goes on once the debugger resumes it.
 * A debugger that leaves during the call leaves every thread running when it ends. */
#include <string.h>

#include "debugger/state.h"
#include "jdwp/service.h"
#include "send/send.h"

#define DDMC__MAX_ARGS 255 /* a JVM method takes at most 255 argument slots */

/* An invoke's reply is two tagged values (a few bytes, within storage below); the cap only bounds
 * the buffer should it grow. */
#define DDMC__INVOKE_REPLY_MAX ((size_t)1 << 20)
/* The bytes of an InvokeMethod after its thread: class or object, method, DDMC__MAX_ARGS tagged
 * values of at most 9 bytes each, and options all fit (a copy on the stack). */
#define DDMC__INVOKE_REQUEST_MAX 4096

static void run_job(ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job) {
  int all = !(job->options & DDMC_INVOKE_SINGLE_THREADED);
  ddmc_value result;
  memset(&result, 0, sizeof(result));
  result.tag = 'V';
  ddmc_ref exc = 0;
  int rc = job->error;
  if (rc == 0) {
    ddmc__dbg_thr_invoke_begin(d, thread, job, all);
    if (d->bridge.thread_parking) d->bridge.thread_parking(d->vm_data, thread, 0);
    rc = d->bridge.invoke ? d->bridge.invoke(d->vm_data, thread, job->cls, job->method, job->this_obj, job->args, job->nargs,
                                       job->options, &result, &exc)
                       : DDMC_JDWP_NOT_IMPLEMENTED;
    if (d->bridge.thread_parking) d->bridge.thread_parking(d->vm_data, thread, 1);
    /* Suspended again before the reply, as HotSpot does: the debugger that reads it finds the
     * threads as they were. */
    ddmc__dbg_thr_invoke_end(d, thread, job, all);
  }
  uint8_t storage[64];
  ddmc_buf b;
  ddmc__buf_init_on(&b, d->mem, DDMC__INVOKE_REPLY_MAX, storage, sizeof(storage));
  if (rc == 0 && (job->options & DDMC_INVOKE_CONSTRUCT)) {
    /* [tagged newObject][tagged exception]: the new object is null when the constructor threw */
    ddmc_ref o = exc == 0 && result.tag == 'L' ? result.u.l : 0;
    if (exc == 0 && o == 0) rc = DDMC_JDWP_INTERNAL; /* the VM broke the op's contract */
    if (rc == 0 && o != 0) rc = ddmc__dbg_wr_tagged_object(d, &b, o);
    if (rc == 0 && o == 0) {
      ddmc_buf_put_u8(&b, 'L');
      ddmc__dbg_wr_id(&b, 0);
    }
  } else if (rc == 0) {
    rc = ddmc__dbg_wr_value(d, &b, &result, 1);
  }
  if (rc == 0 && exc != 0) rc = ddmc__dbg_wr_tagged_object(d, &b, exc);
  if (rc == 0 && exc == 0) { /* no exception: a null object */
    ddmc_buf_put_u8(&b, 'L');
    ddmc__dbg_wr_id(&b, 0);
  }
  if (rc == 0 && b.err) rc = DDMC_JDWP_OUT_OF_MEMORY;
  ddmc_iov iov = {b.p, b.len};
  if (ddmc__send_reply(d->vm, job->session, job->id, (uint16_t)rc, &iov, rc == 0 ? 1 : 0) == 0)
    ddmc__wake_force(d->vm); /* the debugger waits for this reply: no batching delay */
  ddmc__buf_free(&b);
  ddmc__free(d->mem, job);
}

/* The arguments against the method's descriptor, as HotSpot checks them before a call: a wrong
 * count is ILLEGAL_ARGUMENT, a primitive of another type or a primitive for a reference (or the
 * opposite) TYPE_MISMATCH. Whether an object fits a reference parameter is the VM's to say. */
static int check_args(const char *sig, const ddmc_value *a, uint32_t n) {
  if (sig == NULL || *sig != '(') return 0;
  uint32_t i = 0;
  int mismatch = 0;
  for (const char *p = sig + 1; *p != ')'; i++) {
    if (*p == 0) return 0; /* a malformed descriptor: leave it to the VM */
    char want = *p;
    while (*p == '[') p++;
    if (*p == 'L') {
      p = strchr(p, ';');
      if (p == NULL) return 0;
    }
    p++;
    if (i >= n) continue;
    int ref = want == 'L' || want == '[';
    int is_ref = strchr("L[stgcl", a[i].tag) != NULL;
    if (ref ? !is_ref : a[i].tag != want) mismatch = 1;
  }
  if (i != n) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  return mismatch ? DDMC_JDWP_TYPE_MISMATCH : 0;
}

/* [thread][methodID][int args][tagged value]*[int options] after the class (and object). */
enum { CALL_STATIC, CALL_INSTANCE, CALL_CONSTRUCT };

static int invoke(ddmc__dbg *d, ddmc_reader *in, const ddmc__dbg_cls *c, ddmc_ref this_obj, int kind) {
  uint32_t thread, method;
  int rc = ddmc__dbg_rd_thread(d, in, &thread);
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return rc;
  }
  const ddmc__dbg_cls *decl;
  if ((rc = ddmc__dbg_rd_method(d, in, c, &decl, &method)) != 0) return rc;
  uint32_t nargs;
  if ((rc = ddmc__dbg_rd_count(in, 2, &nargs)) != 0) return rc;
  if (nargs > DDMC__MAX_ARGS) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  ddmc__dbg_job *job = ddmc__calloc(d->mem, 1, sizeof(*job) + (size_t)nargs * sizeof(ddmc_value));
  if (job == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  for (uint32_t i = 0; rc == 0 && i < nargs; i++) rc = ddmc__dbg_rd_value(d, in, 0, &job->args[i]);
  int32_t options = (int32_t)ddmc_read_u32(in);
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  ddmc_method_info mi;
  memset(&mi, 0, sizeof(mi));
  if (rc == 0) rc = DDMC__DBG_CALL(d, method_info, decl->handle, method, &mi);
  /* a static method through an object is allowed; an instance method needs one; a constructor
   * is called only as one, on a new instance of a class (not an interface or an array) */
  int ctor = rc == 0 && mi.name != NULL && strcmp(mi.name, "<init>") == 0;
  if (rc == 0 && kind == CALL_CONSTRUCT) {
    if (c->type_tag != DDMC_TYPE_CLASS)
      rc = DDMC_JDWP_INVALID_CLASS;
    else if (!ctor || (mi.modifiers & DDMC_ACC_STATIC) || decl != c)
      rc = DDMC_JDWP_INVALID_METHODID;
    options = (options & ~DDMC_INVOKE_NONVIRTUAL) | DDMC_INVOKE_CONSTRUCT;
  } else if (rc == 0) {
    if (kind == CALL_STATIC && !(mi.modifiers & DDMC_ACC_STATIC)) rc = DDMC_JDWP_INVALID_METHODID;
    if (ctor) rc = DDMC_JDWP_INVALID_METHODID; /* JDI calls constructors through NewInstance only */
    options &= DDMC_INVOKE_SINGLE_THREADED | DDMC_INVOKE_NONVIRTUAL;
  }
  if (rc == 0) rc = check_args(mi.signature, job->args, nargs);
  if (rc == 0 && !DDMC__DBG_HAS(d, invoke)) rc = DDMC_JDWP_NOT_IMPLEMENTED;
  if (rc != 0) {
    ddmc__free(d->mem, job);
    return rc;
  }
  job->run = run_job;
  job->cls = decl->handle;
  job->method = method;
  job->this_obj = (mi.modifiers & DDMC_ACC_STATIC) ? 0 : this_obj;
  job->options = options;
  job->id = d->cur_id;
  job->session = d->session;
  job->nargs = (int32_t)nargs;
  if ((rc = ddmc__dbg_thr_invoke(d, thread, job)) != 0) {
    ddmc__free(d->mem, job);
    return rc;
  }
  return DDMC__REPLY_DEFERRED;
}

static int ct_invoke(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_rd_class(d, in, &c);
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return rc;
  }
  return invoke(d, in, c, 0, CALL_STATIC);
}

static int ct_new_instance(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_rd_class(d, in, &c);
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return rc;
  }
  return invoke(d, in, c, 0, CALL_CONSTRUCT);
}

static int or_invoke(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  const ddmc__dbg_cls *c, *oc;
  ddmc_class k = 0;
  int rc = ddmc__dbg_rd_object(d, in, &o);
  if (rc == 0 && o == 0) rc = DDMC_JDWP_INVALID_OBJECT;
  if (rc == 0) rc = DDMC__DBG_CALL(d, object_class, o, &k);
  if (rc == 0) rc = ddmc__dbg_cls_get(d, k, &oc);
  /* [thread] comes before the class: read both, then check the pair */
  uint64_t thread_id = ddmc_read_u64(in);
  if (rc == 0)
    rc = ddmc__dbg_rd_class(d, in, &c);
  else
    ddmc_read_u64(in);
  if (rc == 0 && !ddmc__dbg_is_assignable(d, oc->handle, c->handle)) rc = DDMC_JDWP_INVALID_CLASS;
  if (rc != 0) {
    ddmc_read_bytes(in, ddmc_reader_left(in));
    return in->err ? DDMC_JDWP_INVALID_LENGTH : rc;
  }
  /* invoke() reads [thread] first: put it back in front of the rest */
  uint8_t buf[8 + DDMC__INVOKE_REQUEST_MAX];
  size_t rest = ddmc_reader_left(in);
  if (rest > sizeof(buf) - 8) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(thread_id >> (56 - 8 * i));
  memcpy(buf + 8, ddmc_read_bytes(in, rest), rest);
  ddmc_reader r2;
  ddmc_reader_init(&r2, buf, 8 + rest);
  rc = invoke(d, &r2, c, o, CALL_INSTANCE);
  if (r2.err) return DDMC_JDWP_INVALID_LENGTH;
  return rc;
}

const ddmc__dbg_cmd ddmc__dbg_cmds_invoke[] = {
    {3, 3, ct_invoke, "ClassType.InvokeMethod", NULL},
    {3, 4, ct_new_instance, "ClassType.NewInstance", NULL},
    {5, 1, ct_invoke, "InterfaceType.InvokeMethod", NULL},
    {9, 6, or_invoke, "ObjectReference.InvokeMethod", NULL},
    {0, 0, NULL, NULL, NULL},
};
