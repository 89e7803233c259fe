#!/bin/sh
# The y2038 sandbox guest agent (busybox sh): runs shell commands sent by the
# host over a serial line and returns their output, framed.
#
# usage: agent.sh [tty]    tty under /dev (default ttyS1); "-" uses stdin and
#                          stdout as they are (for testing on the host)
#
# Protocol (lines end with "\n"; a trailing "\r" on input is ignored):
#   agent -> host  @@Y2038 READY <uname -r>
#   host -> agent  RUN <id> <base64 of a shell script>
#   agent -> host  @@Y2038 BEGIN <id>
#                  <base64 of stdout, wrapped>
#                  @@Y2038 STDERR <id>
#                  <base64 of stderr, wrapped>
#                  @@Y2038 END <id> <exit status>
# Lines not starting with "RUN " are ignored. A malformed RUN line (no id,
# bad id, no or bad base64, extra fields) gets an empty BEGIN/STDERR block and
# "@@Y2038 END <id or -> 127". The script runs with stdin from /dev/null,
# in a fresh working folder. The agent exits at end of input.

tty=${1:-ttyS1}
if [ "$tty" != - ]; then
	stty -F "/dev/$tty" raw -echo
	exec <"/dev/$tty" >"/dev/$tty"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/y2038-agent.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cr=$(printf '\r')
set -f    # no globbing when splitting RUN lines

frame() {    # frame <id> <exit status> [<stdout file> <stderr file>]
	echo "@@Y2038 BEGIN $1"
	[ -n "$3" ] && base64 "$3"
	echo "@@Y2038 STDERR $1"
	[ -n "$4" ] && base64 "$4"
	echo "@@Y2038 END $1 $2"
}

run() {    # run <id> <base64> [extra...]
	id=$1
	case $id in
	'' | *[!A-Za-z0-9._:-]*) frame - 127; return ;;
	esac
	if [ $# -ne 2 ] ||
		! printf '%s' "$2" | base64 -d >"$work/cmd" 2>/dev/null; then
		frame "$id" 127
		return
	fi
	mkdir -p "$work/cwd"
	(cd "$work/cwd" && exec sh "$work/cmd") \
		</dev/null >"$work/out" 2>"$work/err"
	frame "$id" $? "$work/out" "$work/err"
	rm -rf "$work/cwd" "$work/cmd" "$work/out" "$work/err"
}

echo "@@Y2038 READY $(uname -r)"
while IFS= read -r line || [ -n "$line" ]; do
	line=${line%"$cr"}
	case $line in
	"RUN "*) run ${line#RUN } ;;
	esac
done
