/*
 * Public entry points: every argument is checked here, once, so the core and
 * the transports can trust what they are given.  A bad argument is reported
 * in one line naming the call and the argument.
 */
#include "config.h"
#include "core/ctx.h"
#include "util/log.h"
#include "util/sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <symrail.h>

#define SR_API_UP(_fn, _fail)                                                      \
    do {                                                                           \
        if (sr_unlikely(sr_ctx.state != SR_STATE_UP)) {                            \
            sr_api_not_up(_fn);                                                    \
            return _fail;                                                          \
        }                                                                          \
    } while (0)

static void sr_api_not_up(const char *fn)
{
    sr_error("%s: called %s", fn,
             sr_ctx.state == SR_STATE_DOWN ? "after symrail_finalize" : "before symrail_init");
}

static __attribute__((noreturn)) void sr_api_fatal(const char *fn, symrail_status_t st)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "%s failed: %s", fn, symrail_strerror(st));
    if (sr_ctx.state == SR_STATE_UP)
        sr_core_abort(1, msg);
    fprintf(stderr, "symrail: %s\n", msg);
    exit(1);
}

static inline int sr_api_pe_ok(const char *fn, int pe)
{
    if (sr_likely(pe >= 0 && pe < sr_ctx.n_pes))
        return 1;
    sr_error("%s: pe %d is out of range (0..%d)", fn, pe, sr_ctx.n_pes - 1);
    return 0;
}

/* [addr, addr+len) must lie in the user part of the symmetric heap. */
static inline int sr_api_sym_ok(const char *fn, const char *arg, const void *addr, size_t len,
                                uint64_t *off_p)
{
    uintptr_t a = (uintptr_t)addr, lo = (uintptr_t)sr_ctx.heap_base + SR_HEAP_RESERVED;
    uintptr_t hi = (uintptr_t)sr_ctx.heap_base + sr_ctx.heap_size;
    if (sr_likely(a >= lo && a < hi && len <= hi - a)) {
        *off_p = a - (uintptr_t)sr_ctx.heap_base;
        return 1;
    }
    if (a >= lo && a < hi)
        sr_error("%s: %s %p + %zu bytes runs past the end of the symmetric heap (%p)", fn, arg,
                 addr, len, (void *)hi);
    else
        sr_error("%s: %s %p is not in the symmetric heap [%p, %p)", fn, arg, addr, (void *)lo,
                 (void *)hi);
    return 0;
}

/* The private buffer of a put or get must at least not wrap around. */
static inline int sr_api_buf_ok(const char *fn, const char *arg, const void *addr, size_t len)
{
    if (sr_likely(addr != NULL && (uintptr_t)addr + len >= (uintptr_t)addr) || len == 0)
        return 1;
    sr_error("%s: %s %p with %zu bytes is not a valid buffer", fn, arg, addr, len);
    return 0;
}

static inline int sr_api_word_ok(const char *fn, const char *arg, const void *addr,
                                 uint64_t *off_p)
{
    if (!sr_api_sym_ok(fn, arg, addr, sizeof(uint64_t), off_p))
        return 0;
    if (sr_likely(((uintptr_t)addr & 7) == 0))
        return 1;
    sr_error("%s: %s %p is not aligned to 8 bytes", fn, arg, addr);
    return 0;
}

/* ---- runtime ------------------------------------------------------------- */

symrail_status_t symrail_init_status(void)
{
    if (sr_ctx.state == SR_STATE_UP)
        return SYMRAIL_OK;  /* OpenSHMEM allows repeated initialization */
    if (sr_ctx.state == SR_STATE_DOWN) {
        sr_error("symrail_init: the library cannot be initialized again after finalize");
        return SYMRAIL_ERR_STATE;
    }
    return sr_core_init();
}

symrail_status_t symrail_finalize_status(void)
{
    if (sr_ctx.state == SR_STATE_DOWN)
        return SYMRAIL_OK;
    SR_API_UP("symrail_finalize", SYMRAIL_ERR_INVALID);
    return sr_core_finalize();
}

void symrail_init(void)
{
    symrail_status_t st = symrail_init_status();
    if (st != SYMRAIL_OK) {
        fprintf(stderr, "symrail: symrail_init failed: %s\n", symrail_strerror(st));
        exit(1);
    }
}

void symrail_finalize(void)
{
    symrail_status_t st = symrail_finalize_status();
    if (st != SYMRAIL_OK) {
        fprintf(stderr, "symrail: symrail_finalize failed: %s\n", symrail_strerror(st));
        exit(1);
    }
}

int symrail_initialized(void)
{
    return sr_ctx.state == SR_STATE_UP;
}

int symrail_my_pe(void)
{
    return sr_ctx.state == SR_STATE_UP ? sr_ctx.my_pe : -1;
}

int symrail_n_pes(void)
{
    return sr_ctx.state == SR_STATE_UP ? sr_ctx.n_pes : -1;
}

const char *symrail_version_string(void)
{
    return PACKAGE_VERSION;
}

void symrail_version(int *major_p, int *minor_p, int *patch_p)
{
    if (major_p)
        *major_p = SYMRAIL_VERSION_MAJOR;
    if (minor_p)
        *minor_p = SYMRAIL_VERSION_MINOR;
    if (patch_p)
        *patch_p = SYMRAIL_VERSION_PATCH;
}

void symrail_abort(int code, const char *msg)
{
    if (sr_ctx.state == SR_STATE_UP)
        sr_core_abort(code, msg ? msg : "symrail_abort");
    fprintf(stderr, "symrail: %s\n", msg ? msg : "symrail_abort");
    exit(code ? code : 1);
}

/* ---- symmetric heap -------------------------------------------------------- */

void *symrail_malloc(size_t size)
{
    SR_API_UP("symrail_malloc", NULL);
    return sr_heap_malloc(size, 0, 0, "symrail_malloc");
}

void *symrail_calloc(size_t count, size_t size)
{
    SR_API_UP("symrail_calloc", NULL);
    if (size != 0 && count > SIZE_MAX / size) {
        sr_error("symrail_calloc: count %zu x size %zu overflows", count, size);
        return NULL;
    }
    return sr_heap_malloc(count * size, 0, 1, "symrail_calloc");
}

void *symrail_align(size_t alignment, size_t size)
{
    SR_API_UP("symrail_align", NULL);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        sr_error("symrail_align: alignment %zu is not a power of two", alignment);
        return NULL;
    }
    return sr_heap_malloc(size, alignment, 0, "symrail_align");
}

void symrail_free(void *ptr)
{
    uint64_t off;
    SR_API_UP("symrail_free", );
    if (ptr == NULL)
        return;
    if (!sr_api_sym_ok("symrail_free", "ptr", ptr, 0, &off))
        return;
    sr_heap_release(ptr);
}

void *symrail_ptr(const void *addr, int pe)
{
    uint64_t off;
    SR_API_UP("symrail_ptr", NULL);
    if (!sr_api_pe_ok("symrail_ptr", pe) || !sr_api_sym_ok("symrail_ptr", "addr", addr, 0, &off))
        return NULL;
    char *base = sr_ctx.peers[pe].base;
    return base ? base + off : NULL;
}

/* ---- RMA -------------------------------------------------------------------- */

static inline symrail_status_t sr_api_rma(const char *fn, int is_put, void *dst, const void *src,
                                          size_t nbytes, int pe, int blocking)
{
    uint64_t off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (sr_unlikely(!sr_api_pe_ok(fn, pe)))
        return SYMRAIL_ERR_INVALID;
    if (is_put) {
        if (sr_unlikely(!sr_api_sym_ok(fn, "dst", dst, nbytes, &off) ||
                        !sr_api_buf_ok(fn, "src", src, nbytes)))
            return SYMRAIL_ERR_INVALID;
    } else if (sr_unlikely(!sr_api_sym_ok(fn, "src", src, nbytes, &off) ||
                           !sr_api_buf_ok(fn, "dst", dst, nbytes))) {
        return SYMRAIL_ERR_INVALID;
    }
    if (nbytes == 0)
        return SYMRAIL_OK;
    return sr_rma(is_put, is_put ? (void *)src : dst, off, nbytes, pe, blocking);
}

symrail_status_t symrail_put(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_put", 1, dst, src, nbytes, pe, 1);
}

symrail_status_t symrail_get(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_get", 0, dst, src, nbytes, pe, 1);
}

symrail_status_t symrail_put_nbi(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_put_nbi", 1, dst, src, nbytes, pe, 0);
}

symrail_status_t symrail_get_nbi(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_get_nbi", 0, dst, src, nbytes, pe, 0);
}

void symrail_putmem(void *dst, const void *src, size_t nbytes, int pe)
{
    symrail_status_t st = sr_api_rma("symrail_putmem", 1, dst, src, nbytes, pe, 1);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal("symrail_putmem", st);
}

void symrail_getmem(void *dst, const void *src, size_t nbytes, int pe)
{
    symrail_status_t st = sr_api_rma("symrail_getmem", 0, dst, src, nbytes, pe, 1);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal("symrail_getmem", st);
}

symrail_status_t symrail_quiet(void)
{
    SR_API_UP("symrail_quiet", SYMRAIL_ERR_INVALID);
    return sr_quiet();
}

symrail_status_t symrail_fence(void)
{
    SR_API_UP("symrail_fence", SYMRAIL_ERR_INVALID);
    return sr_fence();
}

symrail_status_t symrail_barrier_all(void)
{
    SR_API_UP("symrail_barrier_all", SYMRAIL_ERR_INVALID);
    symrail_status_t st = sr_quiet();
    return st == SYMRAIL_OK ? sr_barrier() : st;
}

symrail_status_t symrail_sync_all(void)
{
    SR_API_UP("symrail_sync_all", SYMRAIL_ERR_INVALID);
    return sr_barrier();
}

/* ---- signals -------------------------------------------------------------------- */

symrail_status_t symrail_put_signal(void *dst, const void *src, size_t nbytes,
                                    uint64_t *sig_addr, uint64_t value,
                                    symrail_signal_op_t op, int pe)
{
    static const char fn[] = "symrail_put_signal";
    uint64_t sig_off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_word_ok(fn, "sig_addr", sig_addr, &sig_off))
        return SYMRAIL_ERR_INVALID;
    if (op != SYMRAIL_SIGNAL_SET && op != SYMRAIL_SIGNAL_ADD) {
        sr_error("%s: op %d is neither SYMRAIL_SIGNAL_SET nor SYMRAIL_SIGNAL_ADD", fn, (int)op);
        return SYMRAIL_ERR_INVALID;
    }
    uint64_t off;
    if (!sr_api_pe_ok(fn, pe) || !sr_api_sym_ok(fn, "dst", dst, nbytes, &off) ||
        !sr_api_buf_ok(fn, "src", src, nbytes))
        return SYMRAIL_ERR_INVALID;
    return sr_put_signal(src, off, nbytes, sig_off,
                         op == SYMRAIL_SIGNAL_SET ? SR_TL_AMO_SET : SR_TL_AMO_ADD, value, pe);
}

symrail_status_t symrail_signal_wait_until(uint64_t *sig_addr, symrail_cmp_t cmp,
                                           uint64_t value, uint64_t *value_p)
{
    static const char fn[] = "symrail_signal_wait_until";
    uint64_t off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_word_ok(fn, "sig_addr", sig_addr, &off))
        return SYMRAIL_ERR_INVALID;
    if ((unsigned)cmp > SYMRAIL_CMP_LE) {
        sr_error("%s: cmp %d is not a symrail_cmp_t", fn, (int)cmp);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_signal_wait(sig_addr, cmp, value, value_p);
}

uint64_t symrail_signal_fetch(const uint64_t *sig_addr)
{
    uint64_t off;
    if (sr_ctx.state != SR_STATE_UP)
        sr_api_fatal("symrail_signal_fetch", SYMRAIL_ERR_INVALID);
    if (!sr_api_word_ok("symrail_signal_fetch", "sig_addr", sig_addr, &off))
        sr_api_fatal("symrail_signal_fetch", SYMRAIL_ERR_INVALID);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

/* ---- notification messages -------------------------------------------------------- */

symrail_status_t symrail_notify_send(int pe, uint32_t tag, const void *payload, size_t len)
{
    static const char fn[] = "symrail_notify_send";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_pe_ok(fn, pe))
        return SYMRAIL_ERR_INVALID;
    if (len > SYMRAIL_NOTIFY_MAX_PAYLOAD || (len && payload == NULL)) {
        sr_error("%s: len %zu is over SYMRAIL_NOTIFY_MAX_PAYLOAD (%d) or payload is NULL", fn,
                 len, SYMRAIL_NOTIFY_MAX_PAYLOAD);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_notify_send(pe, tag, payload, len);
}

symrail_status_t symrail_notify_poll(symrail_notify_t *msg_p)
{
    SR_API_UP("symrail_notify_poll", SYMRAIL_ERR_INVALID);
    if (msg_p == NULL) {
        sr_error("symrail_notify_poll: msg_p is NULL");
        return SYMRAIL_ERR_INVALID;
    }
    return sr_notify_recv(0, 0, msg_p);
}

symrail_status_t symrail_notify_wait(int timeout_ms, symrail_notify_t *msg_p)
{
    SR_API_UP("symrail_notify_wait", SYMRAIL_ERR_INVALID);
    if (msg_p == NULL) {
        sr_error("symrail_notify_wait: msg_p is NULL");
        return SYMRAIL_ERR_INVALID;
    }
    return sr_notify_recv(timeout_ms, 1, msg_p);
}

/* ---- atomics ------------------------------------------------------------------------- */

static inline symrail_status_t sr_api_amo(const char *fn, sr_tl_amo_t op, const uint64_t *target,
                                          uint64_t operand, uint64_t compare, int pe,
                                          uint64_t *result_p)
{
    uint64_t off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_pe_ok(fn, pe) || !sr_api_word_ok(fn, "target", target, &off))
        return SYMRAIL_ERR_INVALID;
    if (result_p == NULL && op != SR_TL_AMO_SET && op != SR_TL_AMO_ADD) {
        sr_error("%s: the result pointer is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_amo(op, off, operand, compare, pe, result_p);
}

symrail_status_t symrail_atomic_fetch(const uint64_t *target, int pe, uint64_t *value_p)
{
    return sr_api_amo("symrail_atomic_fetch", SR_TL_AMO_FETCH, target, 0, 0, pe, value_p);
}

symrail_status_t symrail_atomic_set(uint64_t *target, uint64_t value, int pe)
{
    return sr_api_amo("symrail_atomic_set", SR_TL_AMO_SET, target, value, 0, pe, NULL);
}

symrail_status_t symrail_atomic_add(uint64_t *target, uint64_t value, int pe)
{
    return sr_api_amo("symrail_atomic_add", SR_TL_AMO_ADD, target, value, 0, pe, NULL);
}

symrail_status_t symrail_atomic_fetch_add(uint64_t *target, uint64_t value, int pe,
                                          uint64_t *old_p)
{
    return sr_api_amo("symrail_atomic_fetch_add", SR_TL_AMO_ADD, target, value, 0, pe, old_p);
}

symrail_status_t symrail_atomic_swap(uint64_t *target, uint64_t value, int pe, uint64_t *old_p)
{
    return sr_api_amo("symrail_atomic_swap", SR_TL_AMO_SWAP, target, value, 0, pe, old_p);
}

symrail_status_t symrail_atomic_compare_swap(uint64_t *target, uint64_t cond, uint64_t value,
                                             int pe, uint64_t *old_p)
{
    return sr_api_amo("symrail_atomic_compare_swap", SR_TL_AMO_CSWAP, target, value, cond, pe,
                      old_p);
}

/* ---- counters ------------------------------------------------------------------------- */

symrail_status_t symrail_stats(symrail_stats_t *stats_p)
{
    SR_API_UP("symrail_stats", SYMRAIL_ERR_INVALID);
    if (stats_p == NULL) {
        sr_error("symrail_stats: stats_p is NULL");
        return SYMRAIL_ERR_INVALID;
    }
    sr_stats_collect(stats_p);
    return SYMRAIL_OK;
}
