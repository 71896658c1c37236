#!/usr/bin/env python3
"""KV-cache transfer from prefill to decode workers: the Python twin of
kv_transfer.c, on the ctypes binding (python/symrail), with numpy pools.

    PYTHONPATH=python symrun -n 2 python3 examples/kv_transfer.py --verify

Decode PEs own KV pools (layers x blocks x block bytes) registered as
segments, hand their descriptors to the prefill PEs they serve, and grant
them free blocks by notifications that list the block indices.  A prefill PE
fills blocks of its own pool (request, layer, block: every word checkable),
sends the request as ONE paged batch with a notification at its end; the
decode PE waits for that notification by tag, checks the blocks, frees them.
PEs 0..P-1 are prefill PEs, prefill PE p sends to decode PE P + p % D; a
one-PE job plays both parts.  The same protocol, tags and pattern as the C
program (kv_transfer.c draws the plot; this one prints the table).
"""
import argparse
import struct
import sys
import time

import numpy as np

import symrail

TAG_GRANT = 0x4b560001  # decode -> prefill: blocks to fill
TAG_KV = 0x4b560002     # prefill -> decode, sent by the batch: the blocks are there
GRANT = struct.Struct("<II")     # grant, nblocks; then nblocks uint32 indices
KV = struct.Struct("<IIIIQ")     # grant, request, tasks, 0, submitted (ns)
MAX_BPR = (symrail.NOTIFY_MAX_PAYLOAD - GRANT.size) // 4
C1, C2 = np.uint64(0x9e3779b97f4a7c15), np.uint64(0xd1b54a32d192ed03)
REPORT = 6  # requests, failed, bad words, bytes, tasks, latencies


def size(s):
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1:].upper(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def options():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefill", type=int, default=-1)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--blocks", type=int, default=0, help="per layer of a decode pool")
    ap.add_argument("--block-bytes", default="16K", help="e.g. 4K,16K,64K")
    ap.add_argument("--blocks-per-request", default="16,64")
    ap.add_argument("--requests", type=int, default=16, help="per prefill PE")
    ap.add_argument("--inflight", type=int, default=2)
    ap.add_argument("--verify", action="store_true", help="fill and check every byte")
    ap.add_argument("--malloc", action="store_true",
                    help="numpy pools registered with seg_register (default seg_alloc)")
    o = ap.parse_args()
    o.block_bytes = [size(s) for s in o.block_bytes.split(",")]
    o.bpr = [int(s) for s in o.blocks_per_request.split(",")]
    return o


def pattern(req, layers, blocks, nwords, every_word):
    """kv_word() of kv_common.h: [layer, block-in-request, word] (the first
    and last word only, unless every_word)."""
    w = np.arange(nwords, dtype=np.uint64) if every_word else \
        np.array([0, nwords - 1], dtype=np.uint64)
    x = (np.uint64(req) << np.uint64(40)) ^ \
        (np.arange(layers, dtype=np.uint64)[:, None] << np.uint64(20)) ^ \
        np.arange(blocks, dtype=np.uint64)[None, :]
    x = (x * C1)[:, :, None] + (w + np.uint64(1)) * C2
    return x ^ (x >> np.uint64(31))


def take(tag, timeout_ms):
    """The next message with tag, waiting up to timeout_ms (0: a poll), or None."""
    if timeout_ms == 0:
        return symrail.notify_poll_tag(tag)
    try:
        return symrail.notify_wait_tag(tag, timeout_ms)
    except symrail.TimeoutError:
        return None


class Job:
    def __init__(self, o):
        self.o = o
        self.me, self.npes = symrail.my_pe(), symrail.n_pes()
        one = self.npes == 1
        self.nprefill = 1 if one else (self.npes // 2 if o.prefill < 0 else o.prefill)
        self.ndecode = 1 if one else self.npes - self.nprefill
        if self.nprefill < 1 or self.ndecode < 1:
            raise SystemExit("kv_transfer.py: --prefill %d leaves no PE for a part" % o.prefill)
        self.is_prefill = self.me < self.nprefill
        self.is_decode = one or not self.is_prefill
        self.maxlat = o.requests * -(-self.nprefill // self.ndecode)
        self.board = symrail.malloc(8 + symrail.SEG_DESC_MAX)
        self.reports = symrail.malloc(self.npes * REPORT * 8)
        self.lat = symrail.malloc(self.npes * self.maxlat * 8)

    def decode_of(self, p):
        return 0 if self.npes == 1 else self.nprefill + p % self.ndecode

    def pool(self, shape):
        """A pool as a numpy array of uint64 words and its segment."""
        if self.o.malloc:
            arr = np.zeros(shape, dtype=np.uint64)
            return arr, symrail.seg_register(arr)
        seg = symrail.seg_alloc(int(np.prod(shape)) * 8)
        return seg.numpy("uint64", shape), seg


class Decode:
    def __init__(self, job, bb, bpr, blocks):
        o = job.o
        self.job, self.bb, self.bpr, self.blocks = job, bb, bpr, blocks
        self.clients = [p for p in range(job.nprefill) if job.decode_of(p) == job.me]
        self.to_grant = {p: o.requests for p in self.clients}
        self.outstanding = {p: 0 for p in self.clients}
        self.expected, self.received = len(self.clients) * o.requests, 0
        self.pool, self.seg = job.pool((o.layers, blocks, bb // 8))
        self.free = list(range(blocks))
        self.grants = {}              # grant id -> (client, block indices)
        self.rng = np.random.default_rng(job.me)
        self.rep = [0] * REPORT
        self.lat = []
        desc = self.seg.export()
        mine = struct.pack("<Q", len(desc)) + desc.ljust(symrail.SEG_DESC_MAX, b"\0")
        for p in self.clients:
            job.board.put(mine, p)
        symrail.quiet()

    def grant(self):
        granted = False
        for p in self.clients:
            while (self.to_grant[p] and self.outstanding[p] < self.job.o.inflight
                   and len(self.free) >= self.bpr):
                # Random free blocks, as a long-running engine's free list has them.
                pick = self.rng.choice(len(self.free), self.bpr, replace=False)
                idx = np.array([self.free[i] for i in pick], dtype=np.uint32)
                for i in sorted(pick, reverse=True):
                    self.free[i] = self.free[-1]
                    self.free.pop()
                g = next(i for i in range(len(self.grants) + 1) if i not in self.grants)
                symrail.notify_send(p, TAG_GRANT, GRANT.pack(g, self.bpr) + idx.tobytes())
                self.grants[g] = (p, idx)
                self.outstanding[p] += 1
                self.to_grant[p] -= 1
                granted = True
        return granted

    def receive(self, timeout_ms):
        m = take(TAG_KV, timeout_ms)
        if m is None:
            return False
        now = time.monotonic_ns()
        g, req, ntasks, _, submitted = KV.unpack(m.payload)
        client, idx = self.grants.pop(g)
        if client != m.src_pe:
            raise RuntimeError("a KV notification for no grant of mine")
        o = self.job.o
        if not m.ok:
            # The batch failed: its blocks hold nothing to use.
            print("kv_transfer.py: decode PE %d: request %d from PE %d failed: %s"
                  % (self.job.me, req, m.src_pe, m.status_name), file=sys.stderr)
            self.rep[1] += 1
        else:
            want = pattern(req, o.layers, self.bpr, self.bb // 8, o.verify)
            got = self.pool[:, idx, :] if o.verify else self.pool[:, idx, :][:, :, [0, -1]]
            self.rep[2] += int(np.count_nonzero(got != want))
            self.rep[0] += 1
            self.rep[3] += o.layers * self.bpr * self.bb
            self.rep[4] += ntasks
            self.lat.append((now - submitted) / 1e6)
        self.free.extend(int(i) for i in idx)
        self.outstanding[client] -= 1
        self.received += 1
        return True

    def close(self):
        self.seg.deregister()


class Prefill:
    def __init__(self, job, bb, bpr, blocks):
        o = job.o
        self.job, self.bb, self.bpr, self.blocks = job, bb, bpr, blocks
        self.target = job.decode_of(job.me)
        # Every other block of my pool: a request's blocks are not adjacent here either.
        self.lblocks = 2 * o.inflight * bpr
        self.pool, self.seg = job.pool((o.layers, self.lblocks, bb // 8))
        self.lidx = np.arange(0, self.lblocks, 2, dtype=np.uint32).reshape(o.inflight, bpr)
        self.batches = [symrail.Batch(o.layers * bpr) for _ in range(o.inflight)]
        self.busy = [False] * o.inflight
        self.sent = self.ended = self.failed = 0
        n = struct.unpack("<Q", bytes(job.board.view[:8]))[0]
        self.rseg = symrail.seg_import(bytes(job.board.view[8:8 + n]))

    def reap(self):
        n = 0
        for s, b in enumerate(self.batches):
            if not self.busy[s]:
                continue
            st = b.status()
            if st.state == symrail.TASK_PENDING:
                continue
            if st.state == symrail.TASK_FAILED:
                print("kv_transfer.py: prefill PE %d: a batch failed: %s"
                      % (self.job.me, st.error), file=sys.stderr)
                self.failed += 1
            self.busy[s] = False
            self.ended += 1
            n += 1
        return n

    def send(self, timeout_ms):
        o = self.job.o
        if all(self.busy) or self.sent == o.requests:
            return False
        m = take(TAG_GRANT, timeout_ms)
        if m is None:
            return False
        s = self.busy.index(False)
        g, n = GRANT.unpack_from(m.payload)
        ridx = np.frombuffer(m.payload, dtype=np.uint32, count=n, offset=GRANT.size)
        req = self.job.me * o.requests + self.sent
        words = pattern(req, o.layers, self.bpr, self.bb // 8, o.verify)
        if o.verify:
            self.pool[:, self.lidx[s], :] = words
        else:
            self.pool[:, self.lidx[s], 0] = words[:, :, 0]
            self.pool[:, self.lidx[s], -1] = words[:, :, 1]
        # The whole request, every layer, in one call and one batch.
        b = self.batches[s]
        b.reset()
        _, ntasks = b.add_layers(symrail.WRITE, self.seg, self.lblocks * self.bb, self.rseg, 0,
                                 self.blocks * self.bb, o.layers, self.lidx[s], ridx, self.bb)
        b.submit_notify(self.target, TAG_KV, KV.pack(g, req, ntasks, 0, time.monotonic_ns()))
        self.busy[s] = True
        self.sent += 1
        return True

    def close(self):
        for b in self.batches:
            b.free()
        self.rseg.release()
        self.seg.deregister()


def run_conf(job, bb, bpr, blocks):
    o = job.o
    d = Decode(job, bb, bpr, blocks) if job.is_decode else None
    symrail.barrier()  # descriptors are on the boards
    p = Prefill(job, bb, bpr, blocks) if job.is_prefill else None
    symrail.barrier()
    t0 = time.monotonic()
    wait_ms = 0 if (d and p) else 100  # a PE with both parts polls
    last = t0
    while True:
        moved, done = False, True
        if d:
            moved |= d.grant()
            if d.received < d.expected:
                done = False
                moved |= d.receive(wait_ms)
        if p:
            moved |= p.reap() > 0
            moved |= p.send(wait_ms)
            if p.ended < o.requests:
                done = False
                if not moved and wait_ms and all(p.busy):
                    try:
                        p.batches[0].wait(wait_ms)
                    except symrail.SymrailError:
                        pass  # reap() reports it
        if done:
            break
        now = time.monotonic()
        if moved:
            last = now
        elif now - last > 60:
            raise RuntimeError("kv_transfer.py: nothing moved for 60 s")
    symrail.barrier()
    secs = time.monotonic() - t0
    rep = d.rep[:] if d else [0] * REPORT
    lat = np.array(d.lat if d else [], dtype=np.float64)
    if p:
        rep[1] += p.failed
    rep[5] = len(lat)
    job.reports.put(np.array(rep, dtype=np.int64), 0, offset=job.me * REPORT * 8)
    if len(lat):
        job.lat.put(lat, 0, offset=job.me * job.maxlat * 8)
    symrail.barrier()
    if p:
        p.close()
    if d:
        d.close()
    failed = False
    total = None
    if job.me == 0:
        reps = job.reports.numpy("int64", (job.npes, REPORT))
        lats = job.lat.numpy("float64", (job.npes, job.maxlat))
        allat = np.concatenate([lats[i, :reps[i, 5]] for i in range(job.npes)])
        total = reps.sum(axis=0)
        reqs = int(total[0])
        p50, p99 = (np.quantile(allat, [0.5, 0.99]) if len(allat) else (0, 0))
        print("%6dK %10d %8.1f %9.0f %9d %8.2f %8.2f %8.2f %9d" % (
            bb >> 10, bpr, o.layers * bpr * bb / 2**20, total[4] / max(reqs, 1), reqs,
            total[3] / secs / 1e9, p50, p99, total[2]), flush=True)
        failed = bool(total[1] or total[2] or reqs != job.nprefill * o.requests)
    symrail.barrier()
    return failed, total


def main():
    o = options()
    with symrail.init():
        job = Job(o)
        if job.me == 0:
            print("kv_transfer.py: %d prefill -> %d decode PEs, %d layers, pools from %s, %s"
                  % (job.nprefill, job.ndecode, o.layers,
                     "numpy + seg_register" if o.malloc else "seg_alloc",
                     "every byte checked" if o.verify else "the ends of every block checked"))
            print("  block blocks/req  MiB/req tasks/req  requests     GB/s   p50 ms   p99 ms "
                  "bad words")
        failed, requests, nbytes = False, 0, 0
        clients = -(-job.nprefill // job.ndecode)
        for bb in o.block_bytes:
            for bpr in o.bpr:
                blocks = o.blocks or max(clients * bpr, min(1024, (128 << 20) // (o.layers * bb)))
                if not 0 < bpr <= min(MAX_BPR, blocks):
                    if job.me == 0:
                        print("kv_transfer.py: %d blocks per request do not fit (pools of %d "
                              "blocks, a grant of at most %d)" % (bpr, blocks, MAX_BPR),
                              file=sys.stderr)
                    return 1
                f, total = run_conf(job, bb, bpr, blocks)
                failed |= f
                if total is not None:
                    requests += int(total[0])
                    nbytes += int(total[3])
        if job.me == 0:
            if failed:
                print("kv_transfer.py: FAILED")
            else:
                print("kv_transfer.py: %s of %d requests (%.1f MiB) verified"
                      % ("every byte" if o.verify else "the ends of every block", requests,
                         nbytes / 2**20))
        return 1 if failed and job.me == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
