/*
 * A link that goes down mid-transfer (run by run_multihost.sh with PEs
 * mapped round-robin over two hosts, so PE 1 is on the other host than
 * PE 0).  PE 0 streams puts to PE 1 and prints "streaming" once it does; the
 * driver then takes PE 1's host off the network.  Nothing resets a
 * connection when a link dies, so the transfer must fail by itself within
 * SYMRAIL_OP_TIMEOUT, with an error that names the peer, and not hang.
 * The other PEs wait with a bound and leave.
 */
#include "../integration/tcommon.h"

#include <time.h>
#include <unistd.h>

static double since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(void)
{
    size_t blk = 65536, nblk = 64;
    symrail_init();
    int me = symrail_my_pe();
    unsigned char *dst = symrail_malloc(blk * nblk), *src = symrail_malloc(blk);
    T_ASSERT(dst && src && symrail_n_pes() >= 2, "allocation failed or fewer than 2 PEs");
    memset(src, 0x3C, blk);
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        struct timespec t0, tlast;
        symrail_status_t st = SYMRAIL_OK;
        int said = 0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tlast = t0;
        for (unsigned i = 0; st == SYMRAIL_OK && since(&t0) < 120; i++) {
            st = symrail_put_nbi(dst + (i % nblk) * blk, src, blk, 1);
            if (st == SYMRAIL_OK && i % 16 == 15)
                st = symrail_quiet();
            if (st == SYMRAIL_OK) {
                clock_gettime(CLOCK_MONOTONIC, &tlast);
                if (!said && i > 256) {
                    printf("streaming to PE 1\n");
                    fflush(stdout);
                    said = 1;
                }
            }
        }
        if (st == SYMRAIL_OK)
            st = symrail_quiet();
        /* A dead link is silence, as a stopped peer is: unresponsive until
         * the kernel gives up on the connection and the peer is gone. */
        T_ASSERT(st == SYMRAIL_ERR_PEER_GONE || st == SYMRAIL_ERR_TRANSPORT ||
                     st == SYMRAIL_ERR_TIMEOUT || st == SYMRAIL_ERR_PEER_UNRESPONSIVE,
                 "transfers over a dead link ended with %d (%s)", (int)st, symrail_strerror(st));
        printf("ok: the link to PE 1 went down: \"%s\" %.1f s after the last transfer that "
               "completed\n", symrail_strerror(st), since(&tlast));
        fflush(stdout);
        _exit(0);
    }
    /* Bounded: a PE whose peers left without a word must not wait forever. */
    symrail_notify_t msg;
    symrail_status_t st = symrail_notify_wait((int)t_env("T_WAIT_MS", 20000), &msg);
    printf("PE %d: left with \"%s\"\n", me, symrail_strerror(st));
    fflush(stdout);
    _exit(0);
}
