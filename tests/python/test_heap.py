"""Symmetric heap from Python: malloc, put/get (blocking and nbi) from every
kind of buffer, quiet, barrier, ptr, stats, free."""
import array
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symrail  # noqa: E402
from tcommon import check, optional  # noqa: E402

np = optional("numpy")
torch = optional("torch")
N = 1 << 20


def pattern(pe, n, salt=0):
    return bytes((pe * 31 + i * 7 + salt) & 0xFF for i in range(256)) * (n // 256)


with symrail.init() as rt:
    me, n = rt.my_pe, rt.n_pes
    check(symrail.initialized() and 0 <= me < n, "PE %d of %d after init" % (me, n))
    right, left = (me + 1) % n, (me - 1) % n
    buf = symrail.malloc(N)
    inbox = symrail.malloc(N, zero=True)
    check(len(buf) == N and bytes(inbox[:16]) == bytes(16), "calloc'd heap block is zero")
    buf.view[:] = pattern(me, N)
    symrail.barrier()

    # get from the right neighbour, into a new bytearray and into a given buffer
    got = buf.get(right)
    check(isinstance(got, bytearray) and got == pattern(right, N), "get of a whole block")
    part = bytearray(1000)
    buf.get(right, offset=4096, out=part)
    check(part == pattern(right, N)[4096:5096], "get of 1000 bytes at 4096 into a bytearray")

    # put from bytes, bytearray, memoryview slice, array.array: to the right neighbour
    sources = [pattern(me, 4096, 1), bytearray(pattern(me, 4096, 2)),
               memoryview(pattern(me, 8192, 3))[4096:], array.array("B", pattern(me, 4096, 4))]
    for i, src in enumerate(sources):
        inbox.put(src, right, offset=i * 4096)
    symrail.put(inbox, b"", right, offset=N)  # nothing, at the very end: allowed
    symrail.barrier()
    for i in range(4):
        want = pattern(left, 4096, i + 1)
        check(bytes(inbox[i * 4096:(i + 1) * 4096]) == want, "put source %d arrived" % i)

    # non-blocking forms complete at quiet
    scratch = bytearray(pattern(me, 65536, 9))
    inbox.put(scratch, right, offset=65536, nbi=True)
    back = bytearray(65536)
    buf.get(right, offset=0, out=back, nbi=True)
    symrail.quiet()
    check(back == pattern(right, N)[:65536], "get_nbi complete after quiet")
    symrail.barrier()
    check(bytes(inbox[65536:131072]) == pattern(left, 65536, 9), "put_nbi arrived by barrier")

    # load/store of a peer's copy where it is mapped
    peer = buf.ptr(right)
    if peer is not None:
        check(bytes(peer[:256]) == pattern(right, 256), "ptr() view of the right neighbour")

    if np is not None:
        a = inbox.numpy("uint32", (N // 4,))
        a[:] = np.arange(N // 4, dtype=np.uint32) + me
        symrail.barrier()
        out = np.zeros(N // 4, dtype=np.uint32)
        inbox.get(right, out=out)
        check((out == np.arange(N // 4, dtype=np.uint32) + right).all(), "get into numpy")
        symrail.barrier()
        inbox.put(np.full(16, me, dtype=np.uint64), right)
        symrail.barrier()
        check((inbox.numpy("uint64")[:16] == left).all(), "put from numpy")
        numpy_note = "numpy views and sources"
    else:
        numpy_note = "numpy cases skipped (numpy not installed)"

    if torch is not None:
        t = inbox.torch(torch.int32, (N // 4,))
        symrail.barrier()
        t[:8] = torch.arange(8, dtype=torch.int32) * (me + 1)
        symrail.barrier()
        got = symrail.get(inbox, right, 0, 32)
        want = (torch.arange(8, dtype=torch.int32) * (right + 1)).numpy().tobytes()
        check(bytes(got) == want, "a torch view of the heap is what peers read")
        symrail.barrier()
        numpy_note += "; torch views"
    else:
        numpy_note += "; torch views skipped (torch not installed)"

    s = symrail.stats()
    check(s["puts"] >= 5 and s["gets"] >= 3 and s["barriers"] >= 4,
          "stats count the calls: %r" % {k: s[k] for k in ("puts", "gets", "barriers")})
    check(isinstance(s["rails"], list), "stats has a list of rails")
    check(s["peers_failed"] == 0, "stats count no failed peer")
    check(symrail.peer_states() == ["OK"] * n, "every PE is OK: %r" % symrail.peer_states())
    check(symrail.peer_state(right) == "OK", "the right neighbour is OK")
    symrail.barrier()
    buf.free()
    inbox.free()
    if me == 0:
        print("ok: python heap put/get on %d PEs; %s" % (n, numpy_note))
check(not symrail.initialized(), "finalized by the context manager")
