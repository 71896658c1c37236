#!/bin/sh
# make install into a private prefix; the installed package, with no
# PYTHONPATH into the source tree and no LD_LIBRARY_PATH, finds the installed
# libsymrail through the path recorded at install time, and runs under symrun.

# An uninstrumented program (the interpreter, or one built by symcc) loads
# a sanitizer build's library only with the sanitizer's runtime preloaded.
if [ "${SR_SANITIZERS:-no}" != no ]; then
    echo "SKIP: the installed Python package under --enable-sanitizers=$SR_SANITIZERS"
    exit 77
fi
: "${top_builddir:?top_builddir must be set (run through make check)}"
: "${top_srcdir:?top_srcdir must be set (run through make check)}"
PY=${PYTHON:-python3}
if [ "$PY" = : ] || ! command -v "$PY" >/dev/null 2>&1; then
    echo "SKIP: no Python 3 (configure found none)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/symrail-pyinst.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install \
        prefix="$prefix" >"$work/install.log" 2>&1; then
    echo "FAIL: make install prefix=...: $(tail -n 5 "$work/install.log" | tr '\n' ';')"
    exit 1
fi
init=$(find "$prefix" -path '*/symrail/__init__.py' | head -n 1)
if [ -z "$init" ] || [ ! -f "$(dirname "$init")/_config.py" ]; then
    echo "FAIL: no symrail package with _config.py under the prefix"
    find "$prefix" -name '*.py' | sed 's/^/    | /'
    exit 1
fi
site=$(dirname "$(dirname "$init")")
echo "PASS: the package is installed in ${site#$prefix/}"
nfail=0
out=$(cd "$work" && env -u LD_LIBRARY_PATH -u SYMRAIL_PYTHON_LIB PYTHONPATH="$site" \
    "$top_builddir/symrun" -n 2 --timeout 120 "$PY" "$top_srcdir/tests/python/test_installed.py" \
    "$prefix" 2>&1)
if echo "$out" | grep -q '^ok: installed package'; then
    echo "PASS: the installed package loads the installed library and runs under symrun"
else
    echo "FAIL: the installed package: $out"
    nfail=1
fi
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" uninstall \
        prefix="$prefix" >"$work/uninstall.log" 2>&1 &&
        [ -z "$(find "$site" -path '*symrail*' -type f 2>/dev/null)" ]; then
    echo "PASS: make uninstall removes the package"
else
    echo "FAIL: make uninstall left: $(find "$site" -path '*symrail*' -type f | tr '\n' ' ')"
    nfail=1
fi
exit $nfail
