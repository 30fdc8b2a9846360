package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/mpa"
)

// TestMPAReceive frames three ULPDUs with markers (one long enough to carry
// markers inside), hands the stream to the receive op and expects the same
// ULPDUs back at the FPDUs' sequence numbers; then corrupts one octet of
// the second FPDU and expects MPA error 2 (CRC) at that FPDU, with the first
// ULPDU still delivered and nothing after the error.
func TestMPAReceive(t *testing.T) {
	const base = 0xFFFFFF00 // the stream wraps the 32-bit sequence space
	ulpdus := []string{strings.Repeat("a5", 30), strings.Repeat("3c", 1201), strings.Repeat("0f", 17)}
	f := mpa.NewFramer(true, true, base)
	var stream []byte
	var seqs []uint32
	for _, u := range ulpdus {
		b, _ := hex.DecodeString(u)
		seq := f.Seq()
		stream, _ = f.AppendFPDU(stream, b, nil)
		if seq-base == 0 || seq-base&511 == 0 {
			seq += mpa.MarkerLen // a leading marker sits in front of the ULPDU_Length field
		}
		seqs = append(seqs, seq)
	}
	type reply struct {
		ULPDUs []received `json:"ulpdus"`
		Error  *rxError   `json:"mpa_error"`
		Next   uint32     `json:"next"`
	}
	receive := func(s []byte) reply {
		t.Helper()
		req := fmt.Sprintf(`{"op":"mpa_receive","markers":true,"base":%d,"stream":"%x"}`, base, s)
		var r reply
		if err := json.Unmarshal(handle([]byte(req)), &r); err != nil {
			t.Fatalf("reply: %v", err)
		}
		return r
	}
	good := receive(stream)
	if good.Error != nil || len(good.ULPDUs) != 3 || good.Next != base+uint32(len(stream)) {
		t.Fatalf("good stream: %+v", good)
	}
	for i, r := range good.ULPDUs {
		if r.ULPDU != ulpdus[i] || r.Seq != seqs[i] {
			t.Errorf("ULPDU %d: seq %#x (want %#x), %d hex digits", i, r.Seq, seqs[i], len(r.ULPDU))
		}
	}
	bad := append([]byte(nil), stream...)
	bad[int(seqs[1]-base)+100] ^= 0x10
	got := receive(bad)
	if got.Error == nil || got.Error.Code != uint8(mpa.ErrCRC) || got.Error.Seq != seqs[1] || len(got.ULPDUs) != 1 {
		t.Fatalf("corrupted stream: %+v", got)
	}
}
