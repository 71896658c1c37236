#!/bin/sh
# run-two-vms.sh without guests: a stand-in run-in-vm.sh next to a copy of
# it, where guest a's command ends at once and guest b serves until TERM, as
# a bench's or a suite's server does.  Checks that a's status comes back and
# that b is ended with it, not left running (it once outlived the script,
# orphaned, until its own timeout).
set -u
src=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P) || exit 1
command -v ss >/dev/null 2>&1 || { echo "SKIP: ss is not installed (iproute2)"; exit 77; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
cp "$src/run-two-vms.sh" "$d/" || exit 1
cat > "$d/run-in-vm.sh" <<'EOF'
#!/bin/sh
case " $* " in
    *" TG_ROLE=b "*)
        trap 'kill "$s"; wait "$s"; exit 0' TERM
        sleep 60 &
        s=$!
        echo "$s" > "$STANDIN_DIR/b.tmp" && mv "$STANDIN_DIR/b.tmp" "$STANDIN_DIR/b.sleep"
        wait
        exit 0 ;;
esac
# a: ends once b serves
i=0
while [ ! -s "$STANDIN_DIR/b.sleep" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
exit 3
EOF
chmod +x "$d/run-in-vm.sh"
STANDIN_DIR=$d sh "$d/run-two-vms.sh" -- true > "$d/out" 2>&1
rc=$?
fail=0
if [ "$rc" = 3 ]; then echo "PASS: guest a's status is the script's"; else
    echo "FAIL: exit $rc, not guest a's 3"; sed 's/^/    | /' "$d/out"; fail=1; fi
b=$(cat "$d/b.sleep" 2>/dev/null)
if [ -z "$b" ]; then
    echo "FAIL: guest b's stand-in did not start"; fail=1
elif kill -0 "$b" 2>/dev/null && ! ps -o stat= -p "$b" | grep -q '^Z'; then
    echo "FAIL: guest b was left running after guest a ended"; kill "$b"; fail=1
else
    echo "PASS: guest b ended with guest a"
fi
exit "$fail"
