"""Shared by the Python tests: checks that fail the PE (and so the job)."""
import sys


def check(cond, what):
    if not cond:
        import symrail
        pe = symrail.my_pe() if symrail.initialized() else -1
        print("FAIL: PE %d: %s" % (pe, what), flush=True)
        sys.exit(1)


def raises(cls, status_name, fn, *args, **kw):
    """fn(*args) must raise cls carrying status_name; returns the exception."""
    import symrail
    try:
        fn(*args, **kw)
    except symrail.SymrailError as e:
        check(isinstance(e, cls), "%s raised %r, expected a %s" % (fn.__name__, e, cls.__name__))
        check(e.name == status_name and symrail.STATUS[status_name] == e.status,
              "%s raised %r with name %s, status %s; expected %s"
              % (fn.__name__, e, e.name, e.status, status_name))
        check(status_name in str(e), "%r names its status %s" % (e, status_name))
        return e
    check(False, "%s%r raised nothing, expected %s" % (fn.__name__, args, cls.__name__))


def optional(module):
    """The module, or None (the cases that need it say they are skipped)."""
    try:
        return __import__(module)
    except ImportError:
        return None
