"""Notifications from Python: send, trysend, poll, wait, by tag, 4 KiB payloads."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symrail  # noqa: E402
from tcommon import check  # noqa: E402

with symrail.init() as rt:
    me, n = rt.my_pe, rt.n_pes
    right, left = (me + 1) % n, (me - 1) % n
    big = bytes((me + i) & 0xFF for i in range(symrail.NOTIFY_MAX_PAYLOAD))
    symrail.notify_send(right, 7, b"seven from %d" % me)
    symrail.notify_send(right, 8, big)
    check(symrail.notify_trysend(right, 9, bytearray(b"nine")), "trysend with free slots")
    symrail.notify_send(right, 10)  # no payload

    # by tag, out of order; the others stay queued in order
    m8 = symrail.notify_wait_tag(8, 10000)
    check(m8.src_pe == left and m8.tag == 8 and m8.ok and m8.status == 0
          and m8.status_name == "SYMRAIL_OK" and m8.error is None,
          "tag 8 from the left neighbour: %r" % m8)
    want = bytes((left + i) & 0xFF for i in range(symrail.NOTIFY_MAX_PAYLOAD))
    check(isinstance(m8.payload, bytes) and m8.payload == want, "4 KiB payload intact")
    check(symrail.notify_poll_tag(12345) is None, "poll_tag of a tag nobody sent: None")
    m9 = symrail.notify_wait_tag(9, 10000)
    check(m9.payload == b"nine", "tag 9 payload")
    m7 = symrail.notify_wait(10000)
    check(m7.tag == 7 and m7.payload == b"seven from %d" % left, "oldest left is tag 7: %r" % m7)
    m10 = None
    while m10 is None:
        m10 = symrail.notify_poll()
    check(m10.tag == 10 and m10.payload == b"" and m10.raise_for_status() is m10,
          "poll gets the empty tag-10 message")
    check(symrail.notify_poll() is None, "queue empty: poll gives None")

    # a timeout is symrail's TimeoutError and Python's
    try:
        symrail.notify_wait_tag(7, 50)
        check(False, "wait_tag on an empty queue returned")
    except TimeoutError as e:
        check(isinstance(e, symrail.TimeoutError) and e.name == "SYMRAIL_ERR_TIMEOUT",
              "timeout raised %r" % e)
    symrail.barrier()
    if me == 0:
        print("ok: python notify on %d PEs (tags, 4 KiB payload, trysend, poll, timeout)" % n)
