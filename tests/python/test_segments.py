"""Segments and batches from Python.  Every PE owns a KV pool (layers x
blocks x block bytes) of each kind (bytearray, numpy array, CPU torch
tensor, seg_alloc memory), sends its descriptor to its left neighbour, and
that neighbour writes non-contiguous blocks into it with one batch
(add_layers, add_blocks, add) and a notification at the end; the owner
verifies every byte of its pool.  Then: read back with READ tasks,
publish/lookup, bad tasks refused with nothing added, a descriptor whose
segment is gone (stale), and a canceled batch whose notification says how it
ended.  Arguments: the parts to run (pools, publish, stale, cancel; default
all of them)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symrail  # noqa: E402
from tcommon import check, optional, raises  # noqa: E402

np = optional("numpy")
torch = optional("torch")
LAYERS, BLOCKS, BB = 3, 48, 4096
LSTRIDE = BLOCKS * BB
SIZE = LAYERS * LSTRIDE
T = 30000
TAG_DESC, TAG_DONE, TAG_GONE, TAG_STALE, TAG_CANCEL, TAG_OUTCOME, TAG_CANCEL_DESC = \
    range(0x100, 0x107)

# Blocks the writer sends: remote runs (5,6,7), (20,21), singles; local ones
# adjacent where remote ones are, so some runs coalesce.
LOCAL_A = [0, 1, 2, 10, 11, 30, 4]
REMOTE_A = [5, 6, 7, 20, 21, 40, 2]
LOCAL_B = [12, 13, 14, 15]        # layer 0 only, through add_blocks
REMOTE_B = [30, 31, 33, 34]
LOCAL_C, REMOTE_C = 47, 47        # layer 1 only, through add


def runs(loc, rem):
    return 1 + sum(1 for i in range(1, len(loc))
                   if not (loc[i] == loc[i - 1] + 1 and rem[i] == rem[i - 1] + 1))


def block_pattern(pe, layer, block):
    seed = (pe * 131 + layer * 17 + block * 3) & 0xFF
    return bytes((seed + i) & 0xFF for i in range(256)) * (BB // 256)


def source(pe):
    return bytearray(b"".join(block_pattern(pe, l, b) for l in range(LAYERS)
                              for b in range(BLOCKS)))


def expected(writer):
    """The pool after `writer` wrote its blocks into a zeroed one."""
    want = bytearray(SIZE)
    written = [(l, lb, rb) for l in range(LAYERS) for lb, rb in zip(LOCAL_A, REMOTE_A)]
    written += [(0, lb, rb) for lb, rb in zip(LOCAL_B, REMOTE_B)] + [(1, LOCAL_C, REMOTE_C)]
    for l, lb, rb in written:
        want[l * LSTRIDE + rb * BB:l * LSTRIDE + (rb + 1) * BB] = block_pattern(writer, l, lb)
    return bytes(want)


def make_pool(kind):
    """(segment, function giving the pool's bytes) of a zeroed pool."""
    if kind == "bytearray":
        obj = bytearray(SIZE)
        return symrail.seg_register(obj), lambda: bytes(obj)
    if kind == "numpy":
        obj = np.zeros((LAYERS, BLOCKS, BB), dtype=np.uint8)
        seg = symrail.seg_register(obj)
        check(seg.obj is obj and seg.addr == obj.ctypes.data, "numpy registered in place")
        return seg, obj.tobytes
    if kind == "torch":
        obj = torch.zeros(SIZE, dtype=torch.uint8)
        seg = symrail.seg_register(obj)
        check(seg.addr == obj.data_ptr(), "torch tensor registered by its data pointer")
        return seg, lambda: obj.numpy().tobytes()
    seg = symrail.seg_alloc(SIZE)
    seg.view[:] = bytes(SIZE)
    if torch is not None:  # read through a tensor over the same memory
        t = seg.torch(torch.uint8, (LAYERS, BLOCKS, BB))
        return seg, lambda: t.numpy().tobytes()
    return seg, lambda: bytes(seg.view)


def exchange(seg, tag):
    """Sends our descriptor to the left neighbour; imports the right one's."""
    desc = seg.export()
    check(isinstance(desc, bytes) and 0 < len(desc) <= symrail.SEG_DESC_MAX,
          "descriptor of %d bytes" % len(desc))
    symrail.notify_send(left, tag, desc)
    rseg = symrail.seg_import(symrail.notify_wait_tag(tag, T).payload)
    check(rseg.pe == right and rseg.nbytes == SIZE, "imported %r" % rseg)
    return rseg


def write_blocks(rseg, src, tag, payload):
    with symrail.Batch(256) as b:
        f, nt = b.add_layers(symrail.WRITE, src, LSTRIDE, rseg, 0, LSTRIDE, LAYERS,
                             LOCAL_A, REMOTE_A, BB)
        check(f == 0 and 1 <= nt <= LAYERS * runs(LOCAL_A, REMOTE_A),
              "add_layers made %d tasks from %d blocks" % (nt, LAYERS * len(LOCAL_A)))
        li, ri = LOCAL_B, REMOTE_B
        if np is not None:
            li, ri = np.array(li, dtype=np.uint32), np.array(ri, dtype=np.uint32)
        f2, nt2 = b.add_blocks(symrail.WRITE, src, li, rseg, 0, ri, BB)
        check(f2 == nt and nt2 == runs(LOCAL_B, REMOTE_B),
              "add_blocks coalesced 4 blocks into %d tasks (first %d)" % (nt2, f2))
        t = b.write(src, rseg, LSTRIDE + REMOTE_C * BB, BB, LSTRIDE + LOCAL_C * BB)
        check(t == nt + nt2, "add gives the next index")
        check(b.status(t).state == symrail.TASK_PENDING, "added task is pending")
        b.submit_notify(right, tag, payload)
        b.wait(T)
        st = b.status()
        nbytes = (LAYERS * len(LOCAL_A) + len(LOCAL_B) + 1) * BB
        check(st.state == symrail.TASK_DONE and st.error is None and st.nbytes == nbytes,
              "batch done, %d bytes: %r" % (nbytes, st))
        check(b.status(0).state_name == "DONE", "task 0 done")


def read_back(rseg, src):
    back = bytearray(SIZE)
    with symrail.Batch(64) as b:
        b.add_layers(symrail.READ, back, LSTRIDE, rseg, 0, LSTRIDE, LAYERS, REMOTE_A,
                     REMOTE_A, BB)
        b.submit()
        b.wait(T)
    for l in range(LAYERS):
        for lb, rb in zip(LOCAL_A, REMOTE_A):
            o = l * LSTRIDE
            check(back[o + rb * BB:o + (rb + 1) * BB] == src[o + lb * BB:o + (lb + 1) * BB],
                  "READ task brought layer %d block %d back" % (l, rb))


def bad_tasks(rseg, src):
    with symrail.Batch(2) as b:
        raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", b.add, symrail.WRITE, src, rseg,
               SIZE - 10, 100)
        raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", b.add, symrail.WRITE, src, rseg,
               0, 0)
        raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", b.add_blocks, symrail.WRITE, src,
               [0, 1], rseg, 0, [0, BLOCKS * LAYERS], BB)
        raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", b.add_blocks, symrail.WRITE, src,
               [0, 1], rseg, 0, [0], BB)
        raises(symrail.InvalidError, "SYMRAIL_ERR_INVALID", b.add_blocks, symrail.READ,
               bytearray(BB), [0, 1], rseg, 0, [0, 1], BB)  # local blocks past the buffer
        check(b.add(symrail.WRITE, src, rseg, 0, 8) == 0, "nothing was added by the refusals")
        b.add(symrail.WRITE, src, rseg, 8, 8)
        try:
            b.add(symrail.WRITE, src, rseg, 16, 8)
            check(False, "a third task in a batch of capacity 2 was added")
        except symrail.SymrailError as e:
            past_capacity = e.name
        b.reset()
    return past_capacity


def pools(kinds):
    for k, kind in enumerate(kinds):
        seg, pool = make_pool(kind)
        with seg:
            rseg = exchange(seg, TAG_DESC + 16 * k)
            write_blocks(rseg, src, TAG_DONE + 16 * k, b"done %d %s" % (me, kind.encode()))
            m = symrail.notify_wait_tag(TAG_DONE + 16 * k, T)
            check(m.ok and m.src_pe == left and m.payload == b"done %d %s"
                  % (left, kind.encode()), "batch notification: %r" % m)
            check(pool() == expected(left), "every byte of the %s pool is right" % kind)
            read_back(rseg, src)
            if k == 0:
                past_capacity = bad_tasks(rseg, src)
            symrail.barrier()
            rseg.release()
            symrail.barrier()
    return "%s pools verified; past capacity %s" % (", ".join(kinds), past_capacity)


def publish():
    seg, pool = make_pool("bytearray")
    with seg:
        seg.publish("py-pool-%d" % me)
        symrail.barrier()
        with symrail.seg_lookup("py-pool-%d" % right, right, T) as r1:
            check(r1.pe == right and r1.nbytes == SIZE, "lookup by name on a PE: %r" % r1)
        with symrail.seg_lookup("py-pool-%d" % right, symrail.ANY_PE, T) as r2:
            check(r2.pe == right, "lookup by name on any PE: %r" % r2)
        symrail.barrier()
        symrail.seg_unpublish("py-pool-%d" % me)
        symrail.barrier()
    return "publish/lookup by PE and by any PE"


def stale():
    """The owner deregisters; the writer's transfer through the old
    descriptor fails, the owner is told, and no byte reaches the memory."""
    seg, pool = make_pool("bytearray")
    rseg = exchange(seg, TAG_GONE)
    symrail.barrier()
    seg.deregister()
    symrail.barrier()
    at = "add"
    with symrail.Batch(4) as b:
        try:
            b.add(symrail.WRITE, b"\xee" * BB, rseg, 0, BB)
            at = "transfer"
            b.submit_notify(right, TAG_STALE, b"stale")
            raises(symrail.StaleError, "SYMRAIL_ERR_STALE", b.wait, T)
            check(b.status().error.name == "SYMRAIL_ERR_STALE", "stale task's status")
        except symrail.StaleError:
            symrail.notify_send(right, TAG_STALE, b"refused at add")
    m = symrail.notify_wait_tag(TAG_STALE, T)
    check(m.payload == b"refused at add" or (
        m.status_name == "SYMRAIL_ERR_STALE" and isinstance(m.error, symrail.StaleError)),
        "the owner is told of the stale transfer: %r" % m)
    check(pool() == bytes(SIZE), "no byte of the deregistered pool was written")
    rseg.release()
    symrail.barrier()
    return "stale descriptor refused at %s" % at


def cancel():
    """The notification goes exactly once and says how the batch ended."""
    seg, pool = make_pool("bytearray")
    with seg:
        rseg = exchange(seg, TAG_CANCEL_DESC)
        with symrail.Batch(BLOCKS * LAYERS) as b:
            idx = list(range(BLOCKS))
            b.add_layers(symrail.WRITE, src, LSTRIDE, rseg, 0, LSTRIDE, LAYERS, idx[::2],
                         idx[::2], BB)
            b.submit_notify(right, TAG_CANCEL, b"cancel")
            b.cancel()
            try:
                b.wait(T)
                outcome = "SYMRAIL_OK"
            except symrail.CanceledError as e:
                outcome = e.name
        symrail.notify_send(right, TAG_OUTCOME, outcome.encode())
        m = symrail.notify_wait_tag(TAG_CANCEL, T)
        told = symrail.notify_wait_tag(TAG_OUTCOME, T).payload.decode()
        check(m.status_name == told, "canceled batch: the notification says %s, the writer "
              "saw %s" % (m.status_name, told))
        check(symrail.notify_poll_tag(TAG_CANCEL) is None, "one notification only")
        symrail.barrier()
        rseg.release()
        symrail.barrier()
    return "canceled batch ended %s, its notification agrees" % told


PARTS = {"pools": None, "publish": publish, "stale": stale, "cancel": cancel}
parts = sys.argv[1:] or list(PARTS)
for p in parts:
    check(p in PARTS, "unknown part %s (of %s)" % (p, ", ".join(PARTS)))
with symrail.init() as rt:
    me, n = rt.my_pe, rt.n_pes
    right, left = (me + 1) % n, (me - 1) % n
    kinds = ["bytearray", "seg_alloc"] + (["numpy"] if np else []) + (["torch"] if torch else [])
    src = source(me)
    said = [pools(kinds) if p == "pools" else PARTS[p]() for p in parts]
    if me == 0:
        if "pools" in parts and not torch:
            said.append("torch tensor registration skipped (torch not installed)")
        print("ok: python segments on %d PEs: %s" % (n, "; ".join(said)))
