/*
 * Rogue clients against the TCP transport.
 *
 *   t_tcp_rogue victim
 *       SPMD program (run with SYMRAIL_TRANSPORTS=tcp, SYMRAIL_TCP_ADDR_FILE
 *       and T_ROGUE_DIR): every PE fills a guard region, then the PEs trade
 *       verified puts round after round until the file T_ROGUE_DIR/stop
 *       appears; PE 0 writes T_ROGUE_DIR/job (the job id) and
 *       T_ROGUE_DIR/ready once it is up.  At the end every guard must be intact.
 *
 *   t_tcp_rogue attack MODE IP:PORT JOB SECRET HEAP_SIZE
 *       Not a PE: one client that connects to PE 0 of a 2-PE victim job and
 *       misbehaves as MODE says.  Exits 0 when the victim closed the
 *       connection as it should (or, for "valid", answered), 1 otherwise.
 *       Modes: garbage, trunc-hello, nosecret (no secret: the handshake
 *       cannot succeed), valid, and with the secret, as a buggy peer would:
 *       trunc-header, bad-magic, bad-op, big-payload, oob-end, oob-all,
 *       oob-wrap, oob-get, oob-amo, amo-misaligned, bad-region; and stale-segment,
 *       a put to a segment that is not registered, which the victim must
 *       answer stale and go on serving the connection.
 *
 *   t_tcp_rogue otherjob IP:PORT JOB LAUNCHER_KEY
 *       A PE of another job (started by the same launcher, with
 *       SYMRAIL_TRANSPORTS=tcp) that tries PE 0 of the victim job JOB twice:
 *       with the key a PE of JOB derived where no job key came with the
 *       exchange (job id, user id and LAUNCHER_KEY, the Open MPI job key
 *       that a process of the same user can read in the victim's
 *       environment; empty under srun), and with its own job's key.  Exits
 *       0 when the victim refused both.
 */
#include "tcommon.h"
#include "tl/tcp/frame.h"
#include "tl/tcp/tcp.h"
#include "core/rt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GUARD_LEN   (1u << 20)
#define VICTIM_PE   0
#define CLAIMED_PE  1
#define JOB_PES     2

/* ---- the attacker -------------------------------------------------------------- */

static int a_fail(const char *mode, const char *fmt, const char *arg)
{
    fprintf(stderr, "t_tcp_rogue %s: ", mode);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 1;
}

static int a_send(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Reads exactly len bytes within 5 s: 0, or -1 on close, error or timeout. */
static int a_recv(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, 5000) <= 0)
            return -1;
        ssize_t r = recv(fd, p, len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* Did the victim close the connection within 5 s (reading what it sends)? */
static int a_closed(int fd)
{
    char junk[4096];
    for (;;) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, 5000) <= 0)
            return 0;
        ssize_t r = recv(fd, junk, sizeof(junk), 0);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
            return 1;
    }
}

static int a_connect(const char *addr)
{
    char host[64];
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || (size_t)(colon - addr) >= sizeof(host))
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1)) };
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        return -1;
    return fd;
}

/* The handshake of a PE that knows `key`; 0 when the victim accepted it. */
static int a_handshake(int fd, const uint8_t *key, int *server_ok_p)
{
    sr_tcp_hello_t h = { .src_pe = CLAIMED_PE, .dst_pe = VICTIM_PE, .lane = 7, .n_pes = JOB_PES };
    uint8_t hello[SR_TCP_HELLO_LEN], chal[SR_TCP_CHAL_LEN], auth[SR_TCP_AUTH_LEN];
    uint8_t nonce_s[SR_TCP_NONCE_LEN], mac_s[SR_TCP_MAC_LEN], mac[SR_TCP_MAC_LEN];
    for (size_t i = 0; i < sizeof(h.nonce); i++)
        h.nonce[i] = (uint8_t)rand();
    sr_tcp_hello_encode(&h, hello);
    if (a_send(fd, hello, sizeof(hello)) != 0 || a_recv(fd, chal, sizeof(chal)) != 0 ||
        sr_tcp_chal_decode(chal, nonce_s, mac_s) != NULL)
        return -1;
    sr_tcp_hs_mac(key, 'S', hello, nonce_s, mac);
    *server_ok_p = sr_tcp_mac_equal(mac, mac_s);
    sr_tcp_hs_mac(key, 'C', hello, nonce_s, mac);
    sr_tcp_auth_encode(mac, auth);
    return a_send(fd, auth, sizeof(auth));
}

/* The next reply header, past the heartbeats the victim sends on an idle
 * connection. */
static int a_reply(int fd, sr_tcp_frame_t *r_p)
{
    uint8_t hdr[SR_TCP_HDR_LEN];
    do {
        if (a_recv(fd, hdr, sizeof(hdr)) != 0 ||
            sr_tcp_frame_decode(hdr, SR_TCP_AT_INITIATOR, r_p) != NULL)
            return -1;
    } while (r_p->op == SR_TCP_OP_PING);
    return 0;
}

/* A valid get of 8 bytes: the victim answers only an authenticated peer. */
static int a_probe(int fd)
{
    uint8_t hdr[SR_TCP_HDR_LEN], data[8];
    sr_tcp_frame_t f = { .op = SR_TCP_OP_GET, .id = 0, .off = 0, .a = 8 }, r;
    sr_tcp_frame_encode(&f, hdr);
    if (a_send(fd, hdr, sizeof(hdr)) != 0 || a_reply(fd, &r) != 0 ||
        r.op != SR_TCP_OP_GET_REPLY || r.plen != 8 || a_recv(fd, data, sizeof(data)) != 0)
        return -1;
    return 0;
}

static int attack(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: t_tcp_rogue attack MODE IP:PORT JOB SECRET HEAP_SIZE\n");
        return 2;
    }
    const char *mode = argv[2], *addr = argv[3], *job = argv[4], *secret = argv[5];
    uint64_t heap = strtoull(argv[6], NULL, 0);
    uint8_t key[SR_TCP_KEY_LEN], hdr[SR_TCP_HDR_LEN];
    static uint8_t junk[1 << 16];
    int server_ok = 0;
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    memset(junk, 0xEE, sizeof(junk));

    int fd = a_connect(addr);
    if (fd < 0)
        return a_fail(mode, "cannot connect to %s", addr);

    if (strcmp(mode, "garbage") == 0) {
        for (size_t i = 0; i < 4096; i++)
            junk[i] = (uint8_t)rand();
        a_send(fd, junk, 4096);
        return a_closed(fd) ? 0 : a_fail(mode, "%s kept a connection that sent garbage", addr);
    }
    if (strcmp(mode, "trunc-hello") == 0) {
        sr_tcp_hello_t h = { .src_pe = CLAIMED_PE, .dst_pe = VICTIM_PE, .n_pes = JOB_PES };
        uint8_t hello[SR_TCP_HELLO_LEN];
        sr_tcp_hello_encode(&h, hello);
        a_send(fd, hello, 20);
        shutdown(fd, SHUT_WR);
        return a_closed(fd) ? 0 : a_fail(mode, "%s kept a half-open handshake", addr);
    }
    if (strcmp(mode, "nosecret") == 0) {
        /* A guess: what a key derived without the secret would be. */
        sr_tcp_job_key(job, "derived", "uid 0; ", 7, key);
        if (a_handshake(fd, key, &server_ok) != 0 && !server_ok)
            return 0;  /* closed even before the authenticator */
        if (server_ok)
            return a_fail(mode, "%s proved a key it should not share with us", addr);
        return a_closed(fd) ? 0 : a_fail(mode, "%s accepted a client without the secret", addr);
    }

    /* From here on: a client that knows the secret, as a buggy peer would. */
    sr_tcp_job_key(job, "secret", secret, strlen(secret), key);
    if (a_handshake(fd, key, &server_ok) != 0 || !server_ok)
        return a_fail(mode, "handshake with %s failed (wrong secret or job id?)", addr);
    if (a_probe(fd) != 0)
        return a_fail(mode, "%s does not answer a valid get after the handshake", addr);
    if (strcmp(mode, "valid") == 0)
        return 0;

    sr_tcp_frame_t f = { .op = SR_TCP_OP_PUT, .id = 1 };
    size_t payload = 0;
    if (strcmp(mode, "trunc-header") == 0) {
        sr_tcp_frame_encode(&f, hdr);
        a_send(fd, hdr, 20);
        shutdown(fd, SHUT_WR);
        return a_closed(fd) ? 0 : a_fail(mode, "%s kept a connection with a truncated header",
                                         addr);
    } else if (strcmp(mode, "bad-magic") == 0) {
        f.plen = 8;
        sr_tcp_frame_encode(&f, hdr);
        hdr[0] ^= 0xFF;
        payload = 8;
    } else if (strcmp(mode, "bad-op") == 0) {
        sr_tcp_frame_encode(&f, hdr);
        hdr[4] = 0x7E;
    } else if (strcmp(mode, "big-payload") == 0) {
        f.plen = SR_TCP_MAX_PAYLOAD + 1;
        payload = sizeof(junk);
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "oob-end") == 0) {
        f.off = heap - 8;
        f.plen = 64;
        payload = 64;
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "oob-all") == 0) {
        /* From offset 0 past the end: a partial write would hit every guard. */
        f.off = 0;
        f.plen = (uint32_t)(heap + 1);
        payload = sizeof(junk);
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "oob-wrap") == 0) {
        f.off = UINT64_MAX - 15;
        f.plen = 64;
        payload = 64;
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "oob-get") == 0) {
        f.op = SR_TCP_OP_GET;
        f.off = heap;
        f.a = 8;
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "oob-amo") == 0) {
        f.op = SR_TCP_OP_AMO;
        f.sub = 2;  /* add */
        f.off = heap;
        f.a = 1;
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "amo-misaligned") == 0) {
        f.op = SR_TCP_OP_AMO;
        f.sub = 1;  /* set */
        f.off = 4097;
        f.a = 0xEEEEEEEEEEEEEEEEull;
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "bad-region") == 0) {
        f.region = SR_TCP_REGION_MAX;
        f.plen = 64;
        payload = 64;
        sr_tcp_frame_encode(&f, hdr);
    } else if (strcmp(mode, "stale-segment") == 0) {
        sr_tcp_frame_t r;
        f.region = 3;
        f.b = 1;
        f.plen = 64;
        sr_tcp_frame_encode(&f, hdr);
        if (a_send(fd, hdr, sizeof(hdr)) != 0 || a_send(fd, junk, 64) != 0 || a_reply(fd, &r) != 0)
            return a_fail(mode, "%s closed the connection after a stale put", addr);
        if (r.op != SR_TCP_OP_ACK || r.id != 1 || r.sub != SR_TCP_ST_STALE)
            return a_fail(mode, "%s did not answer the stale put as stale", addr);
        return a_probe(fd) == 0 ? 0 : a_fail(mode, "%s stopped serving after a stale put", addr);
    } else {
        return a_fail(mode, "unknown mode%s", "");
    }
    if (a_send(fd, hdr, sizeof(hdr)) == 0 && payload)
        a_send(fd, junk, payload);
    return a_closed(fd) ? 0 : a_fail(mode, "%s kept the connection after a bad frame", addr);
}

/* One handshake with `key`: 0 when the victim refused it (proved no key
 * of ours and closed the connection), else 1 with why. */
static int a_refused(const char *addr, const char *what, const uint8_t *key)
{
    int server_ok = 0, fd = a_connect(addr);
    if (fd < 0)
        return a_fail("otherjob", "cannot connect to %s", addr);
    int sent = a_handshake(fd, key, &server_ok) == 0;
    if (server_ok) {
        close(fd);
        return a_fail("otherjob", "the victim proved that it uses %s", what);
    }
    int closed = !sent || a_closed(fd);
    close(fd);
    if (!closed)
        return a_fail("otherjob", "the victim kept a connection authenticated with %s", what);
    printf("otherjob: refused with %s\n", what);
    return 0;
}

/* The job key of this process's own TCP transport. */
static const uint8_t *own_job_key(void)
{
    for (int i = 0; i < sr_rt.ntls; i++)
        if (strcmp(sr_rt.tls[i].ops->name, "tcp") == 0)
            return ((sr_tl_ctx_t *)sr_rt.tls[i].tl)->key;
    return NULL;
}

static int other_job(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: t_tcp_rogue otherjob IP:PORT JOB LAUNCHER_KEY\n");
        return 2;
    }
    const char *addr = argv[2], *job = argv[3], *launcher_key = argv[4];
    char material[512];
    uint8_t derived[SR_TCP_KEY_LEN];
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    symrail_init();
    const uint8_t *own = own_job_key();
    T_ASSERT(own != NULL, "this job runs no TCP transport (SYMRAIL_TRANSPORTS=tcp?)");
    T_ASSERT(strcmp(sr_boot_info(sr_rt.boot)->job, job) != 0,
             "this process is of the victim's job %s, not of another", job);
    snprintf(material, sizeof(material), "uid %u; %s", (unsigned)getuid(), launcher_key);
    sr_tcp_job_key(job, "derived", material, strlen(material), derived);
    int bad = a_refused(addr, "the key derived from the victim's job and user id", derived);
    bad |= a_refused(addr, "the key of its own job", own);
    if (!bad)
        t_pass("a process of another job was refused with both keys");
    symrail_finalize();
    return bad;
}

/* ---- the victim ------------------------------------------------------------------- */

static int file_exists(const char *dir, const char *name)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &sb) == 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    T_ASSERT(f != NULL, "cannot write %s", tmp);
    fprintf(f, "%s\n", text);
    T_ASSERT(fclose(f) == 0 && rename(tmp, path) == 0, "cannot write %s", path);
}

static int victim(void)
{
    const char *dir = getenv("T_ROGUE_DIR");
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned max_s = (unsigned)t_env("T_ROGUE_MAX_S", 120);
    T_ASSERT(dir != NULL, "T_ROGUE_DIR is not set");
    unsigned char *guard = symrail_malloc(GUARD_LEN);
    unsigned char *buf = symrail_malloc(65536);
    uint64_t *stop = symrail_calloc(1, sizeof(uint64_t));
    unsigned char *priv = malloc(65536);
    T_ASSERT(guard && buf && stop && priv, "allocation failed");
    memset(guard, 0x5A, GUARD_LEN);
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        const char *lkey = getenv("OMPI_MCA_orte_precondition_transports");
        if (lkey == NULL || !*lkey)
            lkey = getenv("OMPI_MCA_opal_precondition_transports");
        char len[32];
        write_file(dir, "job", sr_boot_info(sr_rt.boot)->job);
        /* What a process of the same user could read in our environment. */
        write_file(dir, "launcher_key", lkey ? lkey : "");
        /* The heap region is SYMRAIL_HEAP_SIZE plus the library's reserved
         * part: the attacks aim at its real end. */
        snprintf(len, sizeof(len), "%zu", sr_rt.heap_size);
        write_file(dir, "heap", len);
        write_file(dir, "ready", "1");
    }
    time_t t0 = time(NULL);
    unsigned round = 0;
    while (*stop == 0) {
        t_fill(priv, 65536, me, round);
        T_CHECK(symrail_put(buf, priv, 65536, right));
        T_CHECK(symrail_barrier_all());
        size_t bad = t_verify(buf, 65536, left, round);
        T_ASSERT(bad == SIZE_MAX, "round %u: byte %zu from PE %d wrong", round, bad, left);
        if (me == 0 && (file_exists(dir, "stop") || time(NULL) - t0 > (time_t)max_s))
            for (int pe = 0; pe < n; pe++)
                T_CHECK(symrail_atomic_set(stop, 1, pe));
        T_CHECK(symrail_barrier_all());
        round++;
        usleep(2000);
    }
    for (size_t i = 0; i < GUARD_LEN; i++)
        T_ASSERT(guard[i] == 0x5A, "guard byte %zu changed to %#x", i, guard[i]);
    if (me == 0)
        printf("PE 0: %u rounds of verified puts while rogue clients came and went\n", round);
    t_pass("the victim kept working and its guard region is intact");
    free(priv);
    symrail_free(stop);
    symrail_free(buf);
    symrail_free(guard);
    symrail_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "attack") == 0)
        return attack(argc, argv);
    if (argc > 1 && strcmp(argv[1], "victim") == 0)
        return victim();
    if (argc > 1 && strcmp(argv[1], "otherjob") == 0)
        return other_job(argc, argv);
    fprintf(stderr, "usage: t_tcp_rogue victim | attack MODE IP:PORT JOB SECRET HEAP_SIZE | "
            "otherjob IP:PORT JOB LAUNCHER_KEY\n");
    return 2;
}
