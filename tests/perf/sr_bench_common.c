/*
 * sr_bench: the parts both modes use: failing the job, the command protocol
 * between PE 0 and PE 1 (and PE 1's side of it), timing kernels in
 * alternating rounds, formatting, and the data check.
 */
#include "sr_bench.h"

void bench_fail(int line, const char *call, symrail_status_t st)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "sr_bench: PE %d: %s failed at line %d: %s", symrail_my_pe(),
             call, line, symrail_strerror(st));
    fprintf(stderr, "%s\n", msg);
    fflush(stdout);
    /* The partner may be blocked waiting for us: end the whole job. */
    symrail_abort(1, msg);
    exit(1);
}

/* ---- PE 0: the driver ------------------------------------------------------- */

/* Returns once PE 1 has taken the command (for CMD_VERIFY: has answered it). */
void send_cmd(bench_t *b, uint64_t cmd, uint64_t arg)
{
    b->cur_base = b->pp_base;
    if (cmd == CMD_SIGNAL_PP)
        b->pp_base += arg;
    uint64_t msg[3] = { cmd, arg, b->cur_base };
    b->seq++;
    CHECK(symrail_put_signal(b->ctl->cmd, msg, sizeof(msg), &b->ctl->seq, b->seq,
                             SYMRAIL_SIGNAL_SET, TARGET_PE));
    CHECK(symrail_signal_wait_until(&b->ctl->ack, SYMRAIL_CMP_GE, b->seq, NULL));
}

/* ---- PE 1: the target ----------------------------------------------------- */

static void wait_cmd(bench_t *b, uint64_t seq)
{
    if (b->net && !b->target_spin) {
        CHECK(symrail_signal_wait_until(&b->ctl->seq, SYMRAIL_CMP_GE, seq, NULL));
        return;
    }
    uint64_t t0 = now_ns();
    for (unsigned spins = 1; symrail_signal_fetch(&b->ctl->seq) < seq; spins++) {
        cpu_relax();
        if (spins % 1024 == 0) {
            /* Cheap when the machine has a core per PE, fair when it has not. */
            sched_yield();
            if (now_ns() - t0 > IDLE_SPIN_NS) {
                CHECK(symrail_signal_wait_until(&b->ctl->seq, SYMRAIL_CMP_GE, seq, NULL));
                break;
            }
        }
    }
}

static void ack(bench_t *b, uint64_t seq)
{
    CHECK(symrail_atomic_set(&b->ctl->ack, seq, 0));
}

void serve(bench_t *b)
{
    ctl_t *c = b->ctl;
    for (uint64_t seq = 1;; seq++) {
        wait_cmd(b, seq);
        uint64_t cmd = c->cmd[0], arg = c->cmd[1], base = c->cmd[2];
        switch (cmd) {
        case CMD_NOP:
            ack(b, seq);
            break;
        case CMD_PREPARE:
            memset(b->dst, 0, arg);
            for (size_t i = 0; i < arg; i++)
                b->gsrc[i] = pattern(i, 2);
            ack(b, seq);
            break;
        case CMD_VERIFY: {
            uint64_t bad = 0;
            for (size_t i = 0; i < arg; i++)
                bad += b->dst[i] != pattern(i, 1);
            /* The signal carries the ack, so the result is there when PE 0 sees it. */
            CHECK(symrail_put_signal(&c->result, &bad, sizeof(bad), &c->ack, seq,
                                     SYMRAIL_SIGNAL_SET, 0));
            break;
        }
        case CMD_SIGNAL_PP:
            ack(b, seq);
            for (uint64_t i = 1; i <= arg; i++) {
                uint64_t v = base + i;
                CHECK(symrail_signal_wait_until(&c->ping, SYMRAIL_CMP_GE, v, NULL));
                if (c->pingbuf != v)
                    b->data_errors++;
                CHECK(symrail_put_signal(&c->pongbuf, &v, sizeof(v), &c->pong, v,
                                         SYMRAIL_SIGNAL_SET, 0));
            }
            break;
        case CMD_NOTIFY_PP:
            ack(b, seq);
            for (uint64_t i = 0; i < arg; i++) {
                symrail_notify_t m;
                CHECK(symrail_notify_wait(-1, &m));
                CHECK(symrail_notify_send(0, m.tag, m.payload, m.len));
            }
            break;
        case CMD_BARRIER:
            ack(b, seq);
            for (uint64_t i = 0; i < arg; i++)
                CHECK(symrail_barrier_all());
            break;
        case CMD_SLEEP:
            ack(b, seq);
            CHECK(symrail_barrier_all());
            break;
        case CMD_STOP:
            ack(b, seq);
            return;
        default:
            fprintf(stderr, "sr_bench: PE 1: unknown command %llu\n", (unsigned long long)cmd);
            symrail_abort(1, "sr_bench: protocol error");
        }
    }
}

double run_timed(bench_t *b, kern_fn fn, size_t n, uint64_t iters)
{
    uint64_t t0 = now_ns();
    CHECK(fn(b, n, iters));
    uint64_t t = now_ns() - t0;
    return t ? (double)t : 1.0;
}

int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Nanoseconds per operation of each of `nk` kernels at size n.  Each kernel
 * is warmed up while its iteration count is calibrated to one round's share
 * of the time budget; then the kernels run in turns, round after round, so
 * that drift of clock speed or cache state hits all of them alike.  The
 * median round is reported.
 */
void measure(bench_t *b, size_t n, const kern_fn *k, int nk, double *ns_out)
{
    double round_ns = b->target_ns / b->rounds;
    uint64_t iters[4];
    double samples[4][MAX_ROUNDS];

    for (int j = 0; j < nk; j++) {
        uint64_t it = 1;
        double el;
        for (;;) {
            el = run_timed(b, k[j], n, it);
            if (el >= round_ns / 4 || it >= (1ull << 30))
                break;
            it *= 2;
        }
        double want = round_ns * (double)it / el;
        iters[j] = want < 1 ? 1 : (uint64_t)want;
    }
    for (int r = 0; r < b->rounds; r++)
        for (int j = 0; j < nk; j++)
            samples[j][r] = run_timed(b, k[j], n, iters[j]) / (double)iters[j];
    for (int j = 0; j < nk; j++) {
        qsort(samples[j], (size_t)b->rounds, sizeof(double), cmp_double);
        ns_out[j] = samples[j][b->rounds / 2];
    }
}

/* A cooperative kernel: PE 1 runs its side of `cmd` for the same count. */
double measure_coop(bench_t *b, uint64_t cmd, kern_fn fn)
{
    uint64_t warm = b->quick ? 50 : 500;
    send_cmd(b, cmd, warm);
    double per = run_timed(b, fn, 0, warm) / (double)warm;
    double want = b->target_ns * 2 / per;
    uint64_t iters = want < 10 ? 10 : want > 1e8 ? 100000000 : (uint64_t)want;
    send_cmd(b, cmd, iters);
    return run_timed(b, fn, 0, iters) / (double)iters;
}

const char *fmt_size(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zuM", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zuK", n >> 10);
    else
        snprintf(buf, len, "%zu", n);
    return buf;
}

void print_mbs(double mbs)
{
    if (mbs >= 100)
        printf(" %12.0f", mbs);
    else
        printf(" %12.2f", mbs);
}

/* Data check of the largest put and get, before anything is timed. */
int verify(bench_t *b)
{
    uint64_t bad_get = 0;
    for (size_t i = 0; i < b->max_size; i++)
        b->src[i] = pattern(i, 1);
    send_cmd(b, CMD_PREPARE, b->max_size);
    CHECK(symrail_put(b->dst, b->src, b->max_size, TARGET_PE));
    send_cmd(b, CMD_VERIFY, b->max_size);
    memset(b->gdst, 0, b->max_size);
    CHECK(symrail_get(b->gdst, b->gsrc, b->max_size, TARGET_PE));
    for (size_t i = 0; i < b->max_size; i++)
        bad_get += b->gdst[i] != pattern(i, 2);
    if (b->ctl->result != 0 || bad_get != 0) {
        fprintf(stderr, "sr_bench: data check of %zu bytes FAILED: put %llu bad bytes, "
                "get %llu bad bytes\n", b->max_size, (unsigned long long)b->ctl->result,
                (unsigned long long)bad_get);
        return 1;
    }
    printf("# data check: %zu-byte put and get verified byte for byte\n", b->max_size);
    return 0;
}
