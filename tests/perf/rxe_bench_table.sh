# The tables of the Soft-RoCE benches (rxe_bench.sh in one guest,
# rxe_bench_two.sh across two), from the raw outputs
# shellcheck disable=SC2154,SC2317 # sourced: the variables and helpers are the caller's
# they leave in $w: ${op}_SIZE.PASS (perftest bandwidth), sr.PASS (sr_bench
# --net), lat.PASS (ib_write_lat); $passes, $mib, $SIZES, bytes and say as
# there.
# MB/s (10^6) from a perftest bandwidth run ("bytes iterations peak avg
# msgrate", in MiB/s); nothing when the output has no such line.
pt_bw() { # out bytes
    [ -f "$1" ] || return 0
    awk -v b="$2" '$1 == b && NF >= 5 && $4 ~ /^[0-9.]+$/ { printf "%.3f\n", $4 * 1.048576; exit }' "$1"
}
sr_bw() { # out size column (3 put_nbi, 4 put, 5 get_nbi, 6 get)
    [ -f "$1" ] || return 0
    awk -v s="$2" -v c="$3" '$1 == s && NF == 6 && $2 ~ /^[0-9]+$/ { print $c; exit }' "$1"
}
median() { # values...: the median of those given (empty ones left out), or nothing
    for v in "$@"; do echo "$v"; done | sort -g | awk 'NF { v[n++] = $1 }
        END { if (n) printf "%.3f\n", n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2 }'
}
ratio() { # a b: b / a
    awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && a > 0) printf "%.2f", b / a; else printf "n/a" }'
}
fmt() { # number or n/a
    if [ -n "$1" ]; then printf '%.1f' "$1"; else printf 'n/a'; fi
}

bw_table() { # TITLE
    say "# symrail vs perftest $1; MB/s = 10^6 bytes/s; median of $passes pass(es)"
    say "#   perftest: ib_write_bw / ib_read_bw -x 1 -F, one QP, $mib MiB a run"
    say "#   symrail: sr_bench --net put_nbi / get_nbi windows (median of 3 rounds a pass);"
    say "#   ratio = symrail / perftest, target >= 0.90"
    printf '# %-9s %5s %14s %13s %6s %14s   %s\n' op bytes "perftest MB/s" "symrail MB/s" ratio \
        "blocking MB/s" "ratio of each pass"
    met=0 total=0
    for op in write read; do
        if [ $op = write ]; then name=write/put cnbi=3 cblk=4; else name=read/get cnbi=5 cblk=6; fi
        for s in $SIZES; do
            b=$(bytes "$s")
            pts='' srs='' blks='' each=''
            for p in $(seq "$passes"); do
                x=$(pt_bw "$w/${op}_$s.$p" "$b")
                y=$(sr_bw "$w/sr.$p" "$s" "$cnbi")
                pts="$pts $x" srs="$srs $y" blks="$blks $(sr_bw "$w/sr.$p" "$s" "$cblk")"
                each="$each $(ratio "$x" "$y")"
            done
            # shellcheck disable=SC2086
            pt=$(median $pts) sr=$(median $srs) blk=$(median $blks)
            r=$(ratio "$pt" "$sr")
            printf '  %-9s %5s %14s %13s %6s %14s  %s\n' "$name" "$s" "$(fmt "$pt")" "$(fmt "$sr")" \
                "$r" "$(fmt "$blk")" "$each"
            total=$((total + 1))
            case $r in n/a) ;; *) awk -v r="$r" 'BEGIN { exit !(r >= 0.9) }' && met=$((met + 1)) ;; esac
        done
    done
    say "# bandwidth target (symrail >= 0.90 x perftest): met at $met of $total sizes"
}

lat_table() {
    # ib_write_lat: "bytes iters t_min t_max t_typical t_avg ..."; sr_bench: "... median mean".
    # Each row: the median over the passes of each pass's median and mean.
    pt_lat1() { awk '$1 == 8 && NF >= 7 && $6 ~ /^[0-9.]+$/ { print $5, $6; exit }' "$1" 2>/dev/null; }
    sr_row1() { # file pattern
        awk -v p="$2" 'index($0, p) && $NF ~ /^[0-9.]+$/ { print $(NF - 1), $NF; exit }' "$1"
    }
    over_passes() { # command args...: "median-of-medians median-of-means"
        meds='' means=''
        for p in $(seq "$passes"); do
            v=$("$@" "$p")
            [ -n "$v" ] || continue
            meds="$meds ${v% *}" means="$means ${v#* }"
        done
        # shellcheck disable=SC2086
        m1=$(median $meds) m2=$(median $means)
        [ -z "$m1" ] || echo "$m1 $m2"
    }
    pt_of() { pt_lat1 "$w/lat.$1"; }
    sr_of() { sr_row1 "$w/sr.$2" "$1"; }
    pt_lat=$(over_passes pt_of)
    sr_ow=$(over_passes sr_of "one way (round trip/2)")
    sr_put=$(over_passes sr_of "put (blocking")
    sr_putq=$(over_passes sr_of "put + quiet")
    lat_row() { # label "median mean" reference-median
        set -- "$1" "${2% *}" "${2#* }" "${3:-}"
        [ -n "$2" ] || set -- "$1" "" "" "$4"
        printf '  %-56s %8s %8s %7s\n' "$1" "$(fmt "$2")" "$(fmt "$3")" "$(ratio "$4" "$2")"
    }
    say ""
    say "# latency, 8-byte payloads, one way, usec; median over $passes pass(es), each pass"
    say "# running sr_bench and ib_write_lat back to back; ratio = median / perftest's median"
    say "#   targets: put <= 1.3x, put_signal ping-pong <= 1.5x"
    printf '# %-56s %8s %8s %7s\n' "" median mean ratio
    lat_row "perftest ib_write_lat (write ping-pong / 2)" "$pt_lat" "${pt_lat% *}"
    lat_row "symrail put_signal SET ping-pong / 2" "$sr_ow" "${pt_lat% *}"
    lat_row "symrail put, blocking (until the source may be reused)" "$sr_put" "${pt_lat% *}"
    lat_row "symrail put + quiet (until remote completion)" "$sr_putq" "${pt_lat% *}"
}
