#!/usr/bin/env bash
# gen.sh writes the fixtures of TestCompat (compat_test.go): indexes written
# by older urlhash programs, with the answers those programs gave about them.
# Run it in this directory:
#
#	./gen.sh [COMMIT...]	(default: e742cf5 b17882b df7db59)
#
# For each COMMIT it builds that commit's cmd/urlhash (a git worktree in a
# temporary directory, removed afterwards), writes each kind of index the
# program supports, records the program's answers on copies of it, and
# writes NAME.tar.gz (idx/: the index as the program left it; in/: the
# inputs of the checks; want/: the answers) and NAME.txt (the testscript
# that checks them), NAME being SHORTCOMMIT-KIND. README.md lists the kinds.
# It needs git, go, curl, tar and gzip, takes about a minute a commit, and
# overwrites the files of the commits it is given.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/urlhash-compat.XXXXXX")
serve_pid=
cleanup() {
	if [ -n "$serve_pid" ]; then kill -9 "$serve_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# The URL that the checks add to upgrade an index, and the one prefix that
# scans read: the URL's hash does not start with it, so that the scan's
# answer stays the same after the upgrade.
upgrade_url=https://upgrade.example/compat
scan_prefix=0

# urls SET N prints the N URLs of SET, one a line: hosts shared by several,
# a path and a query.
urls() {
	awk -v s="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "https://%s%d.example/%s/%d?q=%d\n", s, i % 23, s, i, i * 7 }'
}

# iris N prints N IRIs: non-ASCII hosts and paths, kept as given.
iris() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "https://café%d.example/crème/brûlée/%d\n", i % 5, i }'
}

# every K R keeps the lines whose number (from 1) is R modulo K.
every() { awk -v k="$1" -v r="$2" 'NR % k == r'; }

# prefixes N prints N hex keys of 4 to 31 bytes (prefix entries): the
# leading bytes of hashes of fixed strings.
prefixes() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "https://prefix.example/%d\n", i }' | W hash |
		awk '{ n = 4 + (NR * 7) % 28; print substr($1, 1, 2 * n) }'
}

# W runs the program being recorded.
W() { "$bin" "$@"; }

serve_start() { # serve_start DIR [FLAG...]: serves DIR; sets addr and serve_pid
	local dir=$1
	shift
	# The program itself in the background (not the function W, whose
	# subshell a signal would stop without the server).
	"$bin" serve --db "$dir" --listen 127.0.0.1:0 "$@" 2>"$work/serve.log" &
	serve_pid=$!
	for _ in $(seq 300); do
		addr=$(sed -n 's/^urlhash: serving .* on \(http:[^ ]*\)$/\1/p' "$work/serve.log")
		if [ -n "$addr" ]; then return; fi
		sleep 0.1
	done
	echo "gen.sh: serve did not start:" >&2
	cat "$work/serve.log" >&2
	exit 1
}

serve_stop() { # serve_stop SIGNAL
	kill "-$1" "$serve_pid"
	wait "$serve_pid" || true
	serve_pid=
}

# keyed PATH KEY: the URLs on stdin sent to the server with an
# Idempotency-Key, so that the index keeps the answer with the write.
keyed() {
	curl -sS --fail -H "Idempotency-Key: \"$2\"" --data-binary @- "$addr$1" >/dev/null
}

# fill_values DIR [FLAG...] writes every kind of entry into a new index DIR,
# created with the flags: key-only ones (imported, added, deduped), stored
# URL text, data, both, large values, IRIs, first- and last-seen times,
# expiries far ahead and past, prefix entries and full hashes with values,
# entries moved between key-only and valued, revisits, deletions (and keys
# added again after them), and, where the program keeps them, idempotency
# records written through serve.
fill_values() {
	local d=$1
	shift
	urls k 1200 >"$work/k.txt"
	W import --db "$d" "$@" "$work/k.txt" 2>/dev/null
	urls a 300 | W add --db "$d"
	urls t 300 | W put --db "$d" --store-url
	urls td 150 | W put --db "$d" --store-url --data 'etag "td-1"'
	urls dt 150 | W add --db "$d" --data data-only
	urls big 4 | W put --db "$d" --store-url --data "$(printf 'large value %.0s' $(seq 500))"
	iris 30 | W put --db "$d" --store-url
	urls s 150 | W dedupe --db "$d" --revisit-after 1h --store-url >/dev/null
	urls st 150 | W dedupe --db "$d" --revisit-after 1h >/dev/null
	urls n 150 | W dedupe --db "$d" >/dev/null
	urls xf 100 | W add --db "$d" --ttl 876000h
	urls xt 80 | W put --db "$d" --store-url --data ttl --ttl 876000h
	urls xs 80 | W add --db "$d" --ttl 1s
	urls xst 40 | W put --db "$d" --store-url --data gone --ttl 1s
	prefixes 60 | W add --db "$d" --hashes
	prefixes 60 | every 3 1 | W put --db "$d" --hashes --data threat
	urls h 40 | W hash | W put --db "$d" --hashes --data full-hash
	# Moves: key-only entries gain a value, valued ones lose theirs.
	every 12 1 <"$work/k.txt" | W put --db "$d" --data moved
	urls t 300 | every 4 2 | W put --db "$d"
	sleep 2 # the 1s expiries pass; revisits of 1s are due
	every 24 3 <"$work/k.txt" | W dedupe --db "$d" --revisit-after 1s >/dev/null
	urls s 150 | every 4 0 | W dedupe --db "$d" --revisit-after 1s --store-url >/dev/null
	# Deletions, and keys added again after theirs.
	every 7 5 <"$work/k.txt" | W delete --db "$d"
	urls a 300 | every 6 1 | W delete --db "$d"
	urls a 300 | every 6 1 | W add --db "$d" --store-url
	urls t 300 | every 5 0 | W delete --db "$d"
	urls s 150 | every 7 0 | W delete --db "$d"
	urls xf 100 | every 5 0 | W delete --db "$d"
	prefixes 60 | every 4 0 | W delete --db "$d" --hashes
	if W help dedupe | grep -q Idempotency-Key; then
		serve_start "$d"
		urls r 20 | keyed /v1/urls/add compat-add
		urls rv 20 | keyed '/v1/urls/add?revisit_after=1h' compat-visit
		urls rd 200 | W dedupe --db "$addr" >/dev/null
		serve_stop TERM
	fi
}

# fill_killed writes through serve and kills it with SIGKILL: the key
# table's log holds the writes (too few for a merge), Badger's memtable is
# not flushed, the filter snapshot is stale and DIR/urlhash.serve stays.
fill_killed() {
	local d=$1
	serve_start "$d"
	urls k 1500 | W add --db "$addr"
	urls t 200 | W put --db "$addr" --store-url --data 'etag "t-1"'
	urls s 150 | W dedupe --db "$addr" --revisit-after 1h --store-url >/dev/null
	urls xf 80 | W add --db "$addr" --ttl 876000h
	urls xs 40 | W add --db "$addr" --ttl 1s
	prefixes 40 | W add --db "$addr" --hashes
	urls k 1500 | every 10 3 | W delete --db "$addr"
	urls t 200 | every 10 3 | W delete --db "$addr"
	urls r 20 | keyed /v1/urls/add compat-add
	urls rv 20 | keyed '/v1/urls/add?revisit_after=1h' compat-visit
	sleep 2
	serve_stop KILL
}

# bad_hosts N: the hosts of a threat list's entries.
bad_hosts() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "http://bad%d.example/\n", i }'; }

# fill_threatlist writes a Safe Browsing style list (webrisk profile): the
# host expressions' hashes cut to 4..32 bytes, some with a threat type as
# data, some deleted; and a few full entries with times and text.
fill_threatlist() {
	local d=$1
	bad_hosts 300 | W expressions --json --prefix-len 32 |
		sed 's/.*"expressions":\[{"expression":"[^"]*","hash":"\([0-9a-f]*\)".*/\1/' |
		awk '{ split("4 4 4 5 6 8 12 16 20 31 32", l, " "); n = l[1 + NR % 11]; print substr($1, 1, 2 * n) }' >"$work/list.txt"
	W add --db "$d" --profile webrisk --hashes --from "$work/list.txt"
	every 3 0 <"$work/list.txt" | W put --db "$d" --hashes --data SOCIAL_ENGINEERING
	every 10 7 <"$work/list.txt" | W delete --db "$d" --hashes
	# Full entries beside the list, which the checks' writes use: one
	# with times and text, two with text, one key-only.
	W dedupe --db "$d" --revisit-after 1h --store-url https://seen.example/ >/dev/null
	W put --db "$d" --store-url https://text.example/ https://valued.example/
	W add --db "$d" https://keyonly.example/
}

# record KIND DIR NAME records the answers about the index in DIR (on
# copies) into $out/NAME/{in,want} and writes NAME.txt.
record() {
	local kind=$1 d=$2 name=$3
	local o=$work/out/$name
	rm -rf "$o"
	mkdir -p "$o/in" "$o/want"
	cp -a "$d" "$o/idx"
	local ro=$work/ro
	rm -rf "$ro"
	cp -a "$d" "$ro"
	if [ "$kind" = killed ]; then
		# A read-only command refuses an index a crash left; the first
		# writable open recovers it. The answers are those after it.
		if W export --db "$ro" --format jsonl >/dev/null 2>&1; then
			echo "gen.sh: $name: a read-only command opened the killed index" >&2
			exit 1
		fi
		W add --db "$ro" "$upgrade_url"
	fi

	# Inputs: a sample of the full keys (every 20th stored one, and the
	# first URLs of every set: stored, moved, revisited, expired, deleted,
	# added again, never stored), and, for lookup, hashes that start with
	# each prefix entry, stored full hashes and hashes matching nothing.
	W export --db "$ro" --format jsonl >"$o/want/export.jsonl"
	sed -n 's/^{"key":"\([0-9a-f]\{64\}\)".*/\1/p' "$o/want/export.jsonl" | every 20 1 >"$o/in/sample.txt"
	for s in k a t td dt big s st n xf xt xs xst h r rv rd never; do urls "$s" 6; done | W hash >>"$o/in/sample.txt"
	sed -n 's/^{"key":"\([0-9a-f]\{8,62\}\)".*/\1/p' "$o/want/export.jsonl" |
		awk '{ k = $1; while (length(k) < 64) k = k "ff"; print k }' >"$o/in/lookup.txt"
	head -n 10 "$o/in/sample.txt" >>"$o/in/lookup.txt"
	urls nowhere 10 | W hash >>"$o/in/lookup.txt"

	W has --db "$ro" --hashes --from "$o/in/sample.txt" >"$o/want/has.txt" || true
	W get --db "$ro" --hashes --from "$o/in/sample.txt" >"$o/want/get.txt" || true
	W scan --db "$ro" --prefix "$scan_prefix" --json >"$o/want/scan.txt"
	W lookup --db "$ro" --hashes --from "$o/in/lookup.txt" >"$o/want/lookup.txt"
	local lookup_urls=
	if [ "$kind" = threatlist ]; then
		{ bad_hosts 300 | sed 's,$,some/page?x=1,'; urls good 20; } >"$o/in/urls.txt"
		W lookup --db "$ro" --from "$o/in/urls.txt" >"$o/want/lookup-urls.txt"
		lookup_urls=yes
	fi
	local counts
	counts=$(W stats --db "$ro" --json)
	# A full backup, which the checks restore, and whose chain they
	# continue after the upgrade.
	local since=
	if [ "$kind" != killed ]; then
		W backup --db "$ro" >"$o/want/full.bak" 2>"$work/backup.err"
		since=$(sed -n 's/.* next: --since \([0-9]*\)$/\1/p' "$work/backup.err")
		[ -n "$since" ] || { echo "gen.sh: $name: no version in backup's stderr:" >&2; cat "$work/backup.err" >&2; exit 1; }
	fi

	# The URLs the writes after the upgrade use: one with times, one
	# expired, one with text, one key-only, one valued.
	local seen expired text keyonly valued
	case $kind in
	threatlist)
		seen=https://seen.example/ expired=https://expired.example/ text=https://text.example/
		keyonly=https://keyonly.example/ valued=https://valued.example/
		;;
	killed)
		seen=$(urls s 150 | sed -n 2p) expired=$(urls xs 40 | sed -n 1p) text=$(urls t 200 | sed -n 1p)
		keyonly=$(urls k 1500 | sed -n 1p) valued=$(urls t 200 | sed -n 2p)
		;;
	*)
		seen=$(urls s 150 | sed -n 2p) expired=$(urls xst 40 | sed -n 1p) text=$(urls t 300 | sed -n 1p)
		keyonly=$(urls k 1200 | sed -n 2p) valued=$(urls dt 150 | sed -n 1p)
		;;
	esac
	local first
	first=$(W get --db "$ro" "$seen" | sed -n 's/.*\tfirst_seen=\([^\t]*\).*/\1/p')
	[ -n "$first" ] || { echo "gen.sh: $seen has no first_seen in $name" >&2; exit 1; }

	# The upgrade and the writes after it, by the same program.
	W add --db "$ro" "$upgrade_url"
	W export --db "$ro" --format jsonl >"$o/want/export-after.jsonl"
	local after
	after=$(W stats --db "$ro" --json)
	if [ "$kind" = threatlist ]; then
		W add --db "$ro" --ttl 1s "$expired"
		sleep 2
	fi
	W dedupe --db "$ro" --revisit-after 1s "$seen" >/dev/null
	W add --db "$ro" "$expired"
	W delete --db "$ro" "$text"
	W put --db "$ro" --data gained "$keyonly"
	W put --db "$ro" "$valued"
	W verify --db "$ro" >/dev/null
	local final
	final=$(W stats --db "$ro" --json)

	local h_keyonly h_valued
	local profile=urlhash
	[ "$kind" != threatlist ] || profile=webrisk
	h_keyonly=$(W hash --profile "$profile" "$keyonly")
	h_valued=$(W hash --profile "$profile" "$valued")
	# The format this program records: an index with a key table is
	# upgraded to format 3 by its first writable open; one without stays
	# format 1 until a write asks for a key table (--key-table on).
	local was now
	was=$(sed -n 's/.*"format_version":\([0-9]*\).*/\1/p' <<<"$counts")
	now=$was
	[ "$was" -lt 2 ] || now=3
	{
		cat <<EOF
# Generated by gen.sh (see README.md); do not edit: run ./gen.sh $short again.
# $name: $(describe "$kind"), written by urlhash at $short.
# want/ holds that program's answers.

unpack $name.tar.gz

EOF
		if [ "$kind" = killed ]; then
			cat <<EOF
# A read-only command refuses an index a crash left; the first writable
# open recovers it (and upgrades it).
! exec urlhash export --db idx --format jsonl
stderr 'not closed cleanly'
exec urlhash add --db idx $upgrade_url

# The answers the program that wrote the index gave after its recovery.
EOF
			answers export.jsonl "$counts" "$now"
		else
			printf '# Read-only: the answers the program that wrote the index gave.\n'
			answers export.jsonl "$counts" "$was"
		fi
		cat <<EOF

# recover copies every entry.
exec urlhash recover --db idx --to rec
exec urlhash export --db rec --format jsonl
cmp stdout want/export.jsonl
EOF
		if [ -n "$since" ]; then
			cat <<EOF

# The program's full backup restores.
exec urlhash restore --db res want/full.bak
exec urlhash export --db res --format jsonl
cmp stdout want/export.jsonl
EOF
		fi
		cat <<EOF

# A write, where an index is upgraded: every answer stays, and the new key
# is there.
exec urlhash add --db idx $upgrade_url
EOF
		answers export-after.jsonl "$after" "$now"
		if [ "$now" -lt 3 ]; then
			cat <<EOF

# A write that asks for a key table upgrades it to format 3: every answer
# stays.
exec urlhash add --db idx --key-table on $upgrade_url
EOF
			answers export-after.jsonl "$after" 3
		fi
		if [ -n "$since" ]; then
			cat <<EOF

# An incremental backup of the upgraded index continues the chain of the
# program's full backup.
exec urlhash backup --db idx --since $since
cp stdout inc.bak
exec urlhash restore --db chain want/full.bak inc.bak
exec urlhash export --db chain --format jsonl
cmp stdout want/export-after.jsonl
EOF
		fi
		printf '\n'
		if [ "$kind" = threatlist ]; then
			cat <<EOF
# An entry that expires, on the upgraded list index.
exec urlhash add --db idx --ttl 1s $expired
sleep 2s
EOF
		fi
		cat <<EOF
# Writes on the upgraded index: a revisit (the first-seen time stays), an
# expired key added again, a valued entry deleted, a key-only entry given
# a value and a valued one put without.
exec urlhash dedupe --db idx $seen
! stdout .
exec urlhash dedupe --db idx --revisit-after 1s $seen
stdout '^$(re "$seen")\$'
exec urlhash get --db idx $seen
EOF
		printf "stdout '\\\\tfirst_seen=%s\\\\tlast_seen='\n! stdout 'last_seen=%s'\n" "$first" "$first"
		cat <<EOF
exec urlhash add --db idx --json $expired
stdout '"new":true'
exec urlhash delete --db idx $text
! exec urlhash has --db idx $text
exec urlhash put --db idx --data gained $keyonly
exec urlhash get --db idx $keyonly
stdout '^present\\t$h_keyonly\\t\\tdata=6761696e6564\$'
exec urlhash put --db idx $valued
exec urlhash get --db idx $valued
stdout '^present\\t$h_valued\\t\$'
exec urlhash verify --db idx
exec urlhash stats --db idx --json
EOF
		stats_lines "$final" 3
	} >"$here/$name.txt"

	tar -C "$o" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - idx in want | gzip -9n >"$here/$name.tar.gz"
	echo "gen.sh: $name: $(wc -c <"$here/$name.tar.gz") bytes; $counts" >&2
}

# answers EXPORT STATS FORMAT prints the checks of the read commands'
# answers: export (want/EXPORT), has, get, scan and lookup as recorded,
# the counts of stats --json STATS, and format version FORMAT; then verify.
answers() {
	cat <<EOF
exec urlhash export --db idx --format jsonl
cmp stdout want/$1
! exec urlhash has --db idx --hashes --from in/sample.txt
cmp stdout want/has.txt
! exec urlhash get --db idx --hashes --from in/sample.txt
cmp stdout want/get.txt
exec urlhash scan --db idx --prefix $scan_prefix --json
cmp stdout want/scan.txt
exec urlhash lookup --db idx --hashes --from in/lookup.txt
cmp stdout want/lookup.txt
EOF
	[ -z "$lookup_urls" ] || printf 'exec urlhash lookup --db idx --from in/urls.txt\ncmp stdout want/lookup-urls.txt\n'
	printf 'exec urlhash stats --db idx --json\n'
	stats_lines "$2" "$3"
	printf 'exec urlhash verify --db idx\n'
}

# stats_lines JSON FORMAT prints the checks of stats --json's counts (as
# in JSON) and format version.
stats_lines() {
	local e p x
	e=$(sed -n 's/.*"entries":\([0-9]*\).*/\1/p' <<<"$1")
	p=$(sed -n 's/.*"prefix_entries":\([0-9]*\).*/\1/p' <<<"$1")
	x=$(sed -n 's/.*"expiring":\([0-9]*\).*/\1/p' <<<"$1")
	printf "stdout '\"entries\":%s,\"prefix_entries\":%s,'\n" "$e" "$p"
	printf "stdout '\"format_version\":%s[,}]'\n" "$2"
	printf "stdout '\"expiring\":%s[,}]'\n" "${x:-0}"
}

# re quotes a URL for a testscript regexp.
re() { sed 's/[][\\.?*+^$(){}|]/\\&/g' <<<"$1"; }

describe() {
	case $1 in
	values) echo "every kind of entry, written by the CLI directly (and through serve with Idempotency-Keys, where the program keeps them)" ;;
	nokeytable) echo "the same entries in an index made with --key-table off (format 1: every entry in Badger)" ;;
	killed) echo "entries written through serve, which was then killed with SIGKILL (the key table's log unmerged, Badger's memtable not flushed, the filter snapshot stale)" ;;
	threatlist) echo "a Safe Browsing style list (webrisk profile): prefix entries of 4 to 31 bytes and full hashes, some with a threat type as data, some deleted" ;;
	esac
}

build() { # build COMMIT: sets bin and short
	short=$(git -C "$repo" rev-parse --short=7 "$1")
	local src=$work/src-$short
	git -C "$repo" worktree add --detach "$src" "$short" >/dev/null 2>&1
	(cd "$src" && go build -o "$work/urlhash-$short" ./cmd/urlhash)
	git -C "$repo" worktree remove --force "$src"
	bin=$work/urlhash-$short
}

for commit in "${@:-e742cf5 b17882b df7db59}"; do
	for c in $commit; do
		build "$c"
		kinds=values
		if W help import | grep -q -- --key-table; then
			kinds="values nokeytable killed threatlist"
		fi
		for kind in $kinds; do
			d=$work/idx-$short-$kind
			rm -rf "$d"
			case $kind in
			values) fill_values "$d" ;;
			nokeytable) fill_values "$d" --key-table off ;;
			killed) fill_killed "$d" ;;
			threatlist) fill_threatlist "$d" ;;
			esac
			record "$kind" "$d" "$short-$kind"
		done
	done
done
