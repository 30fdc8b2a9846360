package sctp

import (
	"bytes"
	"testing"
)

// TestPacketBuilderMatchesEncoder: a packet gathered from pieces is, octet
// for octet, the packet appendData and sealPacket build whole, for
// payloads below and above gatherMin of every length modulo 4, mixed.
func TestPacketBuilderMatchesEncoder(t *testing.T) {
	sizes := [][]int{{1}, {gatherMin}, {gatherMin + 1}, {gatherMin + 2, 3}, {gatherMin + 3, 5, gatherMin + 1}, {7, gatherMin*2 + 2, 1, gatherMin}}
	for _, set := range sizes {
		var p packetBuilder
		p.reset(1, 2, 0x01020304)
		p.hdr = appendSack(p.hdr, &sackChunk{CumTSN: 9, ARwnd: 1000})
		want := appendSack(appendCommonHeader(nil, 1, 2, 0x01020304), &sackChunk{CumTSN: 9, ARwnd: 1000})
		for i, n := range set {
			data := make([]byte, n)
			fill(data, i)
			d := dataChunk{Flags: flagBegin | flagEnd, TSN: uint32(i), PPID: 0x10, Data: data}
			p.appendData(&d)
			want = appendData(want, &d)
		}
		if p.len() != len(want) {
			t.Errorf("sizes %v: builder length %d, encoder %d", set, p.len(), len(want))
		}
		sealPacket(want)
		got := p.flatten(p.seal())
		if !bytes.Equal(got, want) {
			t.Errorf("sizes %v: gathered packet differs from the encoder's", set)
		}
		if !checksumOK(got) {
			t.Errorf("sizes %v: bad CRC32c", set)
		}
	}
}
