/*
 * Ring demo: every PE puts a block into its right neighbour's buffer, reads
 * its left neighbour's buffer back with a get, verifies both byte for byte,
 * then passes a notification message around the ring.  PE 0 prints a table.
 *
 *   symrun -n 4 ./ring [bytes]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <symrail.h>
#include <time.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        symrail_status_t st_ = (call);                                           \
        if (st_ != SYMRAIL_OK) {                                                 \
            fprintf(stderr, "PE %d: %s failed: %s\n", symrail_my_pe(), #call,    \
                    symrail_strerror(st_));                                      \
            symrail_abort(1, #call);                                             \
        }                                                                        \
    } while (0)

typedef struct {
    double   put_us, get_us, notify_us;
    uint64_t errors;
} result_t;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static unsigned char pattern(int pe, size_t i)
{
    return (unsigned char)(pe * 131 + i * 7 + 1);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1 << 20;
    symrail_init();
    int me = symrail_my_pe(), npes = symrail_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    unsigned char *inbox = symrail_malloc(n);   /* written by the left neighbour */
    unsigned char *mine = symrail_malloc(n);    /* read by the right neighbour */
    result_t *results = symrail_calloc((size_t)npes, sizeof(result_t));
    unsigned char *src = malloc(n), *back = malloc(n);
    if (!inbox || !mine || !results || !src || !back)
        symrail_abort(1, "allocation failed");
    for (size_t i = 0; i < n; i++)
        src[i] = mine[i] = pattern(me, i);
    result_t r = { 0 };
    CHECK(symrail_barrier_all());

    double t0 = now_us();
    CHECK(symrail_put(inbox, src, n, right));
    r.put_us = now_us() - t0;
    CHECK(symrail_barrier_all());
    for (size_t i = 0; i < n; i++)
        r.errors += inbox[i] != pattern(left, i);

    t0 = now_us();
    CHECK(symrail_get(back, mine, n, left));
    r.get_us = now_us() - t0;
    for (size_t i = 0; i < n; i++)
        r.errors += back[i] != pattern(left, i);

    /* A token travels the ring as a notification: PE 0 starts it. */
    symrail_notify_t msg;
    t0 = now_us();
    if (me == 0) {
        CHECK(symrail_notify_send(right, 1, "token", 6));
        CHECK(symrail_notify_wait(10000, &msg));
    } else {
        CHECK(symrail_notify_wait(10000, &msg));
        CHECK(symrail_notify_send(right, 1, msg.payload, msg.len));
    }
    r.notify_us = now_us() - t0;
    if (msg.src_pe != left || msg.tag != 1 || msg.len != 6 || strcmp((char *)msg.payload, "token"))
        r.errors++;

    CHECK(symrail_put(&results[me], &r, sizeof(r), 0));
    CHECK(symrail_barrier_all());
    int rc = 0;
    if (me == 0) {
        printf("ring of %d PEs, %zu bytes per put/get\n", npes, n);
        printf("%4s %12s %12s %12s %12s %8s\n", "PE", "put us", "get us", "put MB/s", "notify us",
               "errors");
        for (int pe = 0; pe < npes; pe++) {
            result_t *x = &results[pe];
            printf("%4d %12.1f %12.1f %12.1f %12.1f %8llu\n", pe, x->put_us, x->get_us,
                   n / (x->put_us > 0 ? x->put_us : 1), x->notify_us,
                   (unsigned long long)x->errors);
            rc |= x->errors != 0;
        }
        printf("%s\n", rc ? "ring: FAILED" : "ring: all data verified");
    }
    symrail_free(results);
    symrail_free(mine);
    symrail_free(inbox);
    free(src);
    free(back);
    symrail_finalize();
    return rc;
}
