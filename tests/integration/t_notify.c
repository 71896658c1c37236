/* Notification messages: in order per sender, payloads intact, far more
 * messages than receive slots (the sender waits for room, never drops). */
#include "tcommon.h"

#include <unistd.h>

#define PER_PEER 3000

typedef struct {
    int32_t  src;
    uint32_t seq;
} hdr_t;

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    uint32_t *next = calloc((size_t)n, sizeof(uint32_t));
    unsigned char payload[SYMRAIL_NOTIFY_MAX_PAYLOAD];
    symrail_notify_t msg;
    T_ASSERT(next != NULL, "allocation failed");

    /* Nothing has been sent yet: poll is empty and a short wait times out. */
    T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
    T_EXPECT(symrail_notify_wait(20, &msg), SYMRAIL_ERR_TIMEOUT);
    T_CHECK(symrail_barrier_all());

    /* Everybody sends to everybody else, interleaved with draining. */
    uint64_t expected = (uint64_t)(n - 1) * PER_PEER, got = 0;
    for (uint32_t seq = 0; seq < PER_PEER; seq++) {
        for (int k = 1; k < n; k++) {
            int pe = (me + k) % n;
            size_t len = sizeof(hdr_t) + (seq * 13u + (unsigned)me) % (sizeof(payload) - sizeof(hdr_t) + 1);
            hdr_t h = { me, seq };
            memcpy(payload, &h, sizeof(h));
            t_fill(payload + sizeof(h), len - sizeof(h), me, seq);
            T_CHECK(symrail_notify_send(pe, 0x100u + seq % 7, payload, len));
        }
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
