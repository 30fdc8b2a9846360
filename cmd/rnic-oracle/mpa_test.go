package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
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

// TestMPAOOO frames 60 short ULPDUs with markers (so only some FPDUs hold
// one), takes a segment from the middle of the stream and expects the op
// to place exactly the FPDUs wholly inside it from the first one holding a
// marker on (RFC 5044 6: found through its marker, then each behind the
// one before), and to deliver nothing. An octet flipped in one of them
// stops that chain; placement resumes at the next FPDU holding a marker.
func TestMPAOOO(t *testing.T) {
	const base = 0xFFFFF000
	type span struct {
		start, end, seq uint32 // [start, end) on the wire; seq of ULPDU_Length
		ulpdu           string
	}
	f := mpa.NewFramer(true, true, base)
	var stream []byte
	var fp []span
	for i := range 60 {
		u := make([]byte, 60+7*i%90)
		for k := range u {
			u[k] = byte(i*31 + k)
		}
		start := f.Seq()
		stream, _ = f.AppendFPDU(stream, u, nil)
		seq := start
		if (start-base)%512 == 0 {
			seq += mpa.MarkerLen
		}
		fp = append(fp, span{start, f.Seq(), seq, hex.EncodeToString(u)})
	}
	holdsMarker := func(s span) bool {
		for p := s.start; p != s.end; p += 4 {
			if (p-base)%512 == 0 {
				return true
			}
		}
		return false
	}
	segFrom := fp[7].start + 6 // inside FPDU 7
	segTo := fp[50].start + 10 // inside FPDU 50
	want := func(skip int) []received {
		var out []received
		on := false
		for i, s := range fp {
			inside := s.start-base >= segFrom-base && s.end-base <= segTo-base // offsets: the stream wraps
			if i == skip || !inside {
				on = false
				continue
			}
			if !on && holdsMarker(s) {
				on = true
			}
			if on {
				out = append(out, received{Seq: s.seq, ULPDU: s.ulpdu})
			}
		}
		return out
	}
	run := func(st []byte) oooResult {
		t.Helper()
		req := fmt.Sprintf(`{"op":"mpa_ooo","markers":true,"base":%d,"stream":"%x","segments":[{"seq":%d,"len":%d}]}`,
			base, st, segFrom, segTo-segFrom)
		var r struct {
			Results []oooResult `json:"results"`
		}
		if err := json.Unmarshal(handle([]byte(req)), &r); err != nil || len(r.Results) != 1 {
			t.Fatalf("reply: %v %+v", err, r)
		}
		return r.Results[0]
	}
	check := func(what string, got oooResult, want []received) {
		t.Helper()
		if got.Error != nil || len(got.Delivered) != 0 {
			t.Fatalf("%s: error %+v, delivered %v", what, got.Error, got.Delivered)
		}
		slices.SortFunc(got.Placed, func(a, b received) int { return int(int32(a.Seq - b.Seq)) })
		if len(want) < 10 || !slices.Equal(got.Placed, want) {
			t.Fatalf("%s: placed %d FPDUs, want %d\n got %v\nwant %v", what, len(got.Placed), len(want), got.Placed, want)
		}
	}
	check("clean stream", run(stream), want(-1))
	// Flip an octet in the ULPDU of an FPDU in the middle of a chain.
	k := 30
	for !holdsMarker(fp[k-1]) || holdsMarker(fp[k]) || holdsMarker(fp[k+1]) {
		k++
	}
	bad := append([]byte(nil), stream...)
	bad[fp[k].seq-base+5] ^= 0x40
	check(fmt.Sprintf("FPDU %d corrupted", k), run(bad), want(k))
}
