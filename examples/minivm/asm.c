/* SPDX-License-Identifier: Apache-2.0 */
/* The .mvm assembler and linker: text in, linked classes in the VM out.
 *
 * One pass over the lines builds classes, fields and methods directly in tracked native memory
 * (so class metadata shows up in the native heap), recording every symbolic operand (class, field,
 * method, label) as a fixup. Labels resolve at ".end method"; classes, fields and methods at the
 * end of the file, so a program may use a name before it is declared. The first error stops the
 * assembly and is reported as "file:line: message"; nothing of a failed load stays in the VM. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct {
  const char *name, *sig;
} op_table[] = {
#define MVM_OP(e, s, g) {s, g},
#include "ops.def"
#undef MVM_OP
};

#define PREG 0x8000u       /* register operand written as pN: rebased at ".end method" */
#define MAX_TOKENS 16
#define MAX_REGS 1024

typedef struct fixup {
  mvm_method *m;           /* NULL for a type check outside a method */
  uint32_t insn;
  char *sym;
  int line;
  char kind;               /* c f m L; t: class named in a type (must exist); s: a .super (insn is the
                              class's index in asm_ctx.classes); x: a .catch class, and S E H its
                              start, end and handler labels (insn is the catch's index) */
} fixup;

typedef struct label {
  char *name;
  uint32_t insn;
} label;

typedef struct asm_ctx {
  mvm_vm *vm;
  const char *file;
  char *err;
  size_t errlen;
  int failed;
  int line;
  char *source;            /* applies to classes opened after it */
  mvm_class **classes;
  uint32_t nclasses, cap_classes;
  mvm_class *cls;
  mvm_method *meth;
  uint32_t cap_code, cap_locals;
  int has_sig;             /* the open method had .signature */
  int32_t cur_line;        /* last .line, or -1: use the .mvm line */
  int *alines;             /* .mvm line of each instruction of the open method */
  uint32_t cap_alines;
  int *catch_lines;        /* .mvm line of each .catch of the open method */
  uint32_t cap_catch_lines;
  label *labels;
  uint32_t nlabels, cap_labels;
  fixup *lfix, *gfix;      /* label fixups of the open method; global fixups */
  uint32_t nlfix, cap_lfix, ngfix, cap_gfix;
  char *scratch;           /* token text of the current line */
} asm_ctx;

typedef struct tok {
  const char *s;
  int str;                 /* was a quoted string */
} tok;

static int fail(asm_ctx *a, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_fixup(asm_ctx *a, int global, char kind, const char *sym);
static int valid_name(const char *s);
static int fail(asm_ctx *a, int line, const char *fmt, ...) {
  if (!a->failed && a->errlen) {
    int n = snprintf(a->err, a->errlen, "%s:%d: ", a->file, line);
    if (n >= 0 && (size_t)n < a->errlen) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(a->err + n, a->errlen - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  a->failed = 1;
  return -1;
}

/* Grows *arr (tracked memory) to hold at least need elements of size sz. */
static int grow(mvm_vm *vm, void **arr, uint32_t *cap, uint32_t need, size_t sz) {
  if (need <= *cap) return 0;
  uint32_t ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *p = mvm_nalloc(vm, (size_t)ncap * sz);
  if (!p) return -1;
  if (*arr) {
    memcpy(p, *arr, (size_t)*cap * sz);
    mvm_nfree(vm, *arr);
  }
  *arr = p;
  *cap = ncap;
  return 0;
}

static int hex_digits(const char *p, int n, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < n; i++) {
    /* Stops at the first non-digit, so a string ending early is never read past its NUL. */
    if (!isxdigit((unsigned char)p[i])) return -1;
    int c = tolower((unsigned char)p[i]);
    v = v << 4 | (uint32_t)(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  *out = v;
  return 0;
}

static char *put_utf8(char *out, uint32_t cp) {
  if (cp < 0x80) {
    *out++ = (char)cp;
  } else if (cp < 0x800) {
    *out++ = (char)(0xc0 | cp >> 6);
    *out++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *out++ = (char)(0xe0 | cp >> 12);
    *out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *out++ = (char)(0x80 | (cp & 0x3f));
  }
  return out;
}

/* The escape after a backslash at *pp, appended at *outp. \xHH is one raw byte (so a test can
 * write invalid UTF-8), \uHHHH a BMP code point as UTF-8. Strings are C strings inside the VM,
 * hence no NUL; a lone surrogate has no UTF-8 form. Each escape is at least as long as what it
 * writes, so the scratch line buffer cannot overflow. */
static int unescape(asm_ctx *a, const char **pp, char **outp) {
  const char *p = *pp;
  char c = *p++;
  uint32_t v;
  switch (c) {
    case 'n': *(*outp)++ = '\n'; break;
    case 't': *(*outp)++ = '\t'; break;
    case 'r': *(*outp)++ = '\r'; break;
    case '"': case '\\': *(*outp)++ = c; break;
    case 'x':
      if (hex_digits(p, 2, &v)) return fail(a, a->line, "'\\x' needs two hex digits in string");
      if (v == 0) return fail(a, a->line, "a string cannot hold NUL ('\\x00')");
      *(*outp)++ = (char)v;
      p += 2;
      break;
    case 'u':
      if (hex_digits(p, 4, &v)) return fail(a, a->line, "'\\u' needs four hex digits in string");
      if (v == 0) return fail(a, a->line, "a string cannot hold NUL ('\\u0000')");
      if (v >= 0xd800 && v <= 0xdfff) return fail(a, a->line, "'\\u%.4s' is a lone surrogate", p);
      *outp = put_utf8(*outp, v);
      p += 4;
      break;
    default: return fail(a, a->line, "unknown escape '\\%c' in string", c ? c : '0');
  }
  *pp = p;
  return 0;
}

/* Splits a line into words, quoted strings (unescaped) and single-character braces.
 * Commas and blanks separate; '#' outside a string starts a comment. */
static int tokenize(asm_ctx *a, const char *line, tok *t, int *count) {
  char *out = a->scratch;
  int n = 0;
  const char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\r') p++;
    if (!*p || *p == '#') break;
    if (n == MAX_TOKENS) return fail(a, a->line, "too many operands");
    t[n].s = out;
    t[n].str = 0;
    if (*p == '"') {
      t[n].str = 1;
      p++;
      while (*p && *p != '"') {
        if (*p != '\\') *out++ = *p++;
        else if (p++, unescape(a, &p, &out)) return -1;
      }
      if (*p != '"') return fail(a, a->line, "unterminated string");
      p++;
    } else if (*p == '{' || *p == '}') {
      *out++ = *p++;
    } else {
      while (*p && !strchr(" \t,\r#{}\"", *p)) *out++ = *p++;
    }
    *out++ = '\0';
    n++;
  }
  *count = n;
  return 0;
}

static int parse_int(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (errno || end == s || *end) return -1;
  *out = v;
  return 0;
}

static int parse_reg(asm_ctx *a, const char *s, uint16_t *out) {
  int64_t n;
  if ((s[0] != 'v' && s[0] != 'p') || !isdigit((unsigned char)s[1]) || parse_int(s + 1, &n) ||
      n >= MAX_REGS)
    return fail(a, a->line, "expected a register (v0..v%d or p0..), got '%s'", MAX_REGS - 1, s);
  *out = (uint16_t)(n | (s[0] == 'p' ? PREG : 0));
  return 0;
}

/* ---- Types. A .mvm type is a primitive name, a class name (the built-ins as Java names them
 * to a debugger), or either followed by one "[]" per dimension. */
static const struct {
  const char *name, *sig;
} builtin_types[] = {
    {"boolean", "Z"}, {"byte", "B"}, {"char", "C"}, {"short", "S"}, {"int", "I"}, {"float", "F"},
    {"long", "J"}, {"double", "D"}, {"void", "V"},
    {"object", "Ljava/lang/Object;"}, {"Object", "Ljava/lang/Object;"}, {"String", "Ljava/lang/String;"},
    {"Thread", "Ljava/lang/Thread;"}, {"ThreadGroup", "Ljava/lang/ThreadGroup;"}, {"Class", "Ljava/lang/Class;"},
    {"Throwable", "Ljava/lang/Throwable;"}, {"Exception", "Ljava/lang/Exception;"},
    {"RuntimeException", "Ljava/lang/RuntimeException;"}, {"ArithmeticException", "Ljava/lang/ArithmeticException;"},
    {"NullPointerException", "Ljava/lang/NullPointerException;"},
    {"ArrayIndexOutOfBoundsException", "Ljava/lang/ArrayIndexOutOfBoundsException;"},
    {"ClassCastException", "Ljava/lang/ClassCastException;"},
    {"InterruptedException", "Ljava/lang/InterruptedException;"},
};

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

int mvm_type_sig(const char *name, char *out, size_t cap) {
  size_t len = strlen(name), dims = 0;
  while (len >= 2 && name[len - 2] == '[' && name[len - 1] == ']') {
    len -= 2;
    dims++;
  }
  if (!len || dims > 32) return -1;
  for (size_t i = 0; i < len; i++)
    if (!ident_char(name[i])) return -1;
  if (isdigit((unsigned char)name[0])) return -1;
  const char *base = NULL;
  for (size_t i = 0; i < sizeof builtin_types / sizeof builtin_types[0]; i++)
    if (strlen(builtin_types[i].name) == len && !strncmp(name, builtin_types[i].name, len)) base = builtin_types[i].sig;
  if (base && base[0] == 'V' && dims) return -1;   /* void[] */
  int n = base ? snprintf(out, cap, "%.*s%s", (int)dims, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", base) : -1;
  if (!base) n = snprintf(out, cap, "%.*sL%.*s;", (int)dims, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", (int)len, name);
  return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The element letter arrays of this type store: Z B C S I F J D, or L for any reference. */
static char elem_of(const char *sig) { return sig[1] == 'L' || sig[1] == '[' ? 'L' : sig[1]; }

/* Deferred check that the class a type names exists (names may be declared later). */
static int check_type_class(asm_ctx *a, const char *sig) {
  while (*sig == '[') sig++;
  if (*sig != 'L' || !strncmp(sig, "Ljava/lang/", 11)) return 0;
  char name[256];
  snprintf(name, sizeof name, "%.*s", (int)(strlen(sig) - 2), sig + 1);
  return add_fixup(a, 1, 't', name);
}

/* Parses a type name into a tracked copy of its signature (NULL after a reported error). */
static char *parse_type(asm_ctx *a, const char *name, int void_ok) {
  char sig[300];
  if (mvm_type_sig(name, sig, sizeof sig))
    return fail(a, a->line, "bad type '%s' (a primitive, a class name, or either with [])", name), NULL;
  if (sig[0] == 'V' && !void_ok) return fail(a, a->line, "'void' is only a return type"), NULL;
  if (check_type_class(a, sig)) return NULL;
  char *p = mvm_nstrdup(a->vm, sig);
  if (!p) fail(a, a->line, "out of memory");
  return p;
}

static int add_fixup(asm_ctx *a, int global, char kind, const char *sym) {
  fixup **arr = global ? &a->gfix : &a->lfix;
  uint32_t *n = global ? &a->ngfix : &a->nlfix, *cap = global ? &a->cap_gfix : &a->cap_lfix;
  if (grow(a->vm, (void **)arr, cap, *n + 1, sizeof(fixup))) return fail(a, a->line, "out of memory");
  fixup *f = &(*arr)[(*n)++];
  f->m = a->meth;
  f->insn = a->meth ? a->meth->ncode : 0;
  f->line = a->line;
  f->kind = kind;
  f->sym = mvm_nstrdup(a->vm, sym);
  return f->sym ? 0 : fail(a, a->line, "out of memory");
}

static mvm_class *find_class(asm_ctx *a, const char *name) {
  for (uint32_t i = 0; i < a->nclasses; i++)
    if (!strcmp(a->classes[i]->name, name)) return a->classes[i];
  return mvm_find_class(a->vm, name);
}

static const char *basename_of(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static int open_class(asm_ctx *a, const char *name) {
  if (find_class(a, name)) return fail(a, a->line, "class '%s' already defined", name);
  if (strchr(name, '.')) return fail(a, a->line, "class name '%s' must not contain '.'", name);
  mvm_class *c = mvm_ncalloc(a->vm, 1, sizeof *c);
  if (!c || grow(a->vm, (void **)&a->classes, &a->cap_classes, a->nclasses + 1, sizeof c)) {
    mvm_nfree(a->vm, c);
    return fail(a, a->line, "out of memory");
  }
  a->classes[a->nclasses++] = c;
  c->name = mvm_nstrdup(a->vm, name);
  c->source = mvm_nstrdup(a->vm, a->source ? a->source : basename_of(a->file));
  if (!c->name || !c->source) return fail(a, a->line, "out of memory");
  a->cls = c;
  return 0;
}

static int add_field(asm_ctx *a, const char *name, const char *type, int is_static) {
  mvm_class *c = a->cls;
  char *sig = parse_type(a, type, 0);
  if (!sig) return -1;
  for (uint32_t i = 0; i < c->nfields; i++)
    if (!strcmp(c->fields[i].name, name))
      return mvm_nfree(a->vm, sig), fail(a, a->line, "field '%s' already defined in %s", name, c->name);
  uint32_t cap = c->nfields;
  if (grow(a->vm, (void **)&c->fields, &cap, c->nfields + 1, sizeof(mvm_field)))
    return mvm_nfree(a->vm, sig), fail(a, a->line, "out of memory");
  /* grow() doubles from the exact count, so later calls reallocate; fields stay few */
  mvm_field *f = &c->fields[c->nfields++];
  f->name = mvm_nstrdup(a->vm, name);
  f->sig = sig;
  f->type = sig[0] == '[' ? 'L' : sig[0];
  f->is_static = is_static;
  f->owner = c;
  atomic_init(&f->watch, 0); /* grow() does not zero */
  f->vm_internal = 0;        /* a program's fields are the program's */
  f->slot = is_static ? c->nstatic++ : c->ninstance++;
  return f->name ? 0 : fail(a, a->line, "out of memory");
}

static int open_method(asm_ctx *a, const char *name) {
  mvm_class *c = a->cls;
  if (!strcmp(name, "<init>"))
    return fail(a, a->line, "<init> is reserved: every class gets the default constructor <init>()V");
  for (uint32_t i = 0; i < c->nmethods; i++)
    if (!strcmp(c->methods[i]->name, name))
      return fail(a, a->line, "method '%s' already defined in %s", name, c->name);
  uint32_t cap = c->nmethods;
  mvm_method *m = mvm_ncalloc(a->vm, 1, sizeof *m);
  if (!m || grow(a->vm, (void **)&c->methods, &cap, c->nmethods + 1, sizeof m)) {
    mvm_nfree(a->vm, m);
    return fail(a, a->line, "out of memory");
  }
  m->index = c->nmethods;
  c->methods[c->nmethods++] = m;
  m->name = mvm_nstrdup(a->vm, name);
  m->owner = c;
  if (!m->name) return fail(a, a->line, "out of memory");
  a->meth = m;
  a->cap_code = a->cap_locals = 0;
  a->has_sig = 0;
  a->cur_line = -1;
  a->nlabels = a->nlfix = 0;
  return 0;
}

/* Calls fn on each register operand of insn, as the signature lays them out. */
static int each_reg(asm_ctx *a, mvm_insn *in, int line,
                    int (*fn)(asm_ctx *, const mvm_method *, uint16_t *, int)) {
  const char *sig = op_table[in->op].sig;
  uint16_t *slots[3] = {&in->a, &in->b, &in->c};
  int k = 0, present = in->nargs;
  for (; *sig; sig++) {
    if (*sig == 'r') {
      if (k >= present && in->op != OP_INVOKE) break;
      if (fn(a, a->meth, slots[k++], line)) return -1;
    } else if (*sig == '{') {
      for (int i = 0; i < in->nargs; i++)
        if (fn(a, a->meth, &in->args[i], line)) return -1;
    }
  }
  return 0;
}

static int rebase_reg(asm_ctx *a, const mvm_method *m, uint16_t *r, int line) {
  if (*r & PREG) {
    uint16_t p = *r & ~PREG;
    if (p >= m->nparams) return fail(a, line, "p%u out of range: method has %u parameters", p, m->nparams);
    *r = (uint16_t)(m->nregs - m->nparams + p);
  } else if (*r >= m->nregs) {
    return fail(a, line, "v%u out of range: method has %u registers", *r, m->nregs);
  }
  return 0;
}

/* The signature of a method without .signature: every parameter int (main's one parameter
 * String[]), returning int if any "return vA" is in it, else void. */
static int default_signature(asm_ctx *a, mvm_method *m) {
  int returns_value = 0;
  for (uint32_t i = 0; i < m->ncode; i++) returns_value |= m->code[i].op == OP_RETURN;
  size_t cap = (size_t)m->nparams + 24;
  if (!(m->sig = mvm_nalloc(a->vm, cap))) return fail(a, a->line, "out of memory");
  char *p = m->sig;
  *p++ = '(';
  if (!strcmp(m->name, "main") && m->nparams == 1) p += sprintf(p, "[Ljava/lang/String;");
  else for (uint32_t i = 0; i < m->nparams; i++) *p++ = 'I';
  sprintf(p, ")%c", returns_value ? 'I' : 'V');
  m->ret = returns_value ? 'I' : 'V';
  return 0;
}

/* Each try range holds at least one instruction; move-exception is only a handler's first. */
static int check_catches(asm_ctx *a, mvm_method *m) {
  for (uint32_t i = 0; i < m->ncatches; i++)
    if (m->catches[i].start >= m->catches[i].end)
      return fail(a, a->catch_lines[i], "empty try range: the start label must come before the end label");
  for (uint32_t pc = 0; pc < m->ncode; pc++) {
    if (m->code[pc].op != OP_MOVE_EXCEPTION) continue;
    uint32_t i = 0;
    while (i < m->ncatches && m->catches[i].handler != pc) i++;
    if (i == m->ncatches)
      return fail(a, a->alines[pc], "move-exception must be the first instruction of a handler (.catch / .catchall)");
  }
  return 0;
}

/* .catch CLASS {:start .. :end} :handler, .catchall {:start .. :end} :handler (smali's forms):
 * the range is from the instruction at :start up to, not including, the one at :end. */
static int parse_catch(asm_ctx *a, tok *t, int n) {
  int all = !strcmp(t[0].s, ".catchall"), k = all ? 1 : 2;
  if (n != k + 6 || strcmp(t[k].s, "{") || strcmp(t[k + 2].s, "..") || strcmp(t[k + 4].s, "}"))
    return fail(a, a->line, all ? ".catchall expects {:start .. :end} :handler"
                                : ".catch expects CLASS {:start .. :end} :handler");
  for (int i = k + 1; i <= k + 5; i += 2)
    if (t[i].s[0] != ':' || !t[i].s[1] || t[i].str)
      return fail(a, a->line, "%s: expected a :label, got '%s'", t[0].s, t[i].s);
  if (!all && (t[1].str || !valid_name(t[1].s)))
    return fail(a, a->line, ".catch: bad class name '%s'", t[1].s);
  mvm_method *m = a->meth;
  uint32_t cap = m->ncatches;
  if (grow(a->vm, (void **)&m->catches, &cap, m->ncatches + 1, sizeof(mvm_catch)) ||
      grow(a->vm, (void **)&a->catch_lines, &a->cap_catch_lines, m->ncatches + 1, sizeof(int)))
    return fail(a, a->line, "out of memory");
  uint32_t idx = m->ncatches++;
  m->catches[idx] = (mvm_catch){0, 0, 0, NULL};
  a->catch_lines[idx] = a->line;
  static const char kinds[3] = {'S', 'E', 'H'};
  for (int i = 0; i < 3; i++) {
    if (add_fixup(a, 0, kinds[i], t[k + 1 + 2 * i].s + 1)) return -1;
    a->lfix[a->nlfix - 1].insn = idx;
  }
  if (!all) {
    if (add_fixup(a, 1, 'x', t[1].s)) return -1;
    a->gfix[a->ngfix - 1].insn = idx;
  }
  return 0;
}

static int close_method(asm_ctx *a, int line) {
  mvm_method *m = a->meth;
  if (m->nparams > m->nregs)
    return fail(a, line, "method %s: .params %u exceeds .registers %u", m->name, m->nparams, m->nregs);
  if (!m->ncode) return fail(a, line, "method %s has no instructions", m->name);
  int last = m->code[m->ncode - 1].op;
  if (last != OP_RETURN && last != OP_RETURN_VOID && last != OP_GOTO && last != OP_EXIT && last != OP_THROW)
    return fail(a, line, "method %s can fall off its end (last instruction must be return, goto, throw or exit)",
                m->name);
  if (!a->has_sig && default_signature(a, m)) return -1;
  for (uint32_t i = 0; a->has_sig && i < m->ncode; i++) {
    int op = m->code[i].op;
    if (op == OP_RETURN && m->ret == 'V')
      return fail(a, a->alines[i], "method %s is declared void (%s) but returns a value", m->name, m->sig);
    if (op == OP_RETURN_VOID && m->ret != 'V')
      return fail(a, a->alines[i], "method %s is declared %s but has return-void", m->name, m->sig);
  }
  for (uint32_t i = 0; i < m->nlocals; i++) {
    mvm_local *l = &m->locals[i];
    if (l->end == UINT32_MAX) l->end = m->ncode;
    /* .local names registers like instructions do: pN is rebased, vN checked. */
    if (rebase_reg(a, m, &l->reg, l->line)) return -1;
  }
  for (uint32_t i = 0; i < a->nlfix; i++) {
    fixup *f = &a->lfix[i];
    uint32_t j = 0;
    while (j < a->nlabels && strcmp(a->labels[j].name, f->sym)) j++;
    if (j == a->nlabels) return fail(a, f->line, "undefined label '%s'", f->sym);
    uint32_t at = a->labels[j].insn;
    switch (f->kind) {
      case 'S': m->catches[f->insn].start = at; break;
      case 'E': m->catches[f->insn].end = at; break;
      case 'H':
        if (at >= m->ncode) return fail(a, f->line, "handler label ':%s' is past the last instruction", f->sym);
        m->catches[f->insn].handler = at;
        break;
      default: m->code[f->insn].lit = at; break;
    }
  }
  if (check_catches(a, m)) return -1;
  /* Registers are checked here, where .registers and .params are final. */
  for (uint32_t i = 0; i < m->ncode; i++)
    if (each_reg(a, &m->code[i], a->alines[i], rebase_reg)) return -1;
  for (uint32_t i = 0; i < a->nlabels; i++) mvm_nfree(a->vm, a->labels[i].name);
  for (uint32_t i = 0; i < a->nlfix; i++) mvm_nfree(a->vm, a->lfix[i].sym);
  a->nlabels = a->nlfix = 0;
  a->meth = NULL;
  return 0;
}

/* const's literal: an integer, a character 'A' (also '\n' '\t' '\\' '\''), or a floating
 * literal stored as IEEE bits: 2.5 or 2.5d a double, 2.5f a float (low 32 bits). */
static int parse_literal(const char *s, int64_t *out) {
  if (!parse_int(s, out)) return 0;
  size_t len = strlen(s);
  if (s[0] == '\'') {
    if (len == 3 && s[2] == '\'' && s[1] != '\\') {
      *out = (unsigned char)s[1];
      return 0;
    }
    if (len == 4 && s[1] == '\\' && s[3] == '\'' && strchr("nt\\'", s[2])) {
      *out = s[2] == 'n' ? '\n' : s[2] == 't' ? '\t' : s[2];
      return 0;
    }
    return -1;
  }
  if (!strpbrk(s, ".eE") && (len < 2 || !strchr("fFdD", s[len - 1]))) return -1;
  if (strpbrk(s, "xX")) return -1;   /* no hex floats */
  char *end;
  errno = 0;
  double d = strtod(s, &end);
  int is_float = *end == 'f' || *end == 'F';
  if (*end && !(strchr("fFdD", *end) && end[1] == '\0')) return -1;
  if (end == s || errno) return -1;
  if (is_float) {
    float f = (float)d;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    *out = bits;
  } else {
    memcpy(out, &d, sizeof d);
  }
  return 0;
}

static int parse_insn(asm_ctx *a, tok *t, int n) {
  uint32_t op = 0;
  while (op < MVM_OP_COUNT && strcmp(op_table[op].name, t[0].s)) op++;
  if (op == MVM_OP_COUNT) return fail(a, a->line, "unknown instruction '%s'", t[0].s);
  mvm_method *m = a->meth;
  if (grow(a->vm, (void **)&m->code, &a->cap_code, m->ncode + 1, sizeof(mvm_insn)) ||
      grow(a->vm, (void **)&a->alines, &a->cap_alines, m->ncode + 1, sizeof(int)))
    return fail(a, a->line, "out of memory");
  a->alines[m->ncode] = a->line;
  mvm_insn *in = &m->code[m->ncode];
  memset(in, 0, sizeof *in);
  in->op = (uint8_t)op;
  /* Without .line, an instruction maps to its own line in the .mvm file. */
  in->line = a->cur_line >= 0 ? a->cur_line : a->line;
  uint16_t *regs[3] = {&in->a, &in->b, &in->c};
  int k = 0, i = 1, optional = 0;
  for (const char *sig = op_table[op].sig; *sig; sig++) {
    if (*sig == '?') {
      optional = 1;
      continue;
    }
    if (i >= n) {
      if (optional) break;
      return fail(a, a->line, "%s: missing operand (expects %s)", t[0].s, op_table[op].sig);
    }
    const char *s = t[i].s;
    if (t[i].str && *sig != 's') return fail(a, a->line, "%s: unexpected string \"%s\"", t[0].s, s);
    switch (*sig) {
      case 'r':
        if (parse_reg(a, s, regs[k++])) return -1;
        in->nargs = (uint8_t)k;
        break;
      case 'i':
        if (op == OP_CONST ? parse_literal(s, &in->lit) : parse_int(s, &in->lit))
          return fail(a, a->line, "%s: bad %s '%s'", t[0].s, op == OP_CONST ? "literal" : "integer", s);
        break;
      case 's':
        if (!t[i].str) return fail(a, a->line, "%s: expected a string literal, got '%s'", t[0].s, s);
        if (!(in->ptr = mvm_nstrdup(a->vm, s))) return fail(a, a->line, "out of memory");
        break;
      case 'c': case 'f': case 'm':
        if (*sig != 'c' && !strchr(s, '.'))
          return fail(a, a->line, "%s: expected Class.%s, got '%s'", t[0].s,
                      *sig == 'f' ? "field" : "method", s);
        if (add_fixup(a, 1, *sig, s)) return -1;
        break;
      case 'L':
        if (s[0] != ':' || !s[1]) return fail(a, a->line, "%s: expected a :label, got '%s'", t[0].s, s);
        if (add_fixup(a, 0, 'L', s + 1)) return -1;
        break;
      case 't': {
        /* The element type: "int" makes an int[], "String" a String[], "int[]" an int[][]. */
        char esig[300], asig[301];
        if (mvm_type_sig(s, esig, sizeof esig) || esig[0] == 'V')
          return fail(a, a->line, "%s: bad element type '%s'", t[0].s, s);
        snprintf(asig, sizeof asig, "[%s", esig);
        int k = mvm_intern_atype(a->vm, asig);
        if (k < 0 || k >= UINT16_MAX) return fail(a, a->line, "out of memory");
        if (check_type_class(a, asig)) return -1;
        in->lit = elem_of(asig);
        in->args[0] = (uint16_t)(k + 1);
        break;
      }
      case '{':
        if (strcmp(s, "{")) return fail(a, a->line, "%s: expected '{'", t[0].s);
        for (i++; i < n && strcmp(t[i].s, "}"); i++) {
          if (in->nargs == 5) return fail(a, a->line, "%s: more than 5 arguments", t[0].s);
          if (parse_reg(a, t[i].s, &in->args[in->nargs++])) return -1;
        }
        if (i >= n) return fail(a, a->line, "%s: missing '}'", t[0].s);
        break;
    }
    i++;
  }
  if (i < n) return fail(a, a->line, "%s: unexpected operand '%s'", t[0].s, t[i].s);
  m->ncode++;
  return 0;
}

/* .signature (TYPE, ...) RETURN: the raw text after the directive (commas matter here). */
static int parse_signature(asm_ctx *a, const char *p) {
  mvm_method *m = a->meth;
  static const char *usage = ".signature expects (TYPE, ...) RETURN-TYPE, e.g. .signature (int, String[]) void";
  char sig[1024] = "(";
  size_t len = 1;
  uint32_t nparams = 0;
  while (*p == ' ' || *p == '\t') p++;
  if (*p++ != '(') return fail(a, a->line, "%s", usage);
  for (int first = 1;; first = 0) {
    while (*p == ' ' || *p == '\t') p++;
    if (*p == ')' && first) break;
    char name[256];
    size_t k = 0;
    while (*p && !strchr(" \t,)#", *p) && k < sizeof name - 1) name[k++] = *p++;
    name[k] = '\0';
    while (*p == ' ' || *p == '\t') p++;
    if (!k || (*p != ',' && *p != ')')) return fail(a, a->line, "%s", usage);
    char *ps = parse_type(a, name, 0);
    if (!ps) return -1;
    int fits = len + strlen(ps) < sizeof sig - 8;
    if (fits) len += (size_t)sprintf(sig + len, "%s", ps);
    mvm_nfree(a->vm, ps);
    if (!fits) return fail(a, a->line, ".signature too long");
    nparams++;
    if (*p == ')') break;
    p++;
  }
  p++;
  while (*p == ' ' || *p == '\t') p++;
  char name[256];
  size_t k = 0;
  while (*p && !strchr(" \t#", *p) && k < sizeof name - 1) name[k++] = *p++;
  name[k] = '\0';
  while (*p == ' ' || *p == '\t' || *p == '\r') p++;
  if (!k || (*p && *p != '#')) return fail(a, a->line, "%s", usage);
  char *rs = parse_type(a, name, 1);
  if (!rs) return -1;
  sig[len++] = ')';
  snprintf(sig + len, sizeof sig - len, "%s", rs);
  m->ret = rs[0];
  mvm_nfree(a->vm, rs);
  if (m->nparams && m->nparams != nparams)
    return fail(a, a->line, ".signature declares %u parameter%s but .params says %u", nparams,
                nparams == 1 ? "" : "s", m->nparams);
  if (nparams > MAX_REGS) return fail(a, a->line, ".signature has too many parameters");
  if (!(m->sig = mvm_nstrdup(a->vm, sig))) return fail(a, a->line, "out of memory");
  m->nparams = (uint16_t)nparams;
  a->has_sig = 1;
  return 0;
}

static int valid_name(const char *s) {
  if (!*s || isdigit((unsigned char)*s)) return 0;
  for (; *s; s++)
    if (!ident_char(*s)) return 0;
  return 1;
}

/* .local REG NAME TYPE / .end local REG: debug names for registers from the next instruction. */
static int parse_local(asm_ctx *a, tok *t, int n, int end) {
  mvm_method *m = a->meth;
  uint16_t reg;
  if (end ? n != 3 : n != 4)
    return fail(a, a->line, end ? ".end local expects a register" : ".local expects a register, a name and a type");
  if (parse_reg(a, t[end ? 2 : 1].s, &reg)) return -1;
  mvm_local *open_reg = NULL;
  for (uint32_t i = 0; i < m->nlocals; i++)
    if (m->locals[i].end == UINT32_MAX && m->locals[i].reg == reg) open_reg = &m->locals[i];
  if (end) {
    if (!open_reg) return fail(a, a->line, ".end local %s: no local is live in %s", t[2].s, t[2].s);
    open_reg->end = m->ncode;
    return 0;
  }
  const char *name = t[2].s;
  if (!valid_name(name)) return fail(a, a->line, "bad local name '%s'", name);
  for (uint32_t i = 0; i < m->nlocals; i++)
    if (m->locals[i].end == UINT32_MAX && !strcmp(m->locals[i].name, name) && m->locals[i].reg != reg)
      return fail(a, a->line, "local '%s' is already live in another register", name);
  char *sig = parse_type(a, t[3].s, 0);
  if (!sig) return -1;
  /* A register named again while a local is live in it ends that local here. */
  if (open_reg) open_reg->end = m->ncode;
  if (grow(a->vm, (void **)&m->locals, &a->cap_locals, m->nlocals + 1, sizeof(mvm_local)))
    return mvm_nfree(a->vm, sig), fail(a, a->line, "out of memory");
  mvm_local *l = &m->locals[m->nlocals++];
  *l = (mvm_local){.start = m->ncode, .end = UINT32_MAX, .reg = reg, .name = mvm_nstrdup(a->vm, name), .sig = sig,
                   .line = a->line};
  return l->name ? 0 : fail(a, a->line, "out of memory");
}

static int parse_directive(asm_ctx *a, tok *t, int n, const char *raw) {
  const char *d = t[0].s;
  int64_t v;
  if (!strcmp(d, ".end")) {
    if (n >= 2 && !strcmp(t[1].s, "local")) {
      if (!a->meth) return fail(a, a->line, ".end local outside a method");
      return parse_local(a, t, n, 1);
    }
    if (n == 2 && !strcmp(t[1].s, "method")) {
      if (!a->meth) return fail(a, a->line, ".end method without .method");
      return close_method(a, a->line);
    }
    if (n == 2 && !strcmp(t[1].s, "class")) {
      if (a->meth) return fail(a, a->line, ".end class inside method %s", a->meth->name);
      if (!a->cls) return fail(a, a->line, ".end class without .class");
      a->cls = NULL;
      return 0;
    }
    return fail(a, a->line, "expected '.end method', '.end class' or '.end local REG'");
  }
  if (!strcmp(d, ".source")) {
    if (n != 2 || !t[1].str) return fail(a, a->line, ".source expects a quoted file name");
    if (a->cls) {
      char *s = mvm_nstrdup(a->vm, t[1].s);
      if (!s) return fail(a, a->line, "out of memory");
      mvm_nfree(a->vm, a->cls->source);
      a->cls->source = s;
      return 0;
    }
    mvm_nfree(a->vm, a->source);
    a->source = mvm_nstrdup(a->vm, t[1].s);
    return a->source ? 0 : fail(a, a->line, "out of memory");
  }
  if (!strcmp(d, ".class")) {
    if (a->meth) return fail(a, a->line, ".class inside method %s (missing .end method)", a->meth->name);
    if (n != 2) return fail(a, a->line, ".class expects a name");
    return open_class(a, t[1].s);
  }
  if (!strcmp(d, ".super")) {
    if (!a->cls || a->meth) return fail(a, a->line, ".super must be inside a class, outside methods");
    if (n != 2 || t[1].str || !valid_name(t[1].s)) return fail(a, a->line, ".super expects a class name");
    if (a->cls->super_name) return fail(a, a->line, ".super given twice for class %s", a->cls->name);
    if (!(a->cls->super_name = mvm_nstrdup(a->vm, t[1].s))) return fail(a, a->line, "out of memory");
    if (add_fixup(a, 1, 's', t[1].s)) return -1;
    a->gfix[a->ngfix - 1].insn = a->nclasses - 1;
    return 0;
  }
  if (!strcmp(d, ".catch") || !strcmp(d, ".catchall")) {
    if (!a->meth) return fail(a, a->line, "%s outside a method", d);
    return parse_catch(a, t, n);
  }
  if (!strcmp(d, ".field") || !strcmp(d, ".static")) {
    if (!a->cls || a->meth) return fail(a, a->line, "%s must be inside a class, outside methods", d);
    if (n != 3) return fail(a, a->line, "%s expects a name and a type", d);
    return add_field(a, t[1].s, t[2].s, d[1] == 's');
  }
  if (!strcmp(d, ".method")) {
    if (!a->cls) return fail(a, a->line, ".method outside a class");
    if (a->meth) return fail(a, a->line, ".method inside method %s (missing .end method)", a->meth->name);
    if (n != 2) return fail(a, a->line, ".method expects a name");
    return open_method(a, t[1].s);
  }
  if (strcmp(d, ".registers") && strcmp(d, ".params") && strcmp(d, ".line") && strcmp(d, ".signature") &&
      strcmp(d, ".local"))
    return fail(a, a->line, "unknown directive '%s'", d);
  if (!a->meth) return fail(a, a->line, "%s outside a method", d);
  if (!strcmp(d, ".local")) return parse_local(a, t, n, 0);
  if (!strcmp(d, ".signature")) {
    if (a->has_sig) return fail(a, a->line, ".signature given twice for method %s", a->meth->name);
    if (a->meth->ncode) return fail(a, a->line, ".signature must come before the first instruction");
    return parse_signature(a, strstr(raw, ".signature") + strlen(".signature"));
  }
  if (!strcmp(d, ".registers") || !strcmp(d, ".params")) {
    if (n != 2 || parse_int(t[1].s, &v) || v < 0 || v > MAX_REGS)
      return fail(a, a->line, "%s expects a count from 0 to %d", d, MAX_REGS);
    if (a->meth->ncode) return fail(a, a->line, "%s must come before the first instruction", d);
    if (d[1] == 'r') {
      a->meth->nregs = (uint16_t)v;
    } else {
      if (a->has_sig && v != a->meth->nparams)
        return fail(a, a->line, ".params %d disagrees with .signature %s (%u parameter%s)", (int)v, a->meth->sig,
                    a->meth->nparams, a->meth->nparams == 1 ? "" : "s");
      a->meth->nparams = (uint16_t)v;
    }
    return 0;
  }
  if (n != 2 || parse_int(t[1].s, &v) || v < 0 || v > INT32_MAX)
    return fail(a, a->line, ".line expects a line number");
  a->cur_line = (int32_t)v;
  return 0;
}

static int parse_line(asm_ctx *a, const char *line) {
  tok t[MAX_TOKENS];
  int n = 0;
  if (tokenize(a, line, t, &n)) return -1;
  if (!n) return 0;
  if (t[0].str) return fail(a, a->line, "unexpected string");
  if (t[0].s[0] == '.') return parse_directive(a, t, n, line);
  if (!a->meth) return fail(a, a->line, "instruction '%s' outside a method", t[0].s);
  if (t[0].s[0] == ':') {
    if (n != 1 || !t[0].s[1]) return fail(a, a->line, "a label stands alone on its line");
    for (uint32_t i = 0; i < a->nlabels; i++)
      if (!strcmp(a->labels[i].name, t[0].s + 1)) return fail(a, a->line, "label '%s' defined twice", t[0].s);
    if (grow(a->vm, (void **)&a->labels, &a->cap_labels, a->nlabels + 1, sizeof(label)))
      return fail(a, a->line, "out of memory");
    a->labels[a->nlabels].insn = a->meth->ncode;
    if (!(a->labels[a->nlabels++].name = mvm_nstrdup(a->vm, t[0].s + 1))) return fail(a, a->line, "out of memory");
    return 0;
  }
  return parse_insn(a, t, n);
}

/* Fields and methods are looked up in the class, then in its superclasses (as Java resolves
 * them: a field declared again in a subclass hides the superclass's). */
static mvm_field *find_field(mvm_class *c, const char *name) {
  for (; c; c = c->super)
    for (uint32_t i = 0; i < c->nfields; i++)
      if (!strcmp(c->fields[i].name, name)) return &c->fields[i];
  return NULL;
}

static mvm_method *find_method(mvm_class *c, const char *name) {
  for (; c; c = c->super)
    for (uint32_t i = 0; i < c->nmethods; i++)
      if (!strcmp(c->methods[i]->name, name)) return c->methods[i];
  return NULL;
}

static int resolve(asm_ctx *a, fixup *f) {
  int no_insn = f->kind == 't' || f->kind == 's' || f->kind == 'x';
  mvm_insn *in = no_insn ? NULL : &f->m->code[f->insn];
  char *dot = no_insn ? NULL : strrchr(f->sym, '.');
  if (dot) *dot = '\0';
  mvm_class *c = find_class(a, f->sym);
  if (!c) return fail(a, f->line, "unknown class '%s'", f->sym);
  if (f->kind == 't') return 0;
  if (f->kind == 's') {
    mvm_class *sub = a->classes[f->insn];
    if (c->builtin && c != a->vm->object_class && !mvm_is_subclass(c, a->vm->throwable_class))
      return fail(a, f->line, "class %s cannot extend built-in class %s (only Object and the Throwables)",
                  sub->name, c->name);
    /* A cycle through this class would come back to it. */
    for (mvm_class *k = c; k; k = k->super)
      if (k == sub) return fail(a, f->line, "class %s would be its own superclass", sub->name);
    sub->super = c;
    return 0;
  }
  if (f->kind == 'x') {
    if (!mvm_is_subclass(c, a->vm->throwable_class))
      return fail(a, f->line, ".catch: %s is not a Throwable", c->name);
    f->m->catches[f->insn].type = c;
    return 0;
  }
  if (f->kind == 'c') {
    in->ptr = c;
    return 0;
  }
  if (f->kind == 'f') {
    mvm_field *fl = find_field(c, dot + 1);
    if (!fl) return fail(a, f->line, "unknown field %s.%s", c->name, dot + 1);
    int want_static = in->op == OP_SGET || in->op == OP_SPUT;
    if (fl->is_static != want_static)
      return fail(a, f->line, "%s.%s is %s field", c->name, fl->name,
                  fl->is_static ? "a static" : "an instance");
    in->ptr = fl;
    return 0;
  }
  mvm_method *m = find_method(c, dot + 1);
  if (!m) return fail(a, f->line, "unknown method %s.%s", c->name, dot + 1);
  if (m->instance)
    return fail(a, f->line, "%s.%s is an instance method (only a debugger calls it)", m->owner->name, m->name);
  int given = in->op == OP_INVOKE ? in->nargs : in->nargs - 2;
  if (given != m->nparams)
    return fail(a, f->line, "%s.%s takes %u argument%s, %d given", c->name, m->name, m->nparams,
                m->nparams == 1 ? "" : "s", given);
  in->ptr = m;
  return 0;
}

/* Reference slots, for the marker: the instance ones inherited too. */
static int index_refs(mvm_vm *vm, mvm_class *c) {
  uint32_t all = 0;
  for (const mvm_class *k = c; k; k = k->super) all += k->nfields;
  c->iref = mvm_ncalloc(vm, all + 1, sizeof(uint32_t));
  c->sref = mvm_ncalloc(vm, c->nfields + 1, sizeof(uint32_t));
  if (!c->iref || !c->sref) return -1;
  for (const mvm_class *k = c; k; k = k->super)
    for (uint32_t i = 0; i < k->nfields; i++) {
      const mvm_field *f = &k->fields[i];
      if (f->type != 'L') continue;
      if (!f->is_static) c->iref[c->niref++] = f->slot;
      else if (k == c) c->sref[c->nsref++] = f->slot;
    }
  return 0;
}

static void free_class(mvm_vm *vm, mvm_class *c) {
  for (uint32_t i = 0; i < c->nfields; i++) {
    mvm_nfree(vm, c->fields[i].name);
    mvm_nfree(vm, c->fields[i].sig);
  }
  for (uint32_t i = 0; i < c->nmethods; i++) {
    mvm_method *m = c->methods[i];
    for (uint32_t j = 0; j < m->ncode; j++)
      if (m->code[j].op == OP_CONST_STRING) mvm_nfree(vm, m->code[j].ptr);
    for (uint32_t j = 0; j < m->nlocals; j++) {
      mvm_nfree(vm, m->locals[j].name);
      mvm_nfree(vm, m->locals[j].sig);
    }
    mvm_nfree(vm, m->locals);
    mvm_nfree(vm, m->catches);
    mvm_nfree(vm, m->sig);
    mvm_nfree(vm, m->code);
    mvm_nfree(vm, m->name);
    mvm_nfree(vm, m);
  }
  mvm_nfree(vm, c->methods);
  mvm_nfree(vm, c->fields);
  mvm_nfree(vm, c->iref);
  mvm_nfree(vm, c->sref);
  mvm_nfree(vm, c->name);
  mvm_nfree(vm, c->sig);
  mvm_nfree(vm, c->source);
  mvm_nfree(vm, c->super_name);
  mvm_nfree(vm, c);
}

int mvm_intern_atype(mvm_vm *vm, const char *sig) {
  for (uint32_t i = 0; i < vm->natypes; i++)
    if (!strcmp(vm->atypes[i]->sig, sig)) return (int)i;
  mvm_atype *t = mvm_ncalloc(vm, 1, sizeof *t);
  if (!t || !(t->sig = mvm_nstrdup(vm, sig)) ||
      grow(vm, (void **)&vm->atypes, &vm->cap_atypes, vm->natypes + 1, sizeof t)) {
    if (t) mvm_nfree(vm, t->sig);
    mvm_nfree(vm, t);
    return -1;
  }
  t->elem = elem_of(sig);
  vm->atypes[vm->natypes] = t;
  return (int)vm->natypes++;
}

/* Adds a finished class to the VM and gives it its class object. */
int mvm_define_class(mvm_vm *vm, mvm_class *c) {
  if (!c->iref && index_refs(vm, c)) return -1;
  if (!c->sig) {
    size_t n = strlen(c->name) + 3;
    if (!(c->sig = mvm_nalloc(vm, n))) return -1;
    snprintf(c->sig, n, "L%s;", c->name);
  }
  uint32_t cap = vm->cap_classes;
  if (grow(vm, (void **)&vm->classes, &cap, vm->nclasses + 1, sizeof c)) return -1;
  vm->cap_classes = cap;
  c->index = vm->nclasses;
  if (!(c->obj = mvm_alloc_class_object(vm, c))) return -1;
  vm->classes[vm->nclasses++] = c;
  return 0;
}

void mvm_class_free(mvm_vm *vm, mvm_class *c) { free_class(vm, c); }

/* Instance slots: a class's own instance fields follow its superclass's (so an instance of a
 * subclass is an instance of the superclass with more slots after). Superclasses are laid out
 * first; the chains are acyclic here. */
static int layout_fields(asm_ctx *a) {
  uint8_t *done = calloc(a->nclasses + 1, 1);
  if (!done) return fail(a, 0, "out of memory");
  for (uint32_t left = a->nclasses; left;) {
    uint32_t before = left;
    for (uint32_t i = 0; i < a->nclasses; i++) {
      mvm_class *c = a->classes[i], *sup = c->super;
      if (done[i]) continue;
      uint32_t j = 0;
      while (j < a->nclasses && a->classes[j] != sup) j++;
      if (j < a->nclasses && !done[j]) continue;   /* a program superclass not laid out yet */
      uint32_t slot = sup->ninstance;
      for (uint32_t k = 0; k < c->nfields; k++)
        if (!c->fields[k].is_static) c->fields[k].slot = slot++;
      c->ninstance = slot;
      done[i] = 1;
      left--;
    }
    if (left == before) break;   /* cannot happen: resolve refused cycles */
  }
  free(done);
  return 0;
}

static int assemble(asm_ctx *a, char *text) {
  size_t longest = 0;
  for (char *p = text; *p;) {
    char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > longest) longest = len;
    p += len + (e ? 1 : 0);
  }
  if (!(a->scratch = malloc(longest * 2 + 2))) return fail(a, 0, "out of memory");
  char *p = text;
  for (a->line = 1; *p && !a->failed; a->line++) {
    char *e = strchr(p, '\n');
    if (e) *e = '\0';
    parse_line(a, p);
    if (!e) break;
    p = e + 1;
  }
  free(a->scratch);
  if (a->failed) return -1;
  if (a->meth) return fail(a, a->line, "missing .end method for %s", a->meth->name);
  /* Superclasses first (the cycle check links them one by one), then instance layouts, which
   * put inherited slots first, then every other name (a .catch class must be a Throwable). */
  for (uint32_t i = 0; i < a->ngfix; i++)
    if (a->gfix[i].kind == 's' && resolve(a, &a->gfix[i])) return -1;
  for (uint32_t i = 0; i < a->nclasses; i++)
    if (!a->classes[i]->super) a->classes[i]->super = a->vm->object_class;
  if (layout_fields(a)) return -1;
  for (uint32_t i = 0; i < a->ngfix; i++)
    if (a->gfix[i].kind != 's' && resolve(a, &a->gfix[i])) return -1;
  for (uint32_t i = 0; i < a->nclasses; i++)
    if (index_refs(a->vm, a->classes[i]) || mvm_add_default_init(a->vm, a->classes[i]))
      return fail(a, 0, "out of memory");
  return 0;
}

int mvm_load_text(mvm_vm *vm, const char *filename, const char *text, char *err, size_t errlen) {
  asm_ctx a = {.vm = vm, .file = filename, .err = err, .errlen = errlen};
  uint32_t natypes = vm->natypes;   /* array types this load interns are dropped if it fails */
  char *copy = strdup(text);
  int rc = copy ? assemble(&a, copy) : fail(&a, 0, "out of memory");
  free(copy);
  uint32_t defined = 0;
  for (; rc == 0 && defined < a.nclasses; defined++)
    if (mvm_define_class(vm, a.classes[defined]))
      rc = fail(&a, 0, "heap too small for the class objects (raise -Xms/-Xmx)");
  if (rc) {
    /* Classes already defined have class objects the next collection reclaims once they leave
     * vm->classes; undo them newest first. */
    for (uint32_t i = defined; i > 0; i--) vm->nclasses--;
    for (uint32_t i = 0; i < a.nclasses; i++) free_class(vm, a.classes[i]);
    while (vm->natypes > natypes) {
      mvm_atype *t = vm->atypes[--vm->natypes];
      mvm_nfree(vm, t->sig);
      mvm_nfree(vm, t);
    }
  }
  for (uint32_t i = 0; i < a.ngfix; i++) mvm_nfree(vm, a.gfix[i].sym);
  for (uint32_t i = 0; i < a.nlfix; i++) mvm_nfree(vm, a.lfix[i].sym);
  for (uint32_t i = 0; i < a.nlabels; i++) mvm_nfree(vm, a.labels[i].name);
  mvm_nfree(vm, a.gfix);
  mvm_nfree(vm, a.lfix);
  mvm_nfree(vm, a.labels);
  mvm_nfree(vm, a.alines);
  mvm_nfree(vm, a.catch_lines);
  mvm_nfree(vm, a.classes);
  mvm_nfree(vm, a.source);
  return rc;
}

int mvm_load_file(mvm_vm *vm, const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s:0: cannot open: %s", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb) free(buf);
    buf = nb;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    free(buf);
    snprintf(err, errlen, "%s:0: cannot read file", path);
    return -1;
  }
  buf[n] = '\0';
  if (memchr(buf, '\0', n)) {
    free(buf);
    snprintf(err, errlen, "%s:0: not a text file (contains NUL bytes)", path);
    return -1;
  }
  int rc = mvm_load_text(vm, path, buf, err, errlen);
  free(buf);
  return rc;
}
