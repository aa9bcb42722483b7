#!/bin/bash
# Tests/Package/in-root.sh VERSION
#
# Runs inside the clean Debian 12 root that scripts/package-test made (as root, in its own PID and mount
# namespace, nothing of the build machine inside): installs /lector-test/lector_*.deb with apt-get from Debian's
# archive, uses the installed Lector as a user would, then purges it. Prints one "ok - …" or "not ok - …" line
# per check, and leaves in /lector-test/out what scripts/package-test checks from outside: hello.wav,
# book.opus, monitor.raw (the null sink's monitor while reading and after the pause) and times.txt.
# Exit status: the number of failed checks (0 when all passed), at most 100.
set -u
version=$1
T=/lector-test
OUT=$T/out
LOG=$T/out/log.txt
mkdir -p "$OUT"
: >"$LOG"
failed=0

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }
# check NAME COMMAND…: ok when COMMAND succeeds; its output goes to the log.
check() {
    local name=$1; shift
    echo "### $name: $*" >>"$LOG"
    if "$@" >>"$LOG" 2>&1; then ok "$name"; else not_ok "$name (log: out/log.txt)"; fi
}
# The processes of this namespace running one of the package's programs.
lector_processes() {
    local p exe
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case $exe in /usr/bin/lector|/usr/libexec/lector/*|*/sd_lector) echo "${p#/proc/} $exe" ;; esac
    done
}
# Waits up to $1 tenths of a second for the command after it to succeed.
wait_for() {
    local tenths=$1; shift
    local i
    for ((i = 0; i < tenths; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    return 1
}
# A listing of users' homes and skeleton: the package must write into none of them.
homes() { find /root /home /etc/skel -xdev 2>/dev/null | sort; }

export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin
apt=(apt-get -q -y -o APT::Sandbox::User=root -o Dpkg::Use-Pty=0)

echo "### apt-get update" >>"$LOG"
"${apt[@]}" update >>"$LOG" 2>&1 || not_ok "apt-get update (log: out/log.txt)"
homes >"$T/homes-before"

# The package alone, with what it recommends, as a user installs it: every dependency from Debian's archive.
check "apt-get install ./lector_${version}_amd64.deb resolves every dependency from Debian alone" \
    "${apt[@]}" install "$T/lector_${version}_amd64.deb"
no_build_tools() { ! test -e /opt/swift && ! command -v swift swiftc gcc cc ld make pkg-config; }
check "no toolchain and no build tools in the root" no_build_tools
# Installing systemd (a dependency of a dependency) makes /root/.ssh through its tmpfiles.d/provision.conf:
# paths a tmpfiles.d configuration names are the system's, not the package's.
homes_unchanged() {
    local tmpfiles
    tmpfiles=$(cat /usr/lib/tmpfiles.d/*.conf 2>/dev/null | awk '$1 ~ /^[dDLf]/ { print $2 }')
    ! diff "$T/homes-before" <(homes) | sed -n 's/^[<>] //p' | grep -vxF -f <(printf '%s\n' "$tmpfiles")
}
check "nothing was written into homes or /etc/skel at install" homes_unchanged
only_usr_and_etc() { ! dpkg -L lector | grep -v -e '^/usr' -e '^/etc' -e '^/\.$'; }
check "the package's files are all in /usr and /etc" only_usr_and_etc
nothing_runs() { local found; found=$(lector_processes); echo "$found"; [ -z "$found" ]; }
check "nothing of Lector was started at install" nothing_runs
no_maintainer_scripts() { ! ls /var/lib/dpkg/info/lector.{preinst,postinst,prerm,postrm,config,triggers} 2>/dev/null | grep .; }
check "the package has no maintainer scripts" no_maintainer_scripts
speechd_conf_unchanged() {
    local packaged
    packaged=$(dpkg-query -W -f='${Conffiles}\n' speech-dispatcher | awk '$1 == "/etc/speech-dispatcher/speechd.conf" { print $2 }')
    [ -n "$packaged" ] && [ "$(md5sum </etc/speech-dispatcher/speechd.conf | cut -d' ' -f1)" = "$packaged" ]
}
if dpkg-query -W -f='${Status}' speech-dispatcher 2>/dev/null | grep -q 'ok installed'; then
    check "Speech Dispatcher's system configuration is as its package installed it" speechd_conf_unchanged
else
    not_ok "speech-dispatcher (recommended) was installed with lector"
fi

# What the sound and bus checks need, installed only now, after the package proved its own dependencies.
check "apt-get install the test's tools (pulseaudio, parec, dbus-daemon, playerctl)" \
    "${apt[@]}" install --no-install-recommends pulseaudio pulseaudio-utils dbus-daemon dbus-bin playerctl

export HOME=$T/home XDG_RUNTIME_DIR=$T/run
export XDG_CONFIG_HOME=$HOME/.config XDG_STATE_HOME=$HOME/.local/state XDG_DATA_HOME=$HOME/.local/share XDG_CACHE_HOME=$HOME/.cache
mkdir -p "$HOME" && mkdir -m 0700 -p "$XDG_RUNTIME_DIR"

prints_version() { local printed; printed=$(lector --version); echo "$printed"; [ "$printed" = "lector $version" ]; }
check "lector --version prints lector $version" prints_version
lists_voices() { lector voices >"$OUT/voices.txt" && grep -q '^en' "$OUT/voices.txt" && [ "$(wc -l <"$OUT/voices.txt")" -gt 50 ]; }
check "lector voices lists eSpeak NG voices, English among them" lists_voices
check "lector read --output hello.wav \"Hello\"" lector read --quiet --output "$OUT/hello.wav" "Hello"
check "lector read --file book.epub --output book.opus" lector read --quiet --file "$T/book.epub" --output "$OUT/book.opus"

# A PulseAudio server with a null sink and a private session bus (Debian's session configuration: activation
# from /usr/share/dbus-1/services), both inside the root, found where a desktop session has them: the sound
# server's socket in $XDG_RUNTIME_DIR/pulse/native, the bus's in $XDG_RUNTIME_DIR/bus.
mkdir -m 0700 -p "$XDG_RUNTIME_DIR/pulse"
pulseaudio -n --daemonize=no --exit-idle-time=-1 --use-pid-file=no --realtime=no --high-priority=no \
    --log-target=stderr -L "module-null-sink sink_name=test rate=22050 channels=1" \
    -L "module-native-protocol-unix auth-anonymous=1 socket=$XDG_RUNTIME_DIR/pulse/native" 2>"$OUT/pulseaudio.log" &
pulse_pid=$!
dbus-daemon --session --fork --address="unix:path=$XDG_RUNTIME_DIR/bus" --print-pid=3 3>"$T/bus.pid" >>"$LOG" 2>&1
export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
bus_pid=$(cat "$T/bus.pid" 2>/dev/null)
servers_run() { [ -n "$bus_pid" ] && wait_for 100 pactl info; }
check "a session bus and a PulseAudio null sink run inside the root" servers_run

# D-Bus activation: nothing of Lector runs; a call to org.lector.Lector starts the daemon from the installed
# .service file (the bus gives what it activates DBUS_STARTER_BUS_TYPE in its environment).
check "no daemon runs before the first call" nothing_runs
activated() {
    dbus-send --session --print-reply --reply-timeout=20000 --dest=org.lector.Lector /org/lector/Lector \
        org.freedesktop.DBus.Peer.Ping || return 1
    local pid exe starter
    pid=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \
          string:org.lector.Lector | awk '/uint32/ { print $2 }')
    exe=$(readlink "/proc/$pid/exe")
    starter=$(tr '\0' '\n' <"/proc/$pid/environ" | grep '^DBUS_STARTER_BUS_TYPE=')
    echo "org.lector.Lector: pid $pid, $exe, $starter"
    [ "$exe" = /usr/libexec/lector/lector-daemon ] && [ "$starter" = DBUS_STARTER_BUS_TYPE=session ]
}
check "D-Bus activation starts /usr/libexec/lector/lector-daemon from org.lector.Lector.service" activated

# Reading heard on the sink's monitor, then silenced by playerctl. The recording starts first and must be
# flowing (an idle null sink can take ~2 s); times.txt gives the recording's size at the pause and at its end.
parec --latency-msec=20 -d test.monitor --format=s16le --rate=22050 --channels=1 --raw >"$OUT/monitor.raw" 2>>"$LOG" &
parec_pid=$!
recording() { [ "$(stat -c %s "$OUT/monitor.raw")" -gt 4410 ]; }
check "the null sink's monitor is being recorded" wait_for 100 recording
text="The lighthouse stood on a rock at the end of the bay. Every evening the keeper climbed the stairs and lit the lamp, and every morning he wrote the weather in his book. On the night of the storm the waves reached the door, and the wind sang in the glass all night long."
check "lector read (through the activated daemon)" lector read "$text"
status_is() { [ "$(playerctl -p lector status)" = "$1" ]; }
check "playerctl -p lector status says Playing" wait_for 100 status_is Playing
sleep 3
echo "pause $(stat -c %s "$OUT/monitor.raw")" >"$OUT/times.txt"
check "playerctl -p lector pause" playerctl -p lector pause
check "playerctl -p lector status says Paused" wait_for 20 status_is Paused
sleep 2.5
echo "end $(stat -c %s "$OUT/monitor.raw")" >>"$OUT/times.txt"
kill "$parec_pid"; wait "$parec_pid" 2>/dev/null

# Speech Dispatcher's INIT, as the server sends it to an output module, answered by the installed module.
answers_init() {
    local answer
    answer=$(printf 'INIT\nQUIT\n' | timeout 20 /usr/lib/speech-dispatcher-modules/sd_lector /etc/speech-dispatcher/modules/lector.conf)
    echo "$answer"
    grep -qx "299 OK LOADED SUCCESSFULLY" <<<"$answer"
}
check "sd_lector answers Speech Dispatcher's INIT with 299 OK LOADED SUCCESSFULLY" answers_init

lector stop >>"$LOG" 2>&1
dbus-send --session --print-reply --dest=org.mpris.MediaPlayer2.lector /org/mpris/MediaPlayer2 org.mpris.MediaPlayer2.Quit >>"$LOG" 2>&1
none_left() { [ -z "$(lector_processes)" ]; }
check "the daemon exits on MPRIS Quit" wait_for 100 none_left
kill "$bus_pid" "$pulse_pid" 2>/dev/null

# Purge: nothing of the package is left (its files, its conffile, its dpkg record); the user's own files stay.
dpkg -L lector >"$T/lector-files" 2>>"$LOG"
[ -d "$XDG_STATE_HOME/lector" ] && user_state=yes || user_state=no
check "apt-get purge lector" "${apt[@]}" purge lector
no_record() { ! dpkg-query -W -f='${db:Status-Abbrev}\n' lector 2>/dev/null | grep -v '^un'; }
check "dpkg has no record of lector after purge" no_record
no_files_left() {
    local path left=0
    while read -r path; do
        if [ -f "$path" ] || [ -L "$path" ]; then echo "left: $path"; left=1; fi
    done <"$T/lector-files"
    [ "$left" = 0 ]
}
check "none of the package's files is left" no_files_left
nothing_named_lector() { ! find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path "$T" \) -prune -o -iname '*lector*' -print | grep .; }
check "nothing named lector is left outside the user's home" nothing_named_lector
if [ "$user_state" = yes ]; then
    check "the user's ~/.local/state/lector stays" test -d "$XDG_STATE_HOME/lector"
fi
exit $((failed > 100 ? 100 : failed))
