/*
 * Resources stay flat: open file descriptors, threads, memory mappings,
 * resident memory and pinned memory of a PE, measured from /proc/self.
 *
 *   t_leaks cycles [N]  symrail_init / work / symrail_finalize N times (default
 *                       50) in one process (OpenSHMEM 1.6 allows it)
 *   t_leaks ops [N]     one job doing N rounds (default 20000) of put, get,
 *                       put_nbi + quiet, atomics, put_signal, notify, and
 *                       every 100 rounds a context, an allocation and a
 *                       segment made and destroyed, and a 64 KiB put from a
 *                       malloc'd buffer freed after it
 *
 * The baseline is taken after warm-up (two cycles, or T_WARMUP rounds,
 * default 1000): the first ones load PMIx's plugins, size the allocator's
 * arenas and the library's pools, none of which is a leak.  After it,
 * descriptors and threads must be exactly where they were; mappings may
 * move by T_SLACK_MAPS (default 4: glibc may split or merge an arena's
 * mapping) and resident memory by T_SLACK_KB (default 2048 KiB: malloc
 * keeps freed memory and trims it when it decides to).  A leak of 64 KiB per cycle (a typical
 * buffer) or 200 bytes per round (a small request) passes both bounds.
 *
 * With T_RDMA_RES=1 (the verbs suite) the PE's own memory registrations
 * (count and bytes), queue pairs and completion queues are counted too, as
 * the kernel's resource tracking lists them (`rdma res show mr|qp|cq`,
 * lines with this PE's pid): VmPin sees the pages a leaked registration
 * keeps pinned but not which object holds them, and queues pin nothing.
 * They must stay exactly where they were, and after a finalize there must
 * be none at all.
 */
#include "tcommon.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

typedef struct {
    long fds, threads, maps, rss_kb, pin_kb;
    long mrs, mr_bytes, qps, cqs;  /* -1: not counted (T_RDMA_RES unset) */
} t_res_t;

static int t_me;  /* after a finalize symrail_my_pe() is -1 */

static long status_kb(const char *key)
{
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* The lines of `rdma res show <what>` that name this process, and the sum
 * of the numbers after the word `sum_key` on them (NULL: none). */
static long rdma_res(const char *what, const char *sum_key, long *sum_p)
{
    char cmd[64], line[1024], pidw[32];
    long n = 0;
    snprintf(cmd, sizeof(cmd), "rdma res show %s 2>&1", what);
    snprintf(pidw, sizeof(pidw), " pid %ld ", (long)getpid());
    *sum_p = 0;
    FILE *f = popen(cmd, "r");
    T_ASSERT(f != NULL, "popen(%s): %s", cmd, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = ' ';
        if (strstr(line, pidw) == NULL)
            continue;
        n++;
        const char *v = sum_key ? strstr(line, sum_key) : NULL;
        if (v)
            *sum_p += strtol(v + strlen(sum_key), NULL, 10);
    }
    int rc = pclose(f);
    T_ASSERT(rc == 0, "`%s` failed (status %d): the resource counts cannot be read", cmd, rc);
    return n;
}

static void sample(t_res_t *r)
{
    DIR *d = opendir("/proc/self/fd");
    r->fds = 0;
    if (d) {
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            if (e->d_name[0] != '.')
                r->fds++;
        closedir(d);
        r->fds--;  /* the directory stream's own descriptor */
    }
    r->maps = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (f) {
        for (int c; (c = fgetc(f)) != EOF;)
            r->maps += c == '\n';
        fclose(f);
    }
    r->threads = status_kb("Threads");
    r->rss_kb = status_kb("VmRSS");
    r->pin_kb = status_kb("VmPin");
    r->mrs = r->mr_bytes = r->qps = r->cqs = -1;
    if (t_env("T_RDMA_RES", 0)) {
        long unused;
        r->mrs = rdma_res("mr", " mrlen ", &r->mr_bytes);
        r->qps = rdma_res("qp", NULL, &unused);
        r->cqs = rdma_res("cq", NULL, &unused);
    }
}

static void show(const char *what, long i, const t_res_t *r)
{
    printf("leaks: %-6s %6ld  fds %3ld  threads %2ld  maps %4ld  rss %7ld KiB  pinned %ld KiB",
           what, i, r->fds, r->threads, r->maps, r->rss_kb, r->pin_kb);
    if (r->mrs >= 0)
        printf("  mrs %ld (%ld bytes)  qps %ld  cqs %ld", r->mrs, r->mr_bytes, r->qps, r->cqs);
    printf("\n");
    fflush(stdout);
}

/* Fails unless `now` is within the bounds of `base` (see the top). */
static void check(const char *what, long i, const t_res_t *base, const t_res_t *now)
{
    long slack_maps = (long)t_env("T_SLACK_MAPS", 4), slack_kb = (long)t_env("T_SLACK_KB", 2048);
    const char *bad = now->fds != base->fds ? "file descriptors"
                      : now->threads != base->threads ? "threads"
                      : now->maps > base->maps + slack_maps ? "memory mappings"
                      : now->rss_kb > base->rss_kb + slack_kb ? "resident memory"
                      : now->pin_kb > base->pin_kb ? "pinned memory"
                      : now->mrs != base->mrs ? "memory registrations"
                      : now->mr_bytes != base->mr_bytes ? "registered bytes"
                      : now->qps != base->qps ? "queue pairs"
                      : now->cqs != base->cqs ? "completion queues" : NULL;
    if (bad) {
        show("base", 0, base);
        show(what, i, now);
        fprintf(stderr, "PE %d: FAIL: %s grew after %s %ld\n", t_me, bad, what, i);
        fflush(stderr);
        _exit(1);
    }
}

/* One round of every kind of operation to the right neighbour. */
static void work(unsigned char *buf, uint64_t *words, size_t len, unsigned round)
{
    int me = symrail_my_pe(), n = symrail_n_pes(), right = (me + 1) % n;
    unsigned char local[256];
    uint64_t old;
    t_fill(local, sizeof(local), me, round);
    T_CHECK(symrail_put(buf, local, sizeof(local), right));
    T_CHECK(symrail_get(local, buf + len - sizeof(local), sizeof(local), right));
    T_CHECK(symrail_put_nbi(buf + sizeof(local), local, sizeof(local), right));
    T_CHECK(symrail_quiet());
    T_CHECK(symrail_atomic_fetch_add(&words[0], 1, right, &old));
    T_CHECK(symrail_put_signal(buf + 2 * sizeof(local), local, 8, &words[1], round + 1,
                               SYMRAIL_SIGNAL_SET, right));
    T_CHECK(symrail_signal_wait_until(&words[1], SYMRAIL_CMP_GE, round + 1, NULL));
    T_CHECK(symrail_notify_send(right, 1, &round, sizeof(round)));
    symrail_notify_t msg;
    T_CHECK(symrail_notify_wait(-1, &msg));
    T_ASSERT(msg.len == sizeof(round) && memcmp(msg.payload, &round, sizeof(round)) == 0,
             "round %u: notification carries the wrong payload", round);
}

static int cycles(long count)
{
    t_res_t base = { 0 }, now;
    for (long i = 0; i < count; i++) {
        if (i > 0)
            T_CHECK(symrail_init_status());
        unsigned char *buf = symrail_malloc(65536);
        uint64_t *words = symrail_calloc(2, sizeof(uint64_t));
        T_ASSERT(buf && words, "allocation failed in cycle %ld", i);
        T_CHECK(symrail_barrier_all());
        for (unsigned r = 0; r < 20; r++)
            work(buf, words, 65536, r);
        symrail_ctx_t ctx;
        T_CHECK(symrail_ctx_create(0, &ctx));
        T_CHECK(symrail_ctx_destroy(ctx));
        T_CHECK(symrail_barrier_all());
        symrail_free(words);
        symrail_free(buf);
        T_CHECK(symrail_finalize_status());
        sample(&now);
        if (now.mrs > 0 || now.qps > 0 || now.cqs > 0) {
            show("cycle", i, &now);
            fprintf(stderr, "PE %d: FAIL: %ld memory registrations (%ld bytes), %ld queue pairs "
                    "and %ld completion queues left after finalize %ld\n", t_me, now.mrs,
                    now.mr_bytes, now.qps, now.cqs, i);
            fflush(stderr);
            _exit(1);
        }
        if (i == 1)
            base = now;
        else if (i > 1)
            check("cycle", i, &base, &now);
        if (i == 0 || i == 1 || i == count - 1)
            show("cycle", i, &now);
    }
    printf("ok: %ld init/finalize cycles: file descriptors, threads, mappings, resident "
           "and pinned memory flat%s\n", count,
           now.mrs >= 0 ? "; no registration or queue left after finalize" : "");
    return 0;
}

static int ops(long count)
{
    t_res_t base = { 0 }, now;
    unsigned char *buf = symrail_malloc(65536);
    uint64_t *words = symrail_calloc(2, sizeof(uint64_t));
    T_ASSERT(buf && words, "allocation failed");
    T_CHECK(symrail_barrier_all());
    long warm = (long)t_env("T_WARMUP", 1000);
    for (long r = 0; r < count + warm; r++) {
        work(buf, words, 65536, (unsigned)r);
        if (r % 100 == 99) {
            symrail_ctx_t ctx;
            T_CHECK(symrail_ctx_create(0, &ctx));
            T_CHECK(symrail_ctx_put(ctx, buf, words, 8, (symrail_my_pe() + 1) % symrail_n_pes()));
            T_CHECK(symrail_ctx_destroy(ctx));
            void *p = symrail_malloc(4096 + (size_t)(r % 7) * 1000);
            T_ASSERT(p != NULL, "allocation failed in round %ld", r);
            symrail_free(p);
            /* Registrations made and dropped at run time: a segment, and a
             * private buffer that RDMA uses in place (over the zero-copy
             * threshold), freed after: its cached registration must go. */
            unsigned char *priv = malloc(65536);
            T_ASSERT(priv != NULL, "malloc failed in round %ld", r);
            memset(priv, (int)r, 65536);
            symrail_seg_t seg;
            T_CHECK(symrail_seg_register(priv, 65536, 0, &seg));
            T_CHECK(symrail_seg_deregister(seg));
            T_CHECK(symrail_put(buf, priv, 65536, (symrail_my_pe() + 1) % symrail_n_pes()));
            free(priv);
        }
        if (r == warm - 1) {
            sample(&base);
            show("round", r, &base);
        } else if (r >= warm && (r - warm) % 1000 == 999) {
            sample(&now);
            check("round", r, &base, &now);
        }
    }
    sample(&now);
    check("round", count + warm - 1, &base, &now);
    show("round", count + warm - 1, &now);
    T_CHECK(symrail_barrier_all());
    if (symrail_my_pe() == 0)
        printf("ok: %ld rounds of operations: file descriptors, threads, mappings, resident "
               "and pinned memory flat%s\n", count,
               now.mrs >= 0 ? ", registrations and queues flat" : "");
    symrail_free(words);
    symrail_free(buf);
    symrail_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    T_CHECK(symrail_init_status());
    t_me = symrail_my_pe();
    if (strcmp(mode, "cycles") == 0)
        return cycles(count > 0 ? count : 50);
    if (strcmp(mode, "ops") == 0)
        return ops(count > 0 ? count : 20000);
    fprintf(stderr, "usage: t_leaks cycles|ops [N]\n");
    symrail_finalize();
    return 2;
}
