# config_keys: every daemon lists its configuration keys (--config-keys, the source of the
# configuration man pages), and the list is the configuration: one line per key with five
# tab-separated fields (name, type, default, range, description), the same keys in the
# same order as -n prints, each default the value -n prints for an empty file, and every
# shipped config file sets only listed keys. Needs no root, starts no daemon. Bounded.
if [ -z "${CFGKEYS_TIMED:-}" ]; then
	CFGKEYS_TIMED=1 exec timeout -k 5 120 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

: >"$TMP/empty.conf"
for prog in vsched vsched-agent vsched-controller; do
	[ -x "$VS_BIN/$prog" ] || skip "$prog not built"
	"$VS_BIN/$prog" --config-keys >"$TMP/$prog.keys" || fail "$prog --config-keys: exit $?"
	"$VS_BIN/$prog" -n -c "$TMP/empty.conf" >"$TMP/$prog.n" 2>"$TMP/$prog.err" ||
		fail "$prog -n on an empty config: $(cat "$TMP/$prog.err")"
	[ -s "$TMP/$prog.keys" ] || fail "$prog --config-keys printed nothing"
	bad=$(awk -F'\t' 'NF != 5 || $1 == "" || $2 == "" || $3 == "" || $5 == ""' "$TMP/$prog.keys")
	[ -z "$bad" ] || fail "$prog --config-keys: lines without five fields: $bad"
	cmp -s <(cut -f1 "$TMP/$prog.keys") <(sed 's/ = .*//' "$TMP/$prog.n") ||
		fail "$prog: --config-keys and -n list other keys: $(diff <(cut -f1 "$TMP/$prog.keys") <(sed 's/ = .*//' "$TMP/$prog.n") | head -5)"
	# defaults given as values (not computed ones, in parentheses) are what -n prints
	while IFS=$'\t' read -r name type dflt range doc; do
		case $dflt in "("*) continue ;; esac
		grep -qxF "$name = $dflt;" "$TMP/$prog.n" ||
			fail "$prog: default of $name is $dflt, -n prints $(grep "^$name = " "$TMP/$prog.n")"
	done <"$TMP/$prog.keys"
	pass "$prog: $(wc -l <"$TMP/$prog.keys") keys listed, as -n prints them, defaults included"
done
for conf in vsched:vsched.conf vsched-agent:agent.conf vsched-controller:controller.conf; do
	prog=${conf%%:*}
	keys=$(grep -oE '^#? ?[a-z_]+ =' "$VS_SRC/configs/${conf#*:}" | tr -d '# =' | sort -u)
	for k in $keys; do
		grep -q "^$k"$'\t' "$TMP/$prog.keys" || fail "configs/${conf#*:}: $k is not a key of $prog"
	done
done
pass "every key the shipped configs set or show is listed"
