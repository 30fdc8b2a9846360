#!/usr/bin/env bash
# make demo: the Go reference iWARP stack over real loopback TCP.
#  1. 1 GiB of 64 KiB RDMA Writes with markers and CRC, every octet verified,
#     beside a raw TCP baseline on the same path (the README's figures).
#  2. 64-octet RDMA Write latency beside raw TCP ping-pong.
#  3. Short verified sessions of each operation captured to pcaps, which
#     tshark (Wireshark's decoder) then reads back: FPDUs decoded and CRC
#     verdicts counted.
#  4. The simulated device (hw/sim's rnic-sim, `make sim`): its identity and
#     register blocks, walked by the driver.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}
out=build/demo
mkdir -p "$out"
$GO build -o "$out/rnic-loader" ./cmd/rnic-loader
loader=$out/rnic-loader

echo "== 1 GiB of 64 KiB RDMA Writes, markers and CRC on, against raw TCP"
"$loader" bench --op write --size 64KiB --bytes 1GiB --markers

echo
echo "== 64-octet RDMA Write latency against raw TCP ping-pong"
"$loader" lat --op write --size 64 --iters 5000 -q

echo
echo "== captured sessions (CRC on; markers off, see docs/interop.md for Wireshark and markers)"
for op in write read send; do
	"$loader" bench --op "$op" --size 8KiB --bytes 1MiB --quiet --no-raw --pcap "$out/$op.pcap" >/dev/null
	if command -v tshark >/dev/null; then
		v=$(tshark -r "$out/$op.pcap" -V 2>/dev/null)
		fpdus=$(tshark -r "$out/$op.pcap" -Y iwarp_ddp_rdmap 2>/dev/null | wc -l)
		good=$(grep -c 'Good CRC32' <<<"$v" || true)
		bad=$(grep -c 'Bad CRC32' <<<"$v" || true)
		echo "$out/$op.pcap: tshark decodes $fpdus DDP/RDMAP segments, $good good CRC32, $bad bad"
		if [ "$bad" != 0 ] || [ "$fpdus" = 0 ]; then
			echo "demo: tshark disagrees with the capture of $op" >&2
			exit 1
		fi
	else
		echo "$out/$op.pcap written (install tshark to decode it: make deps)"
	fi
done
if command -v tshark >/dev/null; then
	echo
	echo "== the first FPDUs of the Read session as tshark shows them"
	tshark -r "$out/read.pcap" -Y iwarp_ddp_rdmap 2>/dev/null | sed -n 1,6p
fi

echo
echo "== the simulated device (rnic-sim): what the driver finds in its register map"
make --no-print-directory -s sim
"$loader" info --sim build/sim/rnic-sim
