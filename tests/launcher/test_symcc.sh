#!/bin/sh
# Installs the build into a private prefix, compiles examples/hello.c with
# the installed symcc and runs it without LD_LIBRARY_PATH: the wrapper's run
# path must find the library wherever it was installed.
: "${top_builddir:?top_builddir must be set (run through make check)}"
: "${top_srcdir:?top_srcdir must be set (run through make check)}"

CC_CHECK=${CC:-cc}
if ! command -v "$CC_CHECK" >/dev/null 2>&1 && ! command -v cc >/dev/null 2>&1; then
    echo "SKIP: no C compiler"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/symrail-symcc.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

# Nothing of the outer make (jobs, flags) may leak into this one.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install \
        prefix="$prefix" >"$work/install.log" 2>&1; then
    echo "FAIL: make install prefix=...: $(tail -n 5 "$work/install.log" | tr '\n' ';')"
    exit 1
fi
nfail=0
if [ -x "$prefix/bin/symcc" ]; then
    echo "PASS: symcc installed"
else
    echo "FAIL: symcc installed: no $prefix/bin/symcc"
    exit 1
fi
if "$prefix/bin/symcc" "$top_srcdir/examples/hello.c" -o "$work/hello" >"$work/cc.log" 2>&1; then
    echo "PASS: symcc compiles and links examples/hello.c"
else
    echo "FAIL: symcc compiles and links examples/hello.c: $(tr '\n' ';' <"$work/cc.log")"
    exit 1
fi
# A singleton (no launcher variables), with the loader left to the run path.
out=$(env -u LD_LIBRARY_PATH -u PMIX_NAMESPACE "$work/hello" 2>&1)
if [ "$out" = "hello from PE 0 of 1" ]; then
    echo "PASS: the program runs without LD_LIBRARY_PATH"
else
    echo "FAIL: the program runs without LD_LIBRARY_PATH: $out"
    nfail=1
fi
# Compile-only calls get no link flags.
if "$prefix/bin/symcc" --showme -c x.c | grep -q -- '-lsymrail'; then
    echo "FAIL: symcc -c adds no link flags: $("$prefix/bin/symcc" --showme -c x.c)"
    nfail=1
else
    echo "PASS: symcc -c adds no link flags"
fi
exit $nfail
