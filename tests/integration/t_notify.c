/* Notification messages: in order per sender, payloads intact, far more
 * messages than receive slots (the sender waits for room, never drops). */
#include "tcommon.h"

#include <time.h>
#include <unistd.h>

#define PER_PEER 3000

typedef struct {
    int32_t  src;
    uint32_t seq;
} hdr_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A receiver that does not consume holds its slots: PE 0's sends to PE 1
 * stall while PE 1 sleeps (mode "stall": they end only after PE 1 began to
 * consume, by the clock both PEs of one machine share), or fail with a
 * timeout while PE 1 consumes nothing (mode "stuck": PE 1 waits for PE 0's
 * word that its send timed out).  Run with 2 PEs and few slots.
 */
static int stall_test(int stuck)
{
    int me = symrail_my_pe();
    const char *e = getenv("SYMRAIL_NOTIFY_SLOTS");
    int slots = e ? atoi(e) : 64, count = 4 * slots, sent = 0;
    symrail_notify_t msg;
    symrail_status_t st = SYMRAIL_OK;
    double t0 = 0, t1 = 0;
    /* [0]: PE 0's send timed out (stuck); [1]: when PE 1 began to consume. */
    uint64_t *word = symrail_calloc(2, sizeof(uint64_t));
    T_ASSERT(symrail_n_pes() == 2 && word != NULL, "run with 2 PEs");
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        if (stuck) {
            t_wait_unprogressed(&word[0], 1);
        } else {
            struct timespec ts = { 1, 500000000 };
            nanosleep(&ts, NULL);
        }
        uint64_t began = (uint64_t)(now_s() * 1e9);
        for (int i = 0; i < (stuck ? slots : count); i++)
            T_CHECK(symrail_notify_wait(30000, &msg));
        T_CHECK(symrail_put(&word[1], &began, sizeof(began), 0));
    } else {
        t0 = now_s();
        while (sent < count && (st = symrail_notify_send(1, 7, &sent, sizeof(sent))) == SYMRAIL_OK)
            sent++;
        t1 = now_s();
        if (stuck)
            T_CHECK(symrail_atomic_set(&word[0], 1, 1));
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        double began = (double)__atomic_load_n(&word[1], __ATOMIC_ACQUIRE) / 1e9;
        if (stuck) {
            T_ASSERT(st == SYMRAIL_ERR_TIMEOUT, "send to a receiver that never consumes "
                     "returned %d (%s), expected a timeout", (int)st, symrail_strerror(st));
            T_ASSERT(sent == slots, "%d messages went before the timeout, %d slots", sent, slots);
            printf("ok: notify to a receiver that does not consume times out after %d slots\n",
                   slots);
        } else {
            T_CHECK(st);
            T_ASSERT(t1 > began, "%d messages to a receiver asleep 1.5 s were sent %.3f s "
                     "before it began to consume: the sender did not wait for its %d slots",
                     count, began - t1, slots);
            printf("ok: notify sender stalled %.1f s on %d slots until the receiver consumed\n",
                   t1 - t0, slots);
        }
    }
    T_CHECK(symrail_barrier_all());
    symrail_finalize();
    return 0;
}

/* A receiver that never consumes stalls its sender: with SYMRAIL_NOTIFY_SLOTS
 * slots per sender and a short SYMRAIL_OP_TIMEOUT, PE 1's send beyond the
 * slots times out although PE 0 keeps progressing (it waits in
 * signal_wait_until), and goes through once PE 0 has consumed one message. */
static int stall_case(void)
{
    int me = symrail_my_pe();
    unsigned long slots = t_env("SYMRAIL_NOTIFY_SLOTS", 0);
    uint64_t *sig = symrail_calloc(2, sizeof(uint64_t));
    symrail_notify_t msg;
    T_ASSERT(slots >= 1 && slots <= 64 && sig != NULL, "needs SYMRAIL_NOTIFY_SLOTS (1..64)");
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        for (uint32_t i = 0; i < slots; i++)
            T_CHECK(symrail_notify_send(0, i, &i, sizeof(i)));
        uint32_t extra = (uint32_t)slots;
        T_EXPECT(symrail_notify_send(0, extra, &extra, sizeof(extra)), SYMRAIL_ERR_TIMEOUT);
        /* Tell PE 0 to consume one, then the send must go through. */
        T_CHECK(symrail_atomic_set(&sig[0], 1, 0));
        T_CHECK(symrail_notify_send(0, extra, &extra, sizeof(extra)));
        T_CHECK(symrail_atomic_set(&sig[0], 2, 0));
    } else if (me == 0) {
        T_CHECK(symrail_signal_wait_until(&sig[0], SYMRAIL_CMP_GE, 1, NULL));
        T_CHECK(symrail_notify_poll(&msg));
        T_ASSERT(msg.src_pe == 1 && msg.tag == 0, "first message wrong (tag %u)", msg.tag);
        T_CHECK(symrail_signal_wait_until(&sig[0], SYMRAIL_CMP_GE, 2, NULL));
        for (uint32_t i = 1; i <= slots; i++) {
            T_CHECK(symrail_notify_wait(5000, &msg));
            T_ASSERT(msg.src_pe == 1 && msg.tag == i, "message %u has tag %u", i, msg.tag);
        }
        T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
    }
    T_CHECK(symrail_barrier_all());
    t_pass("notify: a sender stalls while its receiver does not consume");
    symrail_finalize();
    return 0;
}

/* Consumes every message waiting, checking order, tag and payload. */
static uint64_t drain(uint32_t *next)
{
    symrail_notify_t msg;
    uint64_t got = 0;
    while (symrail_notify_poll(&msg) == SYMRAIL_OK) {
        hdr_t h;
        memcpy(&h, msg.payload, sizeof(h));
        T_ASSERT(h.src == msg.src_pe, "message claims PE %d, came from %d", h.src, msg.src_pe);
        T_ASSERT(h.seq == next[msg.src_pe], "from PE %d: seq %u, expected %u (out of order)",
                 msg.src_pe, h.seq, next[msg.src_pe]);
        T_ASSERT(msg.tag == 0x100u + h.seq % 7, "tag %u wrong", msg.tag);
        T_ASSERT(t_verify(msg.payload + sizeof(h), msg.len - sizeof(h), msg.src_pe, h.seq) ==
                     SIZE_MAX, "payload of seq %u from PE %d corrupt", h.seq, msg.src_pe);
        next[msg.src_pe]++;
        got++;
    }
    return got;
}

int main(int argc, char **argv)
{
    symrail_init();
    if (argc > 1 && strcmp(argv[1], "consume") == 0)
        return stall_case();
    if (argc > 1)
        return stall_test(strcmp(argv[1], "stuck") == 0);
    int me = symrail_my_pe(), n = symrail_n_pes();
    uint32_t *next = calloc((size_t)n, sizeof(uint32_t));
    unsigned char payload[SYMRAIL_NOTIFY_MAX_PAYLOAD];
    symrail_notify_t msg;
    T_ASSERT(next != NULL, "allocation failed");

    /* Nothing has been sent yet: poll is empty and a short wait times out. */
    T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
    T_EXPECT(symrail_notify_wait(20, &msg), SYMRAIL_ERR_TIMEOUT);
    T_CHECK(symrail_barrier_all());

    /* Everybody sends to everybody else, interleaved with draining: a send
     * that finds no slot drains first (a blocking send could wait for a PE
     * that waits for us). */
    uint64_t expected = (uint64_t)(n - 1) * PER_PEER, got = 0;
    for (uint32_t seq = 0; seq < PER_PEER; seq++) {
        for (int k = 1; k < n; k++) {
            int pe = (me + k) % n;
            size_t len = sizeof(hdr_t) + (seq * 13u + (unsigned)me) % (sizeof(payload) - sizeof(hdr_t) + 1);
            hdr_t h = { me, seq };
            memcpy(payload, &h, sizeof(h));
            t_fill(payload + sizeof(h), len - sizeof(h), me, seq);
            symrail_status_t st;
            while ((st = symrail_notify_trysend(pe, 0x100u + seq % 7, payload, len)) ==
                   SYMRAIL_ERR_AGAIN)
                got += drain(next);
            T_CHECK(st);
        }
        got += drain(next);
    }
    while (got < expected) {
        T_CHECK(symrail_notify_wait(30000, &msg));
        hdr_t h;
        memcpy(&h, msg.payload, sizeof(h));
        T_ASSERT(h.seq == next[msg.src_pe], "from PE %d: seq %u, expected %u (out of order)",
                 msg.src_pe, h.seq, next[msg.src_pe]);
        T_ASSERT(t_verify(msg.payload + sizeof(h), msg.len - sizeof(h), msg.src_pe, h.seq) ==
                     SIZE_MAX, "payload of seq %u from PE %d corrupt", h.seq, msg.src_pe);
        next[msg.src_pe]++;
        got++;
    }
    T_CHECK(symrail_barrier_all());
    T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
    t_pass("notify: 3000 messages per peer pair, ordered, payloads verified");

    /* Empty payloads and messages to oneself. */
    T_CHECK(symrail_notify_send(me, 42, NULL, 0));
    T_CHECK(symrail_notify_wait(1000, &msg));
    T_ASSERT(msg.src_pe == me && msg.tag == 42 && msg.len == 0, "self message wrong");
    t_pass("notify to self with empty payload");

    /* T_EXPECT_NOTIFY_STALL: a burst far beyond SYMRAIL_NOTIFY_SLOTS must make
     * the sender wait for the receiver (counted as a stall), not overrun it. */
    if (t_env("T_EXPECT_NOTIFY_STALL", 0) && symrail_n_pes() > 1) {
        symrail_stats_t s0, s1;
        const int burst = 100;
        T_CHECK(symrail_barrier_all());
        T_CHECK(symrail_stats(&s0));
        if (me == 0)
            for (int i = 0; i < burst; i++)
                T_CHECK(symrail_notify_send(1, 7, NULL, 0));
        if (me == 1) {
            usleep(300000);  /* the sender meets full slots, whatever the machine's speed */
            for (int i = 0; i < burst; i++)
                T_CHECK(symrail_notify_wait(30000, &msg));
        }
        T_CHECK(symrail_stats(&s1));
        if (me == 0)
            T_ASSERT(s1.stalls > s0.stalls, "a burst of %d messages never waited for the "
                     "receiver's slots", burst);
        T_CHECK(symrail_barrier_all());
        t_pass("notify burst waited for the receiver's slots");
    }

    free(next);
    symrail_finalize();
    return 0;
}
