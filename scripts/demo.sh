#!/usr/bin/env bash
# make demo: the simulated RNIC (hw/sim's rnic-sim, the verilated rnic_dev)
# against the Go reference iWARP stack, and the stack itself.
#  1. The simulated device: what the driver finds in its register map.
#  2. rping with the device on either side of the software stack, and
#     between two simulated devices: every round verified.
#  3. A verified bench (RDMA Write, Read, Send; every octet checked) on the
#     simulated device against the software stack, also a Write with
#     markers on in one direction (the sim's to the software stack), and
#     between two simulated devices; each session without markers captured
#     to a pcap that tshark decodes, every CRC good. The sim's figures are
#     its clocks: goodput in octets a clock against DATA_W/8.
#  4. The Go stack over real loopback TCP: 64 KiB RDMA Writes with markers
#     and CRC beside a raw TCP baseline (DEMO_BYTES, default 256 MiB), and
#     64-octet Write latency beside raw TCP ping-pong.
#  5. A summary: the simulated clock rate and the goodputs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
out=build/demo
mkdir -p "$out"
$GO build -o "$out/rnic-loader" ./cmd/rnic-loader
loader=$out/rnic-loader
bytes=${DEMO_BYTES:-256MiB}

echo "== building the simulated device (make sim)"
make --no-print-directory -s sim
export RNIC_SIM=$PWD/build/sim/rnic-sim

echo
echo "== the simulated device: what the driver finds in its register map"
"$loader" info

# pcapcheck FILE: tshark decodes FILE's FPDUs, every CRC good.
pcapcheck() {
	if ! command -v tshark >/dev/null; then
		echo "    $1 written (install tshark to decode it: make deps)"
		return
	fi
	local v fpdus good bad
	v=$(tshark -r "$1" -V 2>/dev/null)
	fpdus=$(tshark -r "$1" -Y iwarp_ddp_rdmap 2>/dev/null | wc -l)
	good=$(grep -c 'Good CRC32' <<<"$v" || true)
	bad=$(grep -c 'Bad CRC32' <<<"$v" || true)
	echo "    $1: tshark decodes $fpdus DDP/RDMAP segments, $good good CRC32, $bad bad"
	if [ "$bad" != 0 ] || [ "$fpdus" = 0 ]; then
		echo "demo: tshark disagrees with the capture $1" >&2
		exit 1
	fi
}

# rping_pair NAME SERVER-DEVICE CLIENT-DEVICE: a server and a client, 5
# verified rounds of 20000 octets.
# A simulated device runs with --mirror: the model beside it takes the
# same inputs, and the first difference in wire octets or host memory
# writes fails the run (driver/mirror).
mirror_for() { if [ "$1" = sim ]; then echo --mirror; fi; }

rping_pair() {
	local name=$1 sdev=$2 cdev=$3 log=$out/rping-$1.server port=""
	# shellcheck disable=SC2046 # mirror_for says one word or none
	"$loader" rping -s -a 127.0.0.1 -p 0 -S 20000 -V --device "$sdev" $(mirror_for "$sdev") >/dev/null 2>"$log" &
	local spid=$!
	for _ in $(seq 600); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
		[ -n "$port" ] && break
		if ! kill -0 "$spid" 2>/dev/null; then break; fi
		sleep 0.1
	done
	if [ -z "$port" ]; then
		cat "$log" >&2
		echo "demo: the rping server ($sdev) did not start" >&2
		exit 1
	fi
	# shellcheck disable=SC2046
	"$loader" rping -c -a 127.0.0.1 -p "$port" -C 5 -S 20000 -V --device "$cdev" $(mirror_for "$cdev") --json 2>/dev/null >"$out/rping-$name.json"
	if ! wait "$spid"; then
		cat "$log" >&2
		echo "demo: the rping server ($sdev) failed" >&2
		exit 1
	fi
	jq -r --arg s "$sdev" '"    client on \(.device), server on \($s): \(.rounds) rounds, \(.verified_octets) octets verified, MPA rev \(.mpa_rev), CRC \(.crc), \(.seconds*1000|floor) ms"' "$out/rping-$name.json"
}

echo
echo "== rping: 5 verified rounds of 20000 octets, the simulated device on each side"
rping_pair sim-server sim soft
rping_pair sim-client soft sim
rping_pair sim-sim sim sim

# devbench NAME ARGS...: a verified device bench, its JSON kept, a line
# said, its pcap checked. A session with markers is not captured: the
# simulated device's segments, as the relay writes them, do not always
# start with an FPDU, and Wireshark finds markers only in aligned
# segments (docs/interop.md); it then misreads an FPDU as a bad CRC.
devbench() {
	local name=$1 pcap=()
	shift
	case " $* " in
	*" --markers"*) ;;
	*) pcap=(--pcap "$out/$name.pcap") ;;
	esac
	"$loader" bench "$@" --mirror -q --json "${pcap[@]}" >"$out/$name.json"
	jq -r '"    \(.op) \(.message_octets) x \(.messages), client on \(.device), server on \(.peer_device), markers to the client \(.markers_to_client), to the server \(.markers_to_server): \(.verified_octets) octets verified, \(.mismatches) mismatches"' "$out/$name.json"
	jq -r '.ends[] | select(.clocks != null) | "      \(.role)'"'"'s sim: \(.clocks) clocks, \(.clocks_per_second|floor) clocks/s, \(.clocks_per_message|floor) clocks/message, \(.goodput_octets_per_clock*1000|floor/1000) octets/clock = \(.clock_limited_fraction*1000|floor/10)% of DATA_W/8 = \(.data_width_bits/8)"' "$out/$name.json"
	jq -r '.ends[] | select(.mirror != null) | "      \(.role)'"'"'s sim mirrored on the model: \(.mirror.inputs) inputs, \(.mirror.wire_octets) wire octets and \(.mirror.dma_octets) DMA-written octets alike"' "$out/$name.json"
	if [ ${#pcap[@]} != 0 ]; then
		pcapcheck "$out/$name.pcap"
	fi
}

echo
echo "== bench: the simulated device against the software stack (client on the sim)"
devbench sim-soft-write --device sim --op write --size 64KiB --bytes 1MiB
devbench sim-soft-markers --device sim --op write --size 64KiB --bytes 1MiB --markers-to server
devbench sim-soft-read --device sim --op read --size 16KiB --bytes 512KiB
devbench sim-soft-send --device sim --op send --size 8KiB --bytes 512KiB
echo
echo "== bench: two simulated devices, one per end"
devbench sim-sim-write --device sim --peer-device sim --op write --size 64KiB --bytes 1MiB
devbench sim-sim-read --device sim --peer-device sim --op read --size 16KiB --bytes 512KiB
devbench sim-sim-send --device sim --peer-device sim --op send --size 8KiB --bytes 512KiB

echo
echo "== the Go stack: $bytes of 64 KiB RDMA Writes, markers and CRC on, against raw TCP"
"$loader" bench --op write --size 64KiB --bytes "$bytes" --markers --json -q >"$out/go-write.json"
jq -r '"    iWARP \(.goodput_bits_per_second/1e7|floor/100) Gbit/s, raw TCP \(.raw_tcp_bits_per_second/1e7|floor/100) Gbit/s, ratio \(.ratio*1000|floor/1000), \(.verified_octets) octets verified"' "$out/go-write.json"

echo
echo "== the Go stack: 64-octet RDMA Write latency against raw TCP ping-pong"
"$loader" lat --op write --size 64 --iters 5000 -q

echo
echo "== the Go stack: captured sessions (CRC on; markers off, see docs/interop.md for Wireshark and markers)"
for op in write read send; do
	"$loader" bench --op "$op" --size 8KiB --bytes 1MiB --quiet --no-raw --pcap "$out/$op.pcap" >/dev/null
	pcapcheck "$out/$op.pcap"
done
if command -v tshark >/dev/null; then
	echo
	echo "== the first FPDUs of the simulated devices' Read session as tshark shows them"
	tshark -r "$out/sim-sim-read.pcap" -Y iwarp_ddp_rdmap 2>/dev/null | sed -n 1,6p
fi

echo
echo "== summary"
for f in "$out"/sim-*.json; do
	jq -r --arg f "$(basename "$f" .json)" '[.ends[] | select(.clocks != null)] as $s |
		"  \($f | .+ "               " | .[0:16]) \(.message_octets/1024|floor) KiB x \(.messages): sim \($s | map(.clocks_per_second/1000|floor|tostring + "k") | join("/")) clocks/s, \($s | map(.goodput_octets_per_clock*100|floor/100|tostring) | join("/")) octets/clock of \($s[0].data_width_bits/8) (\($s | map(.clock_limited_fraction*100|floor|tostring + "%") | join("/"))), \(.goodput_bits_per_second/1e6*100|floor/100) Mbit/s wall"' "$f"
done
jq -r '"  go-write         64 KiB: iWARP \(.goodput_bits_per_second/1e7|floor/100) Gbit/s, raw TCP \(.raw_tcp_bits_per_second/1e7|floor/100) Gbit/s over loopback"' "$out/go-write.json"
echo "  (rping: $(jq -s 'map(.rounds) | add' "$out"/rping-*.json) rounds verified over 3 pairings; pcaps and JSON records in $out/)"
