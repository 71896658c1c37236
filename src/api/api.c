/*
 * Public entry points of the runtime, contexts, the heap, synchronisation,
 * notifications and counters (RMA, signals and atomics are in rma.c).
 */
#include "config.h"
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sr_api_not_up(const char *fn)
{
    sr_error("%s: called %s", fn,
             sr_rt.state == SR_STATE_DOWN ? "after symrail_finalize" : "before symrail_init");
}

void sr_api_fatal(const char *fn, symrail_status_t st)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "%s failed: %s", fn, symrail_strerror(st));
    if (sr_rt.state == SR_STATE_UP)
        sr_core_abort(1, msg);
    fprintf(stderr, "symrail: %s\n", msg);
    exit(1);
}

int sr_api_ctx_check(const char *fn, const sr_ctx_t *ctx, int store)
{
    if ((ctx->state & ~(SR_CTX_LOCKED | SR_CTX_NOSTORE)) != SR_CTX_LIVE) {
        sr_error("%s: ctx %p is not a live context (destroyed, or never created)", fn,
                 (const void *)ctx);
        return 0;
    }
    /* NOSTORE contexts promise no stores: hold them to it. */
    if (store && (ctx->state & SR_CTX_NOSTORE)) {
        sr_error("%s: ctx was created with SYMRAIL_CTX_NOSTORE (no puts, atomics or signals)",
                 fn);
        return 0;
    }
    return 1;
}

/* ---- runtime ------------------------------------------------------------- */

static symrail_status_t sr_api_init(const char *fn, int level)
{
    (void)fn;
    if (sr_rt.state == SR_STATE_UP)
        return SYMRAIL_OK;  /* OpenSHMEM allows repeated initialization */
    /* ... and, since 1.6, initialization again after finalize. */
    return sr_core_init(level);
}

symrail_status_t symrail_init_status(void)
{
    return sr_api_init("symrail_init", SYMRAIL_THREAD_SINGLE);
}

symrail_status_t symrail_init_thread(int requested, int *provided_p)
{
    if (requested < SYMRAIL_THREAD_SINGLE || requested > SYMRAIL_THREAD_MULTIPLE) {
        sr_error("symrail_init_thread: requested %d is not a SYMRAIL_THREAD_* level",
                 requested);
        return SYMRAIL_ERR_INVALID;
    }
    symrail_status_t st = sr_api_init("symrail_init_thread", requested);
    if (st == SYMRAIL_OK && provided_p)
        *provided_p = sr_rt.thread_level;
    return st;
}

symrail_status_t symrail_query_thread(int *provided_p)
{
    SR_API_UP("symrail_query_thread", SYMRAIL_ERR_INVALID);
    if (provided_p == NULL) {
        sr_error("symrail_query_thread: provided_p is NULL");
        return SYMRAIL_ERR_INVALID;
    }
    *provided_p = sr_rt.thread_level;
    return SYMRAIL_OK;
}

symrail_status_t symrail_finalize_status(void)
{
    if (sr_rt.state == SR_STATE_DOWN)
        return SYMRAIL_OK;
    SR_API_UP("symrail_finalize", SYMRAIL_ERR_INVALID);
    symrail_status_t st = sr_core_finalize();
    if (sr_unlikely(st == SYMRAIL_ERR_MISMATCH))
        sr_api_fatal("symrail_finalize", st);  /* the core is still up for this */
    return st;
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
    return sr_rt.state == SR_STATE_UP;
}

int symrail_my_pe(void)
{
    return sr_rt.state == SR_STATE_UP ? sr_rt.my_pe : -1;
}

int symrail_n_pes(void)
{
    return sr_rt.state == SR_STATE_UP ? sr_rt.n_pes : -1;
}

const char *symrail_version_string(void)
{
    return SYMRAIL_VERSION_STRING;
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
    if (sr_rt.state == SR_STATE_UP)
        sr_core_abort(code, msg ? msg : "symrail_abort");
    fprintf(stderr, "symrail: %s\n", msg ? msg : "symrail_abort");
    exit(code ? code : 1);
}

/* ---- symmetric heap -------------------------------------------------------- */

/* The heap calls return NULL on failure; PEs that made different collective
 * calls cannot go on (their heaps no longer match), so the job ends. */
static void *sr_api_heap(const char *fn, size_t size, size_t align, int zero)
{
    void *ptr;
    symrail_status_t st = sr_heap_malloc(size, align, zero, fn, &ptr);
    if (sr_unlikely(st == SYMRAIL_ERR_MISMATCH))
        sr_api_fatal(fn, st);
    return ptr;
}

void *symrail_malloc(size_t size)
{
    SR_API_UP("symrail_malloc", NULL);
    return sr_api_heap("symrail_malloc", size, 0, 0);
}

void *symrail_calloc(size_t count, size_t size)
{
    SR_API_UP("symrail_calloc", NULL);
    if (size != 0 && count > SIZE_MAX / size) {
        sr_error("symrail_calloc: count %zu x size %zu overflows", count, size);
        return NULL;
    }
    return sr_api_heap("symrail_calloc", count * size, 0, 1);
}

void *symrail_align(size_t alignment, size_t size)
{
    SR_API_UP("symrail_align", NULL);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        sr_error("symrail_align: alignment %zu is not a power of two", alignment);
        return NULL;
    }
    return sr_api_heap("symrail_align", size, alignment, 0);
}

void symrail_free(void *ptr)
{
    uint64_t off;
    SR_API_UP("symrail_free", );
    if (ptr == NULL)
        return;
    if (!sr_api_sym_ok("symrail_free", "ptr", ptr, 0, &off))
        return;
    if (off & SR_DATA_BIT) {
        sr_error("symrail_free(%p): a global or static variable, not a heap allocation", ptr);
        return;
    }
    if (sr_heap_release(ptr) == SYMRAIL_ERR_MISMATCH)
        sr_api_fatal("symrail_free", SYMRAIL_ERR_MISMATCH);
}

void *symrail_ptr(const void *addr, int pe)
{
    uint64_t off;
    SR_API_UP("symrail_ptr", NULL);
    if (!sr_api_pe_ok("symrail_ptr", pe) || !sr_api_sym_ok("symrail_ptr", "addr", addr, 0, &off))
        return NULL;
    /* Our own heap is mapped here whatever transport carries the peers
     * (TCP offers no load/store view, not even of ourselves). */
    if (pe == sr_rt.my_pe)
        return (void *)addr;
    return sr_sym_peer_addr(pe, off);
}

/* ---- contexts ------------------------------------------------------------------ */

symrail_status_t symrail_ctx_create(long options, symrail_ctx_t *ctx_p)
{
    static const char fn[] = "symrail_ctx_create";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (ctx_p == NULL) {
        sr_error("%s: ctx_p is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    *ctx_p = NULL;  /* what a failed create leaves: no context */
    long known = SYMRAIL_CTX_SERIALIZED | SYMRAIL_CTX_PRIVATE | SYMRAIL_CTX_NOSTORE;
    if (options & ~known) {
        sr_error("%s: options 0x%lx has bits that are no SYMRAIL_CTX_* option", fn, options);
        return SYMRAIL_ERR_INVALID;
    }
    sr_ctx_t *ctx;
    symrail_status_t st = sr_ctx_new(options, &ctx);
    if (st != SYMRAIL_OK) {
        sr_error("%s: %s", fn, symrail_strerror(st));
        return st;
    }
    *ctx_p = ctx;
    return SYMRAIL_OK;
}

symrail_status_t symrail_ctx_destroy(symrail_ctx_t uctx)
{
    static const char fn[] = "symrail_ctx_destroy";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (uctx == SYMRAIL_CTX_DEFAULT) {
        sr_error("%s: the default context cannot be destroyed", fn);
        return SYMRAIL_ERR_INVALID;
    }
    if (uctx == NULL) {
        sr_error("%s: ctx is NULL (a failed symrail_ctx_create leaves it so)", fn);
        return SYMRAIL_ERR_INVALID;
    }
    sr_ctx_t *ctx = uctx;
    if (!sr_api_ctx_check(fn, ctx, 0))
        return SYMRAIL_ERR_INVALID;
    return sr_ctx_free(ctx);
}

/* ---- synchronisation -------------------------------------------------------- */

symrail_status_t symrail_barrier_all(void)
{
    SR_API_UP("symrail_barrier_all", SYMRAIL_ERR_INVALID);
    symrail_status_t st = sr_ctx_quiet(sr_rt.dctx);
    if (st == SYMRAIL_OK)
        st = sr_barrier();
    if (sr_unlikely(st == SYMRAIL_ERR_MISMATCH))
        sr_api_fatal("symrail_barrier_all", st);
    return st;
}

symrail_status_t symrail_sync_all(void)
{
    SR_API_UP("symrail_sync_all", SYMRAIL_ERR_INVALID);
    symrail_status_t st = sr_barrier();
    if (sr_unlikely(st == SYMRAIL_ERR_MISMATCH))
        sr_api_fatal("symrail_sync_all", st);
    return st;
}

/* ---- notification messages -------------------------------------------------------- */

static symrail_status_t sr_api_notify(const char *fn, int pe, uint32_t tag, const void *payload,
                                      size_t len, int blocking)
{
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_peer_ok(fn, pe))
        return SYMRAIL_ERR_INVALID;
    if (len > SYMRAIL_NOTIFY_MAX_PAYLOAD || (len && payload == NULL)) {
        sr_error("%s: len %zu is over SYMRAIL_NOTIFY_MAX_PAYLOAD (%d) or payload is NULL", fn,
                 len, SYMRAIL_NOTIFY_MAX_PAYLOAD);
        return SYMRAIL_ERR_INVALID;
    }
    if (tag >= SYMRAIL_NOTIFY_TAG_RESERVED) {
        sr_error("%s: tag %#x is reserved for the library (tags from "
                 "SYMRAIL_NOTIFY_TAG_RESERVED = %#x up)", fn, tag, SYMRAIL_NOTIFY_TAG_RESERVED);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_notify_send(pe, tag, payload, len, blocking);
}

symrail_status_t symrail_notify_send(int pe, uint32_t tag, const void *payload, size_t len)
{
    return sr_api_notify("symrail_notify_send", pe, tag, payload, len, 1);
}

symrail_status_t symrail_notify_trysend(int pe, uint32_t tag, const void *payload, size_t len)
{
    return sr_api_notify("symrail_notify_trysend", pe, tag, payload, len, 0);
}

/* The receive calls: any user tag (any 1) or `tag`, which must be a user tag. */
static symrail_status_t sr_api_notify_recv(const char *fn, int any, uint32_t tag,
                                           int timeout_ms, int blocking, symrail_notify_t *msg_p)
{
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (msg_p == NULL) {
        sr_error("%s: msg_p is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    if (!any && tag >= SYMRAIL_NOTIFY_TAG_RESERVED) {
        sr_error("%s: tag %#x is reserved for the library (tags from "
                 "SYMRAIL_NOTIFY_TAG_RESERVED = %#x up)", fn, tag, SYMRAIL_NOTIFY_TAG_RESERVED);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_notify_recv(any, tag, timeout_ms, blocking, msg_p);
}

symrail_status_t symrail_notify_poll(symrail_notify_t *msg_p)
{
    return sr_api_notify_recv("symrail_notify_poll", 1, 0, 0, 0, msg_p);
}

symrail_status_t symrail_notify_wait(int timeout_ms, symrail_notify_t *msg_p)
{
    return sr_api_notify_recv("symrail_notify_wait", 1, 0, timeout_ms, 1, msg_p);
}

symrail_status_t symrail_notify_poll_tag(uint32_t tag, symrail_notify_t *msg_p)
{
    return sr_api_notify_recv("symrail_notify_poll_tag", 0, tag, 0, 0, msg_p);
}

symrail_status_t symrail_notify_wait_tag(uint32_t tag, int timeout_ms, symrail_notify_t *msg_p)
{
    return sr_api_notify_recv("symrail_notify_wait_tag", 0, tag, timeout_ms, 1, msg_p);
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

/* ---- peer state ------------------------------------------------------------------------ */

static symrail_peer_state_t sr_api_peer_state(int pe, uint64_t now)
{
    /* Whatever progress owes us first: a connection that closed says so
     * only when its transport runs. */
    (void)sr_peer_alive(pe, now);
    return (symrail_peer_state_t)__atomic_load_n(&sr_rt.peers[pe].state, __ATOMIC_ACQUIRE);
}

symrail_status_t symrail_peer_state(int pe, symrail_peer_state_t *state_p)
{
    const char *fn = "symrail_peer_state";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_peer_ok(fn, pe))
        return SYMRAIL_ERR_INVALID;
    if (state_p == NULL) {
        sr_error("%s: state_p is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    sr_progress(NULL);
    *state_p = sr_api_peer_state(pe, sr_time_ns());
    return SYMRAIL_OK;
}

symrail_status_t symrail_peer_states(symrail_peer_state_t *states_p, int *nbad_p)
{
    const char *fn = "symrail_peer_states";
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (states_p == NULL) {
        sr_error("%s: states_p is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    sr_progress(NULL);
    uint64_t now = sr_time_ns();
    int nbad = 0;
    for (int pe = 0; pe < sr_rt.n_pes; pe++) {
        states_p[pe] = sr_api_peer_state(pe, now);
        nbad += states_p[pe] != SYMRAIL_PEER_OK;
    }
    if (nbad_p)
        *nbad_p = nbad;
    return SYMRAIL_OK;
}
