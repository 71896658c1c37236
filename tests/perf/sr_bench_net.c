/* sr_bench, network mode: perftest-like bandwidth and latency tables. */
#include "sr_bench.h"

/* nbi operations per quiet at size n: NET_WINDOW_BYTES in flight, 1..NBI_WINDOW. */
static int net_window(const bench_t *b, size_t n)
{
    if (b->window_opt > 0)
        return b->window_opt;
    size_t w = NET_WINDOW_BYTES / n;
    return w < 1 ? 1 : w > NBI_WINDOW ? NBI_WINDOW : (int)w;
}

/*
 * Latency with every operation timed on its own: the median shrugs off the
 * scheduling hiccups of an emulated or shared machine, which a mean over a
 * loop does not (perftest reports both, as t_typical and t_avg).  Calls `fn`
 * exactly `count` times, or with count 0 until b->target_ns is spent (at
 * least 20 times).
 */
static void lat_samples(bench_t *b, kern_fn fn, uint64_t count, double *mean_p, double *median_p)
{
    uint64_t n = 0, cap = 1024, t_start = now_ns();
    double *v = malloc(cap * sizeof(*v)), sum = 0;
    if (v == NULL)
        symrail_abort(1, "sr_bench: out of memory");
    while (count ? n < count : n < 20 || (double)(now_ns() - t_start) < b->target_ns) {
        if (n == cap) {
            double *nv = realloc(v, 2 * cap * sizeof(*v));
            if (nv == NULL)
                symrail_abort(1, "sr_bench: out of memory");
            v = nv;
            cap *= 2;
        }
        uint64_t t0 = now_ns();
        CHECK(fn(b, 8, 1));
        v[n] = (double)(now_ns() - t0);
        sum += v[n++];
    }
    qsort(v, n, sizeof(*v), cmp_double);
    *mean_p = sum / (double)n;
    *median_p = v[n / 2];
    free(v);
}

/* k_signal_pp does iteration `cur_base + 1` each call: here, one at a time. */
static symrail_status_t k_signal_pp_one(bench_t *b, size_t n, uint64_t iters)
{
    symrail_status_t st = k_signal_pp(b, n, iters);
    b->cur_base++;
    return st;
}

static void net_lat_row(const char *what, double median_ns, double mean_ns)
{
    printf("  %-50s %12.2f %12.2f\n", what, median_ns / 1e3, mean_ns / 1e3);
    fflush(stdout);
}

/*
 * Bandwidth of put_nbi, put, get_nbi and get at each size, and 8-byte
 * latencies.  All four bandwidth kernels of one size run in turns, round
 * after round (see measure), so a slow spell of the machine hits them alike.
 */
int drive_net(bench_t *b)
{
    char sz[24];
    double ns[4];
    symrail_stats_t st0, st1;

    printf("# sr_bench --net, symrail %s: %d PEs, PE 0 drives, PE 1 is the target and %s\n",
           symrail_version_string(), symrail_n_pes(),
           b->target_spin ? "busy-polls in user space" : "waits in symrail_signal_wait_until");
    printf("# network mode: put source and get destination in the symmetric heap too "
           "(registered: zero-copy)\n");
    printf("# ~%.0f ms per kernel and size, median of %d rounds; MB/s = 10^6 bytes/s\n",
           b->target_ns / 1e6, b->rounds);
    if (b->window_opt > 0)
        printf("# put_nbi/get_nbi: windows of %d operations, each ended by symrail_quiet\n",
               b->window_opt);
    else
        printf("# put_nbi/get_nbi: windows of %zu MiB (%d..%d operations), each ended by "
               "symrail_quiet\n", NET_WINDOW_BYTES >> 20, 1, NBI_WINDOW);
    if (verify(b) != 0)
        return 1;
    CHECK(symrail_stats(&st0));

    printf("\n# bandwidth, PE 0 -> PE 1 (put) and PE 0 <- PE 1 (get), MB/s\n");
    printf("# %7s %6s %12s %12s %12s %12s\n", "bytes", "window", "put_nbi", "put", "get_nbi",
           "get");
    for (int i = 0; i < b->nsizes; i++) {
        size_t n = b->sizes[i];
        kern_fn k[4] = { k_put_nbi, k_put, k_get_nbi, k_get };
        int nk = b->put_nbi_only ? 1 : 4;
        b->window = net_window(b, n);
        send_cmd(b, CMD_NOP, 0);
        measure(b, n, k, nk, ns);
        printf("  %7s %6d", fmt_size(n, sz, sizeof(sz)), b->window);
        for (int j = 0; j < 4; j++)
            if (j < nk)
                print_mbs(n * 1e3 / ns[j]);
            else
                printf(" %12s", "-");
        printf("\n");
        fflush(stdout);
    }
    CHECK(symrail_stats(&st1));
    printf("# PE 0 during the bandwidth runs: %llu work requests (%.1f KiB each), %llu stalls "
           "(qp full %llu, cq full %llu)\n",
           (unsigned long long)(st1.slices_posted - st0.slices_posted),
           st1.slices_posted > st0.slices_posted
               ? (double)(st1.put_bytes - st0.put_bytes + st1.get_bytes - st0.get_bytes) /
                     (double)(st1.slices_posted - st0.slices_posted) / 1024
               : 0.0,
           (unsigned long long)(st1.stalls - st0.stalls),
           (unsigned long long)(st1.qp_full - st0.qp_full),
           (unsigned long long)(st1.cq_full - st0.cq_full));
    if (b->put_nbi_only)
        return 0;

    /* Blocking, so that each transfer starts from the caller's buffer. */
    printf("\n# private (malloc'd) buffers against the heap: blocking put and get, MB/s; "
           "SYMRAIL_IB_ZCOPY_THRESH=%s\n", getenv("SYMRAIL_IB_ZCOPY_THRESH") ?
           getenv("SYMRAIL_IB_ZCOPY_THRESH") : "default");
    printf("# %7s %10s %10s %6s %10s %10s %6s\n", "bytes", "put heap", "put priv", "ratio",
           "get heap", "get priv", "ratio");
    CHECK(symrail_stats(&st0));
    for (int i = 0; i < b->nsizes; i++) {
        size_t n = b->sizes[i];
        kern_fn k[4] = { k_put, k_put_priv, k_get, k_get_priv };
        send_cmd(b, CMD_NOP, 0);
        measure(b, n, k, 4, ns);
        printf("  %7s %10.1f %10.1f %6.2f %10.1f %10.1f %6.2f\n", fmt_size(n, sz, sizeof(sz)),
               n * 1e3 / ns[0], n * 1e3 / ns[1], ns[0] / ns[1], n * 1e3 / ns[2], n * 1e3 / ns[3],
               ns[2] / ns[3]);
        fflush(stdout);
    }
    CHECK(symrail_stats(&st1));
    printf("# PE 0 registration cache: %llu hits, %llu misses, %llu registrations, "
           "%llu invalidations, %llu evictions\n",
           (unsigned long long)(st1.rcache_hits - st0.rcache_hits),
           (unsigned long long)(st1.rcache_misses - st0.rcache_misses),
           (unsigned long long)(st1.rcache_regs - st0.rcache_regs),
           (unsigned long long)(st1.rcache_invalidations - st0.rcache_invalidations),
           (unsigned long long)(st1.rcache_evictions - st0.rcache_evictions));
    if (b->bw_only)
        return 0;

    printf("\n# latency, 8-byte payloads, PE 0 -> PE 1; each operation timed on its own\n");
    printf("# %-50s %12s %12s\n", "operation", "median usec", "mean usec");
    {
        static const char *what[4] = { "put (blocking: until the source may be reused)",
                                       "put + quiet (until remote completion)", "get (blocking)",
                                       "atomic_fetch_add (blocking)" };
        kern_fn k[4] = { k_put, k_put_quiet, k_get, k_fetch_add };
        send_cmd(b, CMD_NOP, 0);
        for (int j = 0; j < 4; j++) {
            double mean, median;
            lat_samples(b, k[j], 0, &mean, &median);
            net_lat_row(what[j], median, mean);
        }
    }
    {
        /* PE 1 answers a fixed count: size it from a short warm-up. */
        double mean, median;
        uint64_t warm = 20;
        send_cmd(b, CMD_SIGNAL_PP, warm);
        double per = run_timed(b, k_signal_pp, 0, warm) / (double)warm;
        double want = b->target_ns / per;
        uint64_t iters = want < 20 ? 20 : want > 1e6 ? 1000000 : (uint64_t)want;
        send_cmd(b, CMD_SIGNAL_PP, iters);
        lat_samples(b, k_signal_pp_one, iters, &mean, &median);
        net_lat_row("put_signal SET ping-pong, round trip", median, mean);
        net_lat_row("put_signal SET ping-pong, one way (round trip/2)", median / 2, mean / 2);
    }
    return 0;
}
