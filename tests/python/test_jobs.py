"""Two jobs started apart, from Python: the exporter writes its endpoint to
a file in DIR, the connector connects, and through that connection the
connector writes blocks into a segment the exporter registered, with a
notification at the end; the exporter verifies every byte.  After the
connector disconnects, sending to the exporter fails with PEER_GONE.
Arguments: exporter DIR, or connector DIR."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symrail  # noqa: E402
from tcommon import check, raises  # noqa: E402

role, d = sys.argv[1], sys.argv[2]
TAG_HELLO, TAG_DESC, TAG_DONE, TAG_BYE = range(0x300, 0x304)
BB, NB, T = 4096, 16, 60000
REMOTE = [15, 14, 3, 4, 5, 9]


def block(i):
    return bytes(((i * 29 + j) & 0xFF) for j in range(256)) * (BB // 256)


with symrail.init() as rt:
    check(rt.n_pes >= 1, "a job of its own")
    if role == "exporter":
        blob = symrail.endpoint_export()
        check(isinstance(blob, bytes) and 0 < len(blob) <= symrail._layout.ENDPOINT_MAX,
              "endpoint of %d bytes" % len(blob))
        with open(os.path.join(d, "ep.tmp"), "wb") as f:
            f.write(blob)
        os.rename(os.path.join(d, "ep.tmp"), os.path.join(d, "ep"))
        peer = symrail.endpoint_accept(T)
        check(peer >= rt.n_pes, "a connected peer is numbered from n_pes up: %d" % peer)
        m = symrail.notify_wait_tag(TAG_HELLO, T)
        check(m.src_pe == peer and m.payload == b"hello", "hello from the connector: %r" % m)
        pool = bytearray(NB * BB)
        with symrail.seg_register(pool) as seg:
            symrail.notify_send(peer, TAG_DESC, seg.export())
            m = symrail.notify_wait_tag(TAG_DONE, T)
            check(m.ok and m.src_pe == peer and m.payload == b"blocks", "batch notification %r" % m)
            want = bytearray(NB * BB)
            for i, r in enumerate(REMOTE):
                want[r * BB:(r + 1) * BB] = block(i)
            check(pool == want, "every byte of the pool the other job wrote")
            symrail.notify_send(peer, TAG_BYE, b"bye")
        print("ok: python jobs: exporter got %d blocks from connected peer %d"
              % (len(REMOTE), peer))
    else:
        path = os.path.join(d, "ep")
        deadline = time.time() + T / 1000
        while not os.path.exists(path):
            check(time.time() < deadline, "no endpoint file from the exporter")
            time.sleep(0.05)
        with open(path, "rb") as f:
            peer = symrail.endpoint_connect(f.read())
        check(peer >= rt.n_pes, "connected as PE %d" % peer)
        symrail.notify_send(peer, TAG_HELLO, b"hello")
        with symrail.seg_import(symrail.notify_wait_tag(TAG_DESC, T).payload) as rseg:
            check(rseg.pe == peer and rseg.nbytes == NB * BB, "imported %r" % rseg)
            src = b"".join(block(i) for i in range(len(REMOTE)))
            with symrail.Batch(16) as b:
                b.add_blocks(symrail.WRITE, src, list(range(len(REMOTE))), rseg, 0, REMOTE, BB)
                b.submit_notify(peer, TAG_DONE, b"blocks")
                b.wait(T)
            check(symrail.notify_wait_tag(TAG_BYE, T).payload == b"bye", "bye")
        symrail.endpoint_disconnect(peer)
        raises(symrail.PeerGoneError, "SYMRAIL_ERR_PEER_GONE", symrail.notify_send, peer, 1,
               b"after disconnect")
        print("ok: python jobs: connector wrote %d blocks to PE %d, then PEER_GONE"
              % (len(REMOTE), peer))
