#!/bin/sh
# shmem.h compiles as C11 and as C++, its type-generic names (a _Generic
# macro in C, overloads in C++) pick the same typed function for every type,
# and each of those is one the header declares.
: "${top_srcdir:?}" "${top_builddir:?}"
CC=${CC:-cc}
CXX=${CXX:-g++}
command -v "$CXX" >/dev/null 2>&1 || { echo "SKIP: no C++ compiler ($CXX)"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
pass() { echo "PASS: $*"; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
inc="-I$top_srcdir/include -I$top_builddir/include"
src="$top_srcdir/tests/build/t_shmem_generic.c"

for std in c99 c11 gnu11; do
    echo '#include <shmem.h>' >"$tmp/inc.c"
    if $CC -std=$std -Wall -Wextra -Werror -pedantic $inc -fsyntax-only "$tmp/inc.c" 2>"$tmp/err"
    then pass "shmem.h alone compiles as $std -pedantic"
    else fail "shmem.h as $std:"; head -20 "$tmp/err"; fi
done
for std in c++98 c++11 c++17; do
    if $CXX -std=$std -Wall -Wextra -Werror $inc -x c++ -fsyntax-only "$tmp/inc.c" 2>"$tmp/err"
    then pass "shmem.h alone compiles as $std"
    else fail "shmem.h as $std:"; head -20 "$tmp/err"; fi
done

# shmem.h is cut into parts: each is installed, and refuses to be included
# without shmem.h.
parts=$(sed -n 's/^#include "\(shmem_[a-z0-9]*\.h\)"$/\1/p' "$top_srcdir/include/shmem.h")
[ -n "$parts" ] || fail "shmem.h includes no parts"
for p in $parts; do
    tr -d '\\\n' <"$top_srcdir/Makefile.am" | grep -q "include_HEADERS[^=]*=[^=]*include/$p" &&
        pass "$p is installed" || fail "$p is not in include_HEADERS"
    echo "#include <$p>" >"$tmp/part.c"
    if $CC $inc -fsyntax-only "$tmp/part.c" 2>"$tmp/err"; then fail "$p compiles without shmem.h"
    elif grep -q 'include <shmem.h>' "$tmp/err"; then pass "$p alone says to include shmem.h"
    else fail "$p alone:"; head -5 "$tmp/err"; fi
done

$CC -std=c11 -Wall -Wextra -Werror $inc -c "$src" -o "$tmp/c.o" 2>"$tmp/err" &&
    pass "every generic name compiles in C11" || { fail "C11:"; head -30 "$tmp/err"; }
$CXX -std=c++11 -Wall -Wextra -Werror $inc -x c++ -c "$src" -o "$tmp/cxx.o" 2>"$tmp/err" &&
    pass "every generic name compiles in C++" || { fail "C++:"; head -30 "$tmp/err"; }
[ "$nfail" -eq 0 ] || exit 1

nm -u "$tmp/c.o" | awk '{print $2}' | sort -u >"$tmp/c.syms"
nm -u "$tmp/cxx.o" | awk '{print $2}' | grep -v '^_Z' | sort -u >"$tmp/cxx.syms"
n=$(wc -l <"$tmp/c.syms")
if cmp -s "$tmp/c.syms" "$tmp/cxx.syms"; then pass "C11 and C++ call the same $n functions"
else fail "C11 and C++ call different functions:"; diff "$tmp/c.syms" "$tmp/cxx.syms" | head -20; fi
# 893 on LP64: a smaller number means a name or a type went missing.
[ "$n" -ge 893 ] && pass "$n typed functions reached" || fail "only $n typed functions reached"
grep -q shmemx_generic_type_error_ "$tmp/c.syms" && fail "a listed type fell to the error branch"
for f in shmem_ctx_longdouble_ibget shmem_schar_put_signal_nbi shmem_ctx_char_g \
         shmem_ctx_ulonglong_atomic_fetch_xor_nbi shmem_int32_atomic_and shmem_complexd_sum_reduce \
         shmem_uchar_sum_exscan shmem_longlong_atomic_compare_swap shmem_ushort_test_some_vector \
         shmem_ctx_int64_atomic_fetch_xor shmem_uint_atomic_add shmem_long_put; do
    grep -qx "$f" "$tmp/c.syms" && pass "selects $f" || fail "does not select $f"
done
# Every function reached is declared by the header (the preprocessed header
# names it followed by its parameter list).
$CC -std=c11 $inc -E -P "$tmp/inc.c" | tr ';' '\n' |
    sed -n 's/.*[ *]\(shmem[a-z0-9_]*\)(.*/\1/p' | sort -u >"$tmp/decl"
undecl=$(grep "^shmem_" "$tmp/c.syms" | comm -23 - "$tmp/decl")
[ -z "$undecl" ] && pass "every function reached is declared" || fail "not declared: $undecl"
# Prefix reductions are SUM alone in 1.6.
for f in shmem_uchar_xor_exscan shmem_int_max_inscan shmem_double_prod_inscan; do
    grep -qx "$f" "$tmp/decl" && fail "declares $f, which OpenSHMEM does not define" ||
        pass "does not declare $f"
done
[ "$nfail" -eq 0 ]
