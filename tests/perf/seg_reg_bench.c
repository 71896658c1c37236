/* What a segment costs on the shared-memory transport: registration at the
 * owner (mem_reg + mkey_pack), at the importer (rkey_unpack: a mapping, or
 * one probe by cross-memory attach) and the way back (rkey_release,
 * mem_dereg), per size, for both paths; then the cost of a put through each
 * path (the generation check included).  Two transport instances in one
 * process, as the unit test does: the kernel's work per call is the same as
 * between two processes.
 *   seg_reg_bench [max size in MiB, default 4096] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tl/tl.h"
#include "util/env.h"
#include "util/sys.h"

extern const sr_tl_ops_t sr_tl_shm_ops;
#define OPS sr_tl_shm_ops
#define REPS 21

static sr_env_t env;
static sr_tl_ctx_t *ctx[2];
static sr_tl_ep_t *ep10;

static int up(void)
{
    static const uint8_t local[2] = { 1, 1 };
    unsigned char addr[2][4096];
    size_t alen[2];
    if (sr_env_load(getenv, &env) != SYMRAIL_OK)
        return -1;
    for (int pe = 0; pe < 2; pe++) {
        sr_tl_params_t p = { .my_pe = pe, .n_pes = 2, .job = "bench-seg", .is_local = local,
                             .env = &env };
        alen[pe] = sizeof(addr[pe]);
        if (OPS.init(&p, &ctx[pe]) != SYMRAIL_OK ||
            OPS.addr_pack(ctx[pe], addr[pe], &alen[pe]) != SYMRAIL_OK)
            return -1;
    }
    return OPS.connect(ctx[1], 0, addr[0], alen[0], &ep10) == SYMRAIL_OK ? 0 : -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double median_us(uint64_t *ns)
{
    qsort(ns, REPS, sizeof(*ns), cmp_u64);
    return (double)ns[REPS / 2] / 1e3;
}

enum { T_REG, T_UNPACK, T_RELEASE, T_DEREG, T_N };

/* Median time of each step over REPS registrations of [buf, buf+len). */
static int measure(void *buf, size_t len, const char *name, double us_p[T_N])
{
    uint64_t t[T_N][REPS];
    for (int r = 0; r < REPS; r++) {
        sr_tl_mem_t m = { .addr = buf, .len = len, .shm_name = name,
                          .generation = (uint32_t)r + 1 };
        unsigned char key[SR_TL_MKEY_MAX];
        size_t klen = sizeof(key);
        uint64_t t0 = sr_time_ns();
        if (OPS.mem_reg(ctx[0], 2, &m) != SYMRAIL_OK ||
            OPS.mkey_pack(ctx[0], 2, key, &klen) != SYMRAIL_OK)
            return -1;
        uint64_t t1 = sr_time_ns();
        if (OPS.rkey_unpack(ep10, 2, key, klen) != SYMRAIL_OK)
            return -1;
        uint64_t t2 = sr_time_ns();
        OPS.rkey_release(ep10, 2);
        uint64_t t3 = sr_time_ns();
        if (OPS.mem_dereg(ctx[0], 2) != SYMRAIL_OK)
            return -1;
        uint64_t t4 = sr_time_ns();
        t[T_REG][r] = t1 - t0;
        t[T_UNPACK][r] = t2 - t1;
        t[T_RELEASE][r] = t3 - t2;
        t[T_DEREG][r] = t4 - t3;
    }
    for (int i = 0; i < T_N; i++)
        us_p[i] = median_us(t[i]);
    return 0;
}

/* ns per put of `len` bytes through a fresh key of [buf, buf+seglen). */
static double put_ns(void *buf, size_t seglen, const char *name, size_t len)
{
    sr_tl_mem_t m = { .addr = buf, .len = seglen, .shm_name = name, .generation = 100 };
    unsigned char key[SR_TL_MKEY_MAX];
    size_t klen = sizeof(key);
    char *src = malloc(len);
    memset(src, 1, len);
    OPS.mem_reg(ctx[0], 3, &m);
    OPS.mkey_pack(ctx[0], 3, key, &klen);
    OPS.rkey_unpack(ep10, 3, key, klen);
    long iters = (long)(((size_t)256 << 20) / len);
    if (iters > 200000)
        iters = 200000;
    /* Touch every page first (the mapping's too): first-touch faults are not
     * the transfer's cost. */
    for (size_t off = 0; off + len <= seglen; off += len > 4096 ? len : 4096)
        OPS.put(ep10, 0, src, 3, off, len, NULL);
    uint64_t t0 = sr_time_ns();
    for (long i = 0; i < iters; i++)
        if (OPS.put(ep10, 0, src, 3, (i * len) % (seglen - len + 1), len, NULL) != SYMRAIL_OK)
            iters = i + 1;
    double ns = (double)(sr_time_ns() - t0) / (double)iters;
    OPS.rkey_release(ep10, 3);
    OPS.mem_dereg(ctx[0], 3);
    free(src);
    return ns;
}

int main(int argc, char **argv)
{
    size_t max_mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
    if (up() != 0) {
        fprintf(stderr, "seg_reg_bench: the shared-memory transport did not come up\n");
        return 1;
    }
    printf("shm segments: median of %d registrations, microseconds\n", REPS);
    printf("%-8s %-7s %10s %10s %10s %10s %12s\n", "size", "path", "reg+pack", "unpack",
           "release", "dereg", "total/GiB");
    for (size_t mib = 16; mib <= max_mib; mib *= 4) {
        size_t len = mib << 20;
        for (int mapped = 0; mapped < 2; mapped++) {
            char name[128];
            void *buf;
            double us[T_N];
            sr_shm_name(name, sizeof(name), "bench-seg", 0, "obj");
            if (mapped ? sr_shm_create(name, len, 0, &buf) != SYMRAIL_OK
                       : (buf = malloc(len)) == NULL) {
                printf("%-5zu MiB %-7s (no memory)\n", mib, mapped ? "map" : "cma");
                continue;
            }
            int rc = measure(buf, len, mapped ? name : NULL, us);
            if (rc == 0) {
                double total = us[0] + us[1] + us[2] + us[3];
                printf("%5zu MiB %-7s %10.1f %10.1f %10.1f %10.1f %12.1f\n", mib,
                       mapped ? "map" : "cma", us[0], us[1], us[2], us[3],
                       total * 1024.0 / (double)mib);
            } else {
                printf("%5zu MiB %-7s failed (see the log)\n", mib, mapped ? "map" : "cma");
            }
            if (mapped) {
                sr_shm_unlink(name);
                sr_shm_unmap(buf, len);
            } else {
                free(buf);
            }
        }
    }

    printf("\nput through a segment key, ns per put (pages touched)\n");
    printf("%-8s %10s %10s\n", "bytes", "map", "cma");
    size_t seglen = 64u << 20;
    char name[128];
    void *obj, *priv = malloc(seglen);
    sr_shm_name(name, sizeof(name), "bench-seg", 0, "put");
    if (priv == NULL || sr_shm_create(name, seglen, 0, &obj) != SYMRAIL_OK)
        return 1;
    memset(priv, 0, seglen);
    memset(obj, 0, seglen);
    static const size_t sizes[] = { 8, 4096, 16384, 65536, 1 << 20 };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        printf("%-8zu %10.0f %10.0f\n", sizes[i], put_ns(obj, seglen, name, sizes[i]),
               put_ns(priv, seglen, NULL, sizes[i]));
    sr_shm_unlink(name);
    sr_shm_unmap(obj, seglen);
    free(priv);
    OPS.disconnect(ep10);
    OPS.fini(ctx[1]);
    OPS.fini(ctx[0]);
    sr_env_release(&env);
    return 0;
}
