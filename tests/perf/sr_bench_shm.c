/*
 * sr_bench, shared-memory mode: bandwidth next to memcpy between the same
 * buffers, and latencies.
 */
#include "sr_bench.h"

/* One bandwidth table: blocking, nbi window, memcpy, and the two ratios. */
static void bw_table(bench_t *b, const char *op, kern_fn blocking, kern_fn nbi, kern_fn copy,
                     int have_map)
{
    char sz[16], h1[24], h2[24], h3[24], h4[24];
    size_t step = b->quick ? 4 : 2;

    printf("\n# %s bandwidth, PE 0 %s PE 1; MB/s = 10^6 bytes/s; memcpy = same buffers via "
           "symrail_ptr\n", op, strcmp(op, "put") == 0 ? "->" : "<-");
    snprintf(h1, sizeof(h1), "%s MB/s", op);
    snprintf(h2, sizeof(h2), "%s_nbi MB/s", op);
    snprintf(h3, sizeof(h3), "%s/memcpy", op);
    snprintf(h4, sizeof(h4), "nbi/memcpy");
    printf("# %7s %12s %12s %12s %12s %12s\n", "bytes", h1, h2, "memcpy MB/s", h3, h4);
    for (size_t n = MIN_SIZE;; n *= step) {
        if (n > MAX_SIZE)
            n = MAX_SIZE;
        kern_fn k[3] = { blocking, nbi, copy };
        double ns[3];
        send_cmd(b, CMD_NOP, 0);    /* keeps PE 1 spinning rather than asleep */
        measure(b, n, k, have_map ? 3 : 2, ns);
        printf("  %7s", fmt_size(n, sz, sizeof(sz)));
        print_mbs(n * 1e3 / ns[0]);
        print_mbs(n * 1e3 / ns[1]);
        if (have_map) {
            print_mbs(n * 1e3 / ns[2]);
            printf(" %12.2f %12.2f\n", ns[2] / ns[0], ns[2] / ns[1]);
        } else {
            printf(" %12s %12s %12s\n", "n/a", "n/a", "n/a");
        }
        fflush(stdout);
        if (n == MAX_SIZE)
            break;
    }
}

static void lat_row(const char *what, double ns)
{
    printf("  %-46s %12.1f %12.2f\n", what, ns, 1e3 / ns);
    fflush(stdout);
}

int drive(bench_t *b)
{
    int have_map = b->dst_map != NULL && b->gsrc_map != NULL;
    double ns[4];

    printf("# sr_bench, symrail %s: %d PEs, PE 0 drives, PE 1 is the target\n",
           symrail_version_string(), symrail_n_pes());
    printf("# %s run: %s sizes, ~%.0f ms per kernel and size, median of %d rounds\n",
           b->quick ? "quick" : "full", b->quick ? "power-of-4" : "power-of-2",
           b->target_ns / 1e6, b->rounds);
    printf("# put_nbi/get_nbi: windows of %d operations, each ended by symrail_quiet\n",
           NBI_WINDOW);
    if (!have_map)
        printf("# PE 1's heap is not mapped here (symrail_ptr is NULL): no memcpy reference\n");
    if (verify(b) != 0)
        return 1;

    bw_table(b, "put", k_put, k_put_nbi, k_memcpy_put, have_map);
    bw_table(b, "get", k_get, k_get_nbi, k_memcpy_get, have_map);

    printf("\n# latency and message rate, 8-byte payloads, PE 0 -> PE 1\n");
    printf("# %-46s %12s %12s\n", "operation", "ns/op", "Mops/s");
    {
        kern_fn k[4] = { k_put, k_get, k_put_nbi, k_memcpy_put };
        send_cmd(b, CMD_NOP, 0);
        measure(b, 8, k, have_map ? 4 : 3, ns);
        lat_row("put (blocking)", ns[0]);
        lat_row("get (blocking)", ns[1]);
        lat_row("put_nbi issue rate (window + quiet)", ns[2]);
        if (have_map)
            lat_row("memcpy to symrail_ptr (reference)", ns[3]);
    }
    {
        /* Give PE 1 time to pass its polling phase and fall asleep. */
        kern_fn k[1] = { k_put };
        send_cmd(b, CMD_SLEEP, 0);
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        measure(b, 8, k, 1, ns);
        CHECK(symrail_barrier_all());
        lat_row("put (blocking), PE 1 asleep in barrier_all", ns[0]);
    }
    {
        kern_fn k[1] = { k_fetch_add };
        send_cmd(b, CMD_NOP, 0);
        measure(b, 0, k, 1, ns);
        lat_row("atomic_fetch_add (blocking)", ns[0]);
    }
    lat_row("put_signal SET + signal_wait_until, round trip",
            measure_coop(b, CMD_SIGNAL_PP, k_signal_pp));
    lat_row("notify_send + notify_wait, round trip", measure_coop(b, CMD_NOTIFY_PP, k_notify_pp));
    lat_row("barrier_all (2 PEs)", measure_coop(b, CMD_BARRIER, k_barrier));
    return 0;
}
