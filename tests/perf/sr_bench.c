/*
 * sr_bench: point-to-point benchmark in the style of the OSU micro-benchmarks.
 *
 *   symrun -n 2 ./sr_bench [--quick] [--shm | --net [options]]   (--help lists them)
 *
 * PE 0 drives and prints; PE 1 is the target.  Every bandwidth figure is
 * printed next to a plain memcpy between the very same two buffers (the local
 * buffer and the symrail_ptr() view of PE 1's symmetric buffer), measured in
 * the same run and interleaved with the symrail measurement, so the ratio
 * shows the library's overhead rather than the machine's memory system.
 *
 * While PE 0 measures one-sided operations, PE 1 busy-polls a command word
 * in user space, like an MPI target spinning in its progress engine.  One
 * extra row measures puts while PE 1 sleeps inside symrail_barrier_all, which
 * is what an application that waits in the library sees.
 *
 * Network mode (--net, and the default when symrail_ptr() of PE 1 is NULL,
 * as over verbs): there is no memcpy to compare with, so it measures what a
 * network benchmark such as perftest does, with every buffer in the
 * symmetric heap (registered memory: zero-copy, no bounce buffers):
 * put_nbi and get_nbi bandwidth in windows ended by symrail_quiet, blocking
 * put and get bandwidth, for 64 KiB .. 4 MiB, and 8-byte latencies,
 * including a put_signal ping-pong whose half round trip is comparable to
 * ib_write_lat; latencies are timed one operation at a time and reported as
 * median and mean.  PE 1 waits inside the library there (--target-spin: in
 * user space), as perftest's passive side does, so that it does not take a
 * CPU from a software RDMA device.  tests/perf/rxe_bench.sh runs it next to
 * perftest on Soft-RoCE.
 *
 * Exits non-zero if any symrail call fails or data arrives corrupted.
 * Public API only.
 */
#include "sr_bench.h"

static int parse_size(const char *s, size_t *n_p)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end != '\0' || v == 0 || v > MAX_SIZE)
        return -1;
    *n_p = (size_t)v;
    return 0;
}

static int parse_sizes(bench_t *b, const char *list)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    b->nsizes = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (b->nsizes == NET_MAX_SIZES || parse_size(t, &b->sizes[b->nsizes]) != 0)
            return -1;
        b->nsizes++;
    }
    return b->nsizes > 0 ? 0 : -1;
}

static void usage(FILE *f, const char *argv0)
{
    fprintf(f, "usage: symrun -n 2 %s [--quick] [--shm | --net [--sizes LIST] [--window N]\n"
               "       [--time-ms MS] [--target-spin] [--bw-only] [--put-nbi-only]]\n"
               "  --quick        fewer sizes and shorter runs, for a smoke test\n"
               "  --net          network mode (the default when symrail_ptr of PE 1 is NULL):\n"
               "                 symmetric buffers on both sides, 64K..4M, perftest-like table\n"
               "  --shm          the memcpy-referenced mode even if PE 1 is not mapped\n"
               "  --sizes LIST   network mode sizes, e.g. 64K,256K,1M,4M (default: powers of\n"
               "                 2 from 64K to 4M; with --quick, powers of 4)\n"
               "  --window N     nbi operations per quiet (default: 16 MiB worth, 1..64)\n"
               "  --time-ms MS   time per kernel and size (network mode default 1500, quick 600)\n"
               "  --target-spin  PE 1 busy-polls in user space rather than waiting in symrail\n"
               "  --bw-only      network mode without the latency table\n"
               "  --put-nbi-only network mode, put_nbi bandwidth alone (no other kernel,\n"
               "                 table or latency): for slow, shaped links\n",
            argv0);
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof(b));
    b.net = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            b.quick = 1;
        } else if (strcmp(argv[i], "--net") == 0) {
            b.net = 1;
        } else if (strcmp(argv[i], "--shm") == 0) {
            b.net = 0;
        } else if (strcmp(argv[i], "--target-spin") == 0) {
            b.target_spin = 1;
        } else if (strcmp(argv[i], "--bw-only") == 0) {
            b.bw_only = 1;
        } else if (strcmp(argv[i], "--put-nbi-only") == 0) {
            b.bw_only = b.put_nbi_only = 1;
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            if (parse_sizes(&b, argv[++i]) != 0) {
                fprintf(stderr, "sr_bench: --sizes wants sizes up to 16M like 64K,1M\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc) {
            b.window_opt = atoi(argv[++i]);
            if (b.window_opt < 1) {
                fprintf(stderr, "sr_bench: --window wants a positive count\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--time-ms") == 0 && i + 1 < argc) {
            b.time_ms = atof(argv[++i]);
            if (!(b.time_ms > 0)) {
                fprintf(stderr, "sr_bench: --time-ms wants a positive number\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout, argv[0]);
            return 0;
        } else {
            usage(stderr, argv[0]);
            return 2;
        }
    }
    b.rounds = b.quick ? 3 : 5;
    b.target_ns = b.quick ? 3e6 : 50e6;
    b.window = NBI_WINDOW;
    b.max_size = MAX_SIZE;

    CHECK(symrail_init_status());
    int me = symrail_my_pe();
    if (symrail_n_pes() != 2) {
        if (me == 0)
            fprintf(stderr, "sr_bench: needs exactly 2 PEs, got %d\n", symrail_n_pes());
        symrail_finalize();
        return 1;
    }

    b.ctl = symrail_align(64, sizeof(ctl_t));
    b.dst = symrail_align(4096, MAX_SIZE);
    b.gsrc = symrail_align(4096, MAX_SIZE);
    if (b.ctl == NULL || b.dst == NULL || b.gsrc == NULL)
        symrail_abort(1, "sr_bench: symmetric allocation failed (is SYMRAIL_HEAP_SIZE >= 64M?)");
    memset(b.ctl, 0, sizeof(ctl_t));
    memset(b.dst, 0, MAX_SIZE);
    memset(b.gsrc, 0, MAX_SIZE);
    if (me == 0) {
        b.dst_map = symrail_ptr(b.dst, TARGET_PE);
        b.gsrc_map = symrail_ptr(b.gsrc, TARGET_PE);
    }
    /* Nobody signals a control word before its owner has cleared it. */
    CHECK(symrail_barrier_all());

    /* PE 0 picks the mode; PE 1 learns it, so both allocate alike. */
    if (me == 0) {
        if (b.net < 0)
            b.net = b.dst_map == NULL || b.gsrc_map == NULL;
        CHECK(symrail_atomic_set(&b.ctl->mode, 1 + (uint64_t)b.net, TARGET_PE));
    }
    CHECK(symrail_barrier_all());
    if (me != 0)
        b.net = (int)symrail_signal_fetch(&b.ctl->mode) - 1;

    if (b.net) {
        if (b.nsizes == 0)
            for (size_t n = NET_MIN_SIZE; n <= NET_MAX_SIZE && b.nsizes < NET_MAX_SIZES;
                 n *= b.quick ? 4 : 2)
                b.sizes[b.nsizes++] = n;
        b.max_size = 8;
        for (int i = 0; i < b.nsizes; i++)
            if (b.sizes[i] > b.max_size)
                b.max_size = b.sizes[i];
        b.rounds = 3;
        b.target_ns = b.time_ms > 0 ? b.time_ms * 1e6 : b.quick ? 600e6 : 1500e6;
        /* Symmetric, so registered: transfers go without bounce copies. */
        b.src = symrail_align(4096, b.max_size);
        b.gdst = symrail_align(4096, b.max_size);
        if (b.src == NULL || b.gdst == NULL)
            symrail_abort(1, "sr_bench: symmetric allocation failed (is SYMRAIL_HEAP_SIZE >= 64M?)");
        memset(b.gdst, 0, b.max_size);
        /* Private: registered on the fly or copied (SYMRAIL_IB_ZCOPY_THRESH). */
        b.psrc = malloc(b.max_size);
        b.pdst = malloc(b.max_size);
        if (b.psrc == NULL || b.pdst == NULL)
            symrail_abort(1, "sr_bench: out of memory");
        memset(b.psrc, 0x5a, b.max_size);
        memset(b.pdst, 0, b.max_size);
        CHECK(symrail_barrier_all());
    } else if (me == 0) {
        b.src = aligned_alloc(4096, MAX_SIZE);
        b.gdst = aligned_alloc(4096, MAX_SIZE);
        if (b.src == NULL || b.gdst == NULL)
            symrail_abort(1, "sr_bench: out of memory");
        memset(b.gdst, 0, MAX_SIZE);
    }

    int rc = 0;
    if (me == 0) {
        rc = b.net ? drive_net(&b) : drive(&b);
        send_cmd(&b, CMD_STOP, 0);
        if (b.data_errors) {
            fprintf(stderr, "sr_bench: %llu operations returned wrong data\n",
                    (unsigned long long)b.data_errors);
            rc = 1;
        }
    } else {
        serve(&b);
        if (b.data_errors) {
            fprintf(stderr, "sr_bench: PE 1: %llu pings carried wrong data\n",
                    (unsigned long long)b.data_errors);
            rc = 1;
        }
    }
    CHECK(symrail_barrier_all());
    if (b.net) {
        symrail_free(b.gdst);
        symrail_free(b.src);
    } else {
        free(b.src);
        free(b.gdst);
    }
    symrail_free(b.gsrc);
    symrail_free(b.dst);
    symrail_free(b.ctl);
    symrail_finalize();
    return rc;
}
