#!/bin/sh
# Build hygiene: the version is written only in configure.ac and everything
# that reports it agrees; every result configure defines is used somewhere.
: "${top_srcdir:?}" "${top_builddir:?}"
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
pass() { echo "PASS: $*"; }

ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
[ -n "$ver" ] || { echo "FAIL: no PACKAGE_VERSION in config.h"; exit 1; }

# No source file repeats the number (or its parts as macro values).
re=$(printf '%s' "$ver" | sed 's/\./\\./g')
hits=$(cd "$top_srcdir" && grep -rEn -e "\"$re\"" -e '#define[[:space:]]+SYMRAIL_VERSION_(MAJOR|MINOR|PATCH)[[:space:]]+[0-9]' \
    include src launcher symrail.pc.in 2>/dev/null)
if [ -n "$hits" ]; then fail "the version is written outside configure.ac:"; echo "$hits"; else
    pass "the version is written only in configure.ac"; fi

want="header $ver $ver
library $ver $ver"
got=$("$top_builddir/tests/build/t_version")
[ "$got" = "$want" ] && pass "symrail.h and symrail_version() say $ver" ||
    fail "symrail.h / symrail_version() disagree with configure ($ver): $got"
got=$("$top_builddir/symrail-info" --version)
[ "$got" = "symrail $ver" ] && pass "symrail-info --version" || fail "symrail-info --version: $got"
got=$("$top_builddir/symrun" --version)
[ "$got" = "symrun (symrail) $ver" ] && pass "symrun --version" || fail "symrun --version: $got"
got=$(sed -n 's/^Version: //p' "$top_builddir/symrail.pc")
[ "$got" = "$ver" ] && pass "symrail.pc" || fail "symrail.pc says $got"

# What configure.ac defines (AC_CHECK_FUNCS -> HAVE_*, AC_DEFINE, AC_SUBST)
# must be read by a source, a makefile or a template.
names=$(cd "$top_srcdir" && {
    sed -n 's/.*AC_CHECK_FUNCS(\[\([^]]*\)\].*/\1/p' configure.ac | tr ' ' '\n' |
        tr 'a-z' 'A-Z' | sed -n 's/^\(..*\)$/HAVE_\1/p'
    sed -n 's/.*AC_DEFINE\(_UNQUOTED\)\{0,1\}(\[\([A-Za-z0-9_]*\)\].*/\2/p' configure.ac
    sed -n 's/.*AC_SUBST(\[\([A-Za-z0-9_]*\)\].*/\1/p' configure.ac
})
[ -n "$names" ] || fail "found nothing that configure.ac defines"
unused=
for n in $names; do
    (cd "$top_srcdir" && grep -rqw -- "$n" src include launcher tests/unit tests/integration \
        Makefile.am symrail.pc.in include/symrail_version.h.in) || unused="$unused $n"
done
[ -z "$unused" ] && pass "every configure result is used" ||
    fail "configure.ac defines what nothing uses:$unused"

[ "$nfail" -eq 0 ]
