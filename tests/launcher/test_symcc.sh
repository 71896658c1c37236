#!/bin/sh
# Installs the build into a private prefix, compiles examples/hello.c with
# the installed symcc and runs it without LD_LIBRARY_PATH: the wrapper's run
# path must find the library wherever it was installed.

# An uninstrumented program (the interpreter, or one built by symcc) loads
# a sanitizer build's library only with the sanitizer's runtime preloaded.
if [ "${SR_SANITIZERS:-no}" != no ]; then
    echo "SKIP: programs built by symcc under --enable-sanitizers=$SR_SANITIZERS"
    exit 77
fi
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
# An OpenSHMEM program builds the same way, with symcc and with pkg-config.
if "$prefix/bin/symcc" "$top_srcdir/examples/shmem_hello.c" -o "$work/shmem_hello" \
        >"$work/cc.log" 2>&1; then
    out=$(env -u LD_LIBRARY_PATH -u PMIX_NAMESPACE "$work/shmem_hello" 2>&1)
    if [ "$out" = "hello from PE 0 of 1: PE 0 says hi" ]; then
        echo "PASS: symcc builds an OpenSHMEM program that runs"
    else
        echo "FAIL: the OpenSHMEM program built by symcc says: $out"
        nfail=1
    fi
else
    echo "FAIL: symcc examples/shmem_hello.c: $(tr '\n' ';' <"$work/cc.log")"
    nfail=1
fi
if command -v pkg-config >/dev/null 2>&1; then
    # The .pc names the configured prefix; this install went elsewhere.
    flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --define-variable=prefix="$prefix" \
        --cflags --libs symrail-shmem)
    if ${CC:-cc} "$top_srcdir/examples/shmem_hello.c" -o "$work/shmem_hello_pc" $flags \
            -Wl,-rpath,"$prefix/lib" >"$work/pc.log" 2>&1 &&
            [ "$(env -u PMIX_NAMESPACE "$work/shmem_hello_pc" 2>&1)" = \
              "hello from PE 0 of 1: PE 0 says hi" ]; then
        echo "PASS: pkg-config symrail-shmem builds it too"
    else
        echo "FAIL: pkg-config symrail-shmem ($flags): $(tr '\n' ';' <"$work/pc.log")"
        nfail=1
    fi
else
    echo "SKIP: no pkg-config"
fi
# oshcc and oshrun only with --enable-oshmem-names.
if ! grep -q -- "'--enable-oshmem-names'" "$top_builddir/config.status"; then
    [ ! -e "$prefix/bin/oshcc" ] && [ ! -e "$prefix/bin/oshrun" ] &&
        echo "PASS: no oshcc/oshrun without --enable-oshmem-names" ||
        { echo "FAIL: oshcc/oshrun installed without --enable-oshmem-names"; nfail=1; }
else
    [ -x "$prefix/bin/oshcc" ] && [ -x "$prefix/bin/oshrun" ] &&
        echo "PASS: oshcc and oshrun installed (--enable-oshmem-names)" ||
        { echo "FAIL: --enable-oshmem-names installed no oshcc/oshrun"; nfail=1; }
fi
# Compile-only calls get no link flags.
if "$prefix/bin/symcc" --showme -c x.c | grep -q -- '-lsymrail'; then
    echo "FAIL: symcc -c adds no link flags: $("$prefix/bin/symcc" --showme -c x.c)"
    nfail=1
else
    echo "PASS: symcc -c adds no link flags"
fi
exit $nfail
