package rdmap

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Terminate payloads Linux siw 6.1 (x86_64) sent in the interop run
// (interop: TestSiwRping, build/interop/siw-rping.pcap): its answers to an
// RDMA Write 8 octets past its buffer and to a Read Request 8 octets past
// it. tshark 4.0 reads both with M, D and R clear and the flags in the
// reserved bits, as RFC 5040 4.8's layout says.
var siwTerminates = []struct {
	name, hex   string
	layer       Layer
	etype, code uint8
	m, d, r     bool
	segLen      uint16
}{
	{"write past the buffer", "110103000048c140a70d3f00000055d27dabc550",
		LayerDDP, ETypeTaggedBuffer, CodeDDPBaseBounds, true, true, false, 72},
	{"read past the buffer", "10010700000041410000000000000001000000480000000000000101000024954" +
		"6efa46000000048c55de400000055f826464370",
		LayerRDMAP, ETypeRemoteProtection, CodeBaseBounds, true, true, true, 0},
}

func TestParsePeerTerminateSiw(t *testing.T) {
	for _, tc := range siwTerminates {
		b, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseTerminate(b); err == nil {
			t.Errorf("%s: the strict parser accepted siw's layout", tc.name)
		}
		got, err := ParsePeerTerminate(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !got.SwappedBitfields || got.Layer != tc.layer || got.EType != tc.etype || got.Code != tc.code ||
			got.M != tc.m || got.D != tc.d || got.R != tc.r || got.SegmentLen != tc.segLen {
			t.Errorf("%s: %+v", tc.name, got)
		}
		if !strings.Contains(got.String(), "Base or bounds violation") || !strings.Contains(got.String(), "Linux siw") {
			t.Errorf("%s: %s", tc.name, got.String())
		}
	}
}

// A conforming Terminate is read as is, and garbage stays refused.
func TestParsePeerTerminateConforming(t *testing.T) {
	want := Terminate{Layer: LayerDDP, EType: ETypeTaggedBuffer, Code: CodeDDPBaseBounds, M: true, SegmentLen: 86,
		D: true, DDPHeader: []byte{0xc1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}}
	b, err := want.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePeerTerminate(b)
	if err != nil || got.SwappedBitfields || got.Layer != want.Layer || got.EType != want.EType || !got.M || !got.D || got.SegmentLen != 86 {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, h := range []string{"", "11", "1101030000", "11010300004800"} {
		b, _ := hex.DecodeString(h)
		if _, err := ParsePeerTerminate(b); err == nil {
			t.Errorf("%q accepted", h)
		}
	}
}
