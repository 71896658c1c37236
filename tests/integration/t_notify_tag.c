/*
 * Notifications of up to SYMRAIL_NOTIFY_MAX_PAYLOAD bytes (sent as several
 * transport messages), the status field, waiting by tag, reserved tags.
 *   t_notify_tag           sizes and order, tags, timeouts, reserved tags,
 *                          status, handlers of reserved tags (any PE count)
 *   t_notify_tag sizes     the sizes alone (with few slots: the others send
 *                          more than a slot's worth without consuming)
 *   t_notify_tag many      every PE sends to PE 0 while PE 0 does not consume:
 *                          it holds no more than its slots, then gets all
 *   t_notify_tag trysend   2 PEs, SYMRAIL_NOTIFY_SLOTS=2: what trysend's
 *                          SYMRAIL_OK and SYMRAIL_ERR_AGAIN mean
 *   t_notify_tag peergone  2 PEs: wait_tag on a sender that left ends in an error
 */
#include "core/notify.h"
#include "tcommon.h"

#include <time.h>
#include <unistd.h>

#define MAXP SYMRAIL_NOTIFY_MAX_PAYLOAD

static int me, npes;
static unsigned char buf[MAXP];
static symrail_notify_t msg;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Around every fragment boundary (248 bytes in the first, 256 in the
 * others), the largest, and small ones between. */
static const size_t sizes[] = { 4096, 0, 1, 4, 247, 4, 248, 249, 255, 256, 257, 4, 503, 504,
                                505, 760, 761, 1000, 4, 2047, 4095, 4, 4096, 3, 4096, 7 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void check_msg(const symrail_notify_t *m, int src, uint32_t tag, size_t len,
                      unsigned seq, symrail_status_t status)
{
    T_ASSERT(m->src_pe == src && m->tag == tag && m->len == len && m->status == status,
             "got (PE %d, tag %u, %zu bytes, status %d), expected (PE %d, tag %u, %zu bytes, "
             "status %d)", m->src_pe, m->tag, m->len, (int)m->status, src, tag, len,
             (int)status);
    size_t bad = t_verify(m->payload, len, src, seq);
    T_ASSERT(bad == SIZE_MAX, "message %u from PE %d (%zu bytes): byte %zu wrong", seq, src,
             len, bad);
}

/* Consumes what is there: from each PE, message k has tag k, sizes[k]. */
static int drain_sizes(unsigned *next)
{
    int got = 0;
    while (symrail_notify_poll(&msg) == SYMRAIL_OK) {
        unsigned k = next[msg.src_pe]++;
        T_ASSERT(k < NSIZES, "more messages than sent from PE %d", msg.src_pe);
        check_msg(&msg, msg.src_pe, k, sizes[k], k, SYMRAIL_OK);
        got++;
    }
    return got;
}

static void sizes_case(void)
{
    unsigned *next = calloc((size_t)npes, sizeof(unsigned));
    int got = 0, want = (npes - 1) * (int)NSIZES;
    T_ASSERT(next != NULL, "allocation failed");
    T_CHECK(symrail_barrier_all());
    for (unsigned k = 0; k < NSIZES; k++)
        for (int d = 1; d < npes; d++) {
            int pe = (me + d) % npes;
            symrail_status_t st;
            t_fill(buf, sizes[k], me, k);
            /* Everybody sends to everybody: drain while there is no room. */
            while ((st = symrail_notify_trysend(pe, k, buf, sizes[k])) == SYMRAIL_ERR_AGAIN)
                got += drain_sizes(next);
            T_CHECK(st);
        }
    while (got < want) {
        T_CHECK(symrail_notify_wait(30000, &msg));
        unsigned k = next[msg.src_pe]++;
        T_ASSERT(k < NSIZES, "more messages than sent from PE %d", msg.src_pe);
        check_msg(&msg, msg.src_pe, k, sizes[k], k, SYMRAIL_OK);
        got++;
    }
    T_CHECK(symrail_barrier_all());
    T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
    free(next);
    t_pass("notify: 0..4096-byte messages around every fragment boundary, in order, "
           "verified byte for byte");
}

/* Messages of other tags stay queued, in order, while we wait for one. */
static void tag_case(void)
{
    static const uint32_t tags[] = { 10, 11, 10, 12, 11 };
    static const size_t lens[] = { 4096, 300, 5, 4000, 0 };
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    T_CHECK(symrail_barrier_all());
    for (unsigned i = 0; i < 5; i++) {
        t_fill(buf, lens[i], me, 100 + i);
        T_CHECK(symrail_notify_send(to, tags[i], buf, lens[i]));
    }
    T_CHECK(symrail_notify_wait_tag(12, 10000, &msg));
    check_msg(&msg, from, 12, lens[3], 103, SYMRAIL_OK);
    T_CHECK(symrail_notify_wait_tag(11, 10000, &msg));
    check_msg(&msg, from, 11, lens[1], 101, SYMRAIL_OK);
    T_CHECK(symrail_notify_wait_tag(11, 10000, &msg));
    check_msg(&msg, from, 11, lens[4], 104, SYMRAIL_OK);
    T_EXPECT(symrail_notify_poll_tag(11, &msg), SYMRAIL_ERR_AGAIN);
    T_CHECK(symrail_notify_poll(&msg));
    check_msg(&msg, from, 10, lens[0], 100, SYMRAIL_OK);
    T_CHECK(symrail_notify_poll_tag(10, &msg));
    check_msg(&msg, from, 10, lens[2], 102, SYMRAIL_OK);
    T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
    t_pass("notify: wait_tag takes the oldest of its tag, other tags stay queued in order");

    /* Nothing of that tag comes: the wait ends at its timeout, not before,
     * not much later. */
    t_fill(buf, 64, me, 7);
    T_CHECK(symrail_notify_send(to, 14, buf, 64));
    double t0 = now_s();
    T_EXPECT(symrail_notify_wait_tag(13, 300, &msg), SYMRAIL_ERR_TIMEOUT);
    double dt = now_s() - t0;
    T_ASSERT(dt >= 0.29 && dt < 5.0, "wait_tag(300 ms) returned after %.3f s", dt);
    T_EXPECT(symrail_notify_wait_tag(13, 0, &msg), SYMRAIL_ERR_TIMEOUT);
    T_CHECK(symrail_notify_wait_tag(14, 10000, &msg));
    check_msg(&msg, from, 14, 64, 7, SYMRAIL_OK);
    T_CHECK(symrail_barrier_all());
    t_pass("notify: wait_tag times out after its timeout while another tag waits");
}

static void reserved_case(void)
{
    int to = (me + 1) % npes;
    uint32_t r = SYMRAIL_NOTIFY_TAG_RESERVED;
    T_EXPECT(symrail_notify_send(to, r, buf, 4), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_notify_send(to, 0xffffffffu, NULL, 0), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_notify_trysend(to, r + 5, buf, 4), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_notify_poll_tag(r, &msg), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_notify_wait_tag(r + 1, 10, &msg), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_notify_send(to, 1, buf, MAXP + 1), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_notify_send(to, r - 1, buf, 4));  /* the largest user tag */
    T_CHECK(symrail_notify_wait_tag(r - 1, 10000, &msg));
    t_pass("notify: reserved tags are refused from the public calls");
}

/* The echo service of the handler test: asks once to be called again. */
static int echo_calls;
static symrail_status_t echo(void *arg, int src, uint32_t tag, symrail_status_t status,
                             const void *payload, size_t len)
{
    (void)arg;
    (void)tag;
    (void)status;
    if (echo_calls++ == 0)
        return SYMRAIL_ERR_AGAIN;
    return sr_notify_send_msg(src, SYMRAIL_NOTIFY_TAG_RESERVED + 2, SYMRAIL_ERR_STALE, payload,
                              len, 0);
}

static void internal_case(void)
{
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    uint32_t r = SYMRAIL_NOTIFY_TAG_RESERVED;
    T_CHECK(sr_notify_handler_set(r + 1, echo, NULL));
    T_EXPECT(sr_notify_handler_set(5, echo, NULL), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_barrier_all());

    /* The status travels with the message; user sends carry SYMRAIL_OK. */
    t_fill(buf, 3000, me, 200);
    T_CHECK(sr_notify_send_msg(to, 20, SYMRAIL_ERR_CANCELED, buf, 3000, 1));
    T_CHECK(sr_notify_send_msg(to, 21, SYMRAIL_ERR_STALE, NULL, 0, 1));
    t_fill(buf, 10, me, 202);
    T_CHECK(symrail_notify_send(to, 22, buf, 10));
    T_CHECK(symrail_notify_wait(10000, &msg));
    check_msg(&msg, from, 20, 3000, 200, SYMRAIL_ERR_CANCELED);
    T_CHECK(symrail_notify_wait(10000, &msg));
    check_msg(&msg, from, 21, 0, 201, SYMRAIL_ERR_STALE);
    T_CHECK(symrail_notify_wait(10000, &msg));
    check_msg(&msg, from, 22, 10, 202, SYMRAIL_OK);
    t_pass("notify: the status field travels with the message");

    /* A reserved tag without a handler waits for the core's own receive;
     * the application never sees it. */
    t_fill(buf, 700, me, 300);
    T_CHECK(sr_notify_send_msg(to, r + 3, SYMRAIL_OK, buf, 700, 1));
    t_fill(buf, 4096, me, 301);
    T_CHECK(sr_notify_send_msg(to, r + 1, SYMRAIL_OK, buf, 4096, 1));
    T_CHECK(sr_notify_recv(0, r + 3, 10000, 1, &msg));
    check_msg(&msg, from, r + 3, 700, 300, SYMRAIL_OK);
    /* The handler of PE `to` echoes our request back, from its progress. */
    T_CHECK(sr_notify_recv(0, r + 2, 10000, 1, &msg));
    T_ASSERT(msg.src_pe == to && msg.tag == r + 2 && msg.len == 4096 &&
             msg.status == SYMRAIL_ERR_STALE, "echo wrong: PE %d, tag %#x, %zu bytes, "
             "status %d", msg.src_pe, msg.tag, msg.len, (int)msg.status);
    T_ASSERT(t_verify(msg.payload, 4096, me, 301) == SIZE_MAX, "echoed payload corrupt");
    T_CHECK(symrail_barrier_all());
    T_ASSERT(echo_calls == 2, "the handler ran %d times, expected 2 (once asking to wait)",
             echo_calls);
    T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
    T_EXPECT(sr_notify_recv(0, r + 1, 0, 0, &msg), SYMRAIL_ERR_AGAIN);
    T_CHECK(sr_notify_handler_set(r + 1, NULL, NULL));
    t_pass("notify: a handler of a reserved tag answers from progress; plain poll sees none");
}

/* Every PE sends to PE 0, which does not consume for a while: it holds
 * at most its slots of each sender, the senders wait, and all arrives. */
static int many_case(void)
{
    unsigned long slots = t_env("SYMRAIL_NOTIFY_SLOTS", 64);
    unsigned count = (unsigned)(3 * slots + 2);
    static const size_t lens[] = { 4096, 17, 2500, 256, 0, 249 };
    symrail_stats_t s0, s1;
    T_ASSERT(npes >= 2, "run with 2 PEs or more");
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_stats(&s0));
    if (me != 0) {
        for (unsigned i = 0; i < count; i++) {
            t_fill(buf, lens[i % 6], me, i);
            T_CHECK(symrail_notify_send(0, i, buf, lens[i % 6]));
        }
        T_CHECK(symrail_stats(&s1));
        T_ASSERT(s1.stalls > s0.stalls, "%u messages to a receiver that did not consume never "
                 "waited for its %lu slots", count, slots);
    } else {
        unsigned *next = calloc((size_t)npes, sizeof(unsigned));
        unsigned want = count * (unsigned)(npes - 1);
        T_ASSERT(next != NULL, "allocation failed");
        sleep(1);
        /* Progress without consuming: what comes in must stay bounded. */
        double t0 = now_s();
        while (now_s() - t0 < 0.5)
            T_EXPECT(symrail_notify_poll_tag(0xfffeu, &msg), SYMRAIL_ERR_AGAIN);
        T_CHECK(symrail_stats(&s1));
        uint64_t held = s1.notify_recv - s0.notify_recv;
        T_ASSERT(held <= slots * (uint64_t)(npes - 1), "PE 0 took in %llu messages without "
                 "consuming, more than %lu slots x %d senders", (unsigned long long)held, slots,
                 npes - 1);
        T_ASSERT(held > 0, "nothing arrived while PE 0 progressed");
        for (unsigned got = 0; got < want; got++) {
            T_CHECK(symrail_notify_wait(30000, &msg));
            unsigned i = next[msg.src_pe]++;
            check_msg(&msg, msg.src_pe, i, lens[i % 6], i, SYMRAIL_OK);
        }
        T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
        printf("ok: PE 0 held %llu messages (at most %lu slots x %d senders) until it consumed, "
               "then %u arrived in order\n", (unsigned long long)held, slots, npes - 1, want);
        free(next);
    }
    T_CHECK(symrail_barrier_all());
    symrail_finalize();
    return 0;
}

/* With 2 slots: trysend of a 4096-byte message to a receiver that does not
 * progress sends what fits and returns SYMRAIL_OK, the rest following
 * before the next message; with no room at all, SYMRAIL_ERR_AGAIN sends
 * nothing. */
static int trysend_case(void)
{
    /* flag[0]: PE 0 lets PE 1 begin phase n; flag[1]: PE 1 has seen what it
     * must see while PE 0 does not progress. */
    uint64_t *flag = symrail_calloc(2, sizeof(uint64_t));
    T_ASSERT(npes == 2 && flag != NULL && t_env("SYMRAIL_NOTIFY_SLOTS", 0) == 2,
             "run with 2 PEs and SYMRAIL_NOTIFY_SLOTS=2");
    T_CHECK(symrail_barrier_all());
    for (uint64_t phase = 1; phase <= 2; phase++) {
        if (me == 0) {
            /* Nothing of ours progresses from the flag until PE 1 is done
             * with its checks, however long it takes to get to them. */
            T_CHECK(symrail_atomic_set(flag, phase, 1));
            t_wait_unprogressed(&flag[1], phase);
            if (phase == 1) {
                T_CHECK(symrail_notify_wait(10000, &msg));
                check_msg(&msg, 1, 1, 4096, 1, SYMRAIL_OK);
                T_CHECK(symrail_notify_wait(10000, &msg));
                check_msg(&msg, 1, 3, 8, 3, SYMRAIL_OK);
            } else {
                for (uint32_t t = 4; t <= 7; t += t == 5 ? 2 : 1) {
                    T_CHECK(symrail_notify_wait(10000, &msg));
                    check_msg(&msg, 1, t, 8, t, SYMRAIL_OK);
                }
            }
            T_EXPECT(symrail_notify_poll(&msg), SYMRAIL_ERR_AGAIN);
        } else {
            T_CHECK(symrail_signal_wait_until(flag, SYMRAIL_CMP_GE, phase, NULL));
            if (phase == 1) {
                t_fill(buf, 4096, 1, 1);
                T_CHECK(symrail_notify_trysend(0, 1, buf, 4096));
                t_fill(buf, 8, 1, 2);
                T_EXPECT(symrail_notify_trysend(0, 2, buf, 8), SYMRAIL_ERR_AGAIN);
                T_EXPECT(sr_notify_send_msg(0, 2, SYMRAIL_OK, buf, 8, 0), SYMRAIL_ERR_AGAIN);
                T_CHECK(symrail_atomic_set(&flag[1], phase, 0));
                t_fill(buf, 8, 1, 3);
                T_CHECK(symrail_notify_send(0, 3, buf, 8));
            } else {
                for (uint32_t t = 4; t <= 5; t++) {
                    t_fill(buf, 8, 1, t);
                    T_CHECK(symrail_notify_send(0, t, buf, 8));
                }
                t_fill(buf, 4096, 1, 6);
                T_EXPECT(symrail_notify_trysend(0, 6, buf, 4096), SYMRAIL_ERR_AGAIN);
                T_EXPECT(symrail_notify_trysend(0, 6, buf, 8), SYMRAIL_ERR_AGAIN);
                T_EXPECT(sr_notify_send_msg(0, 6, SYMRAIL_OK, buf, 8, 0), SYMRAIL_ERR_AGAIN);
                T_CHECK(symrail_atomic_set(&flag[1], phase, 0));
                t_fill(buf, 8, 1, 7);
                T_CHECK(symrail_notify_send(0, 7, buf, 8));
            }
        }
        T_CHECK(symrail_barrier_all());
    }
    t_pass("notify: trysend's SYMRAIL_OK sends the rest later and in order, "
           "SYMRAIL_ERR_AGAIN sends nothing");
    symrail_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    symrail_init();
    me = symrail_my_pe();
    npes = symrail_n_pes();
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "many") == 0)
        return many_case();
    if (strcmp(mode, "trysend") == 0)
        return trysend_case();
    if (strcmp(mode, "peergone") == 0) {
        T_ASSERT(npes == 2, "run with 2 PEs");
        T_CHECK(symrail_barrier_all());
        if (me == 1)
            _exit(0);  /* leaves without a word */
        symrail_status_t st = symrail_notify_wait_tag(5, -1, &msg);
        T_ASSERT(st == SYMRAIL_ERR_PEER_GONE, "wait_tag on a departed sender returned %d (%s)",
                 (int)st, symrail_strerror(st));
        printf("ok: wait_tag on a departed sender fails with: %s\n", symrail_strerror(st));
        fflush(stdout);
        _exit(0);
    }
    sizes_case();
    if (strcmp(mode, "sizes") == 0) {
        symrail_finalize();
        return 0;
    }
    tag_case();
    reserved_case();
    internal_case();
    symrail_finalize();
    return 0;
}
