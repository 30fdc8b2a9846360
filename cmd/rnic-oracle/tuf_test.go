package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestTUFOps frames two ULPDUs, then asks the seam what it does with the
// segments in order, one of them again (a duplicate), one damaged and one
// on a connection never configured.
func TestTUFOps(t *testing.T) {
	var fr struct {
		Segments []string `json:"segments"`
		Error    string   `json:"error"`
	}
	req := `{"op":"tuf_frames","key":1250999896491,"emss":100,"ulpdus":["0a0b0c","` + strings.Repeat("ee", 80) + `"]}`
	if err := json.Unmarshal(handle([]byte(req)), &fr); err != nil || fr.Error != "" || len(fr.Segments) != 2 {
		t.Fatalf("tuf_frames: %+v %v", fr, err)
	}
	if !strings.HasPrefix(fr.Segments[0], "0007"+"0123456789ab"+"0a0b0c") {
		t.Errorf("first segment %s", fr.Segments[0])
	}
	s0, s1 := fr.Segments[0], fr.Segments[1]
	n0 := uint32(len(s0) / 2)
	bad := []byte(s1)
	bad[30] ^= 1 // a hex digit of a ULPDU octet: still hex, one bit off
	segs := fmt.Sprintf(`[{"conn":3,"seq":100,"octets":"%s"},{"conn":3,"seq":100,"octets":"%s"},`+
		`{"conn":3,"seq":%d,"octets":"%s"},{"conn":3,"seq":%d,"octets":"%s"},{"conn":9,"seq":0,"octets":"%s"}]`,
		s0, s0, 100+n0, bad, 100+n0, s1, s0)
	req = `{"op":"tuf_seam","conns":[{"conn":3,"key":1250999896491,"next":100}],"segments":` + segs + `}`
	var sr struct {
		Outcomes []seamOutcome `json:"outcomes"`
		Error    string        `json:"error"`
	}
	if err := json.Unmarshal(handle([]byte(req)), &sr); err != nil || sr.Error != "" {
		t.Fatalf("tuf_seam: %v %s", err, sr.Error)
	}
	want := []seamOutcome{
		{Reason: 0, ULPDUs: "0a0b0c", CRCGood: true},
		{Reason: 4},
		{Reason: 0, ULPDUs: string(bad[16 : len(bad)-8])},
		{Reason: 2},
		{Reason: 1},
	}
	for i := range want {
		if sr.Outcomes[i] != want[i] {
			t.Errorf("outcome %d: %+v, want %+v", i, sr.Outcomes[i], want[i])
		}
	}
	if _, err := hex.DecodeString(sr.Outcomes[2].ULPDUs); err != nil {
		t.Error(err)
	}
	var e struct{ Error string }
	json.Unmarshal(handle([]byte(`{"op":"tuf_frames","key":281474976710656,"emss":100,"ulpdus":[]}`)), &e)
	if !strings.Contains(e.Error, "wider than 48 bits") {
		t.Errorf("a 49-bit key: %q", e.Error)
	}
}

// TestTUFReceive delineates three FPDUs framed by tuf_frames, then the
// same stream with the last trailer damaged (ErrCRC at its offset) and cut
// short (ErrTruncated), and refuses a request without a stream.
func TestTUFReceive(t *testing.T) {
	var fr struct {
		Segments []string `json:"segments"`
	}
	req := `{"op":"tuf_frames","key":5,"emss":100,"ulpdus":["0a0b0c","","` + strings.Repeat("ee", 80) + `"]}`
	if err := json.Unmarshal(handle([]byte(req)), &fr); err != nil || len(fr.Segments) != 3 {
		t.Fatalf("tuf_frames: %+v %v", fr, err)
	}
	type resp struct {
		FPDUs []receivedFPDU `json:"fpdus"`
		Error *receiveError  `json:"stream_error"`
	}
	receive := func(stream string) resp {
		t.Helper()
		var r resp
		raw := handle([]byte(`{"op":"tuf_receive","key":5,"stream":"` + stream + `"}`))
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return r
	}
	stream := strings.Join(fr.Segments, "")
	r := receive(stream)
	want := []receivedFPDU{{0, 15, "0a0b0c"}, {15, 12, ""}, {27, 92, strings.Repeat("ee", 80)}}
	if r.Error != nil || len(r.FPDUs) != 3 {
		t.Fatalf("clean stream: %+v", r)
	}
	for i := range want {
		if r.FPDUs[i] != want[i] {
			t.Errorf("FPDU %d: %+v, want %+v", i, r.FPDUs[i], want[i])
		}
	}
	bad := []byte(stream)
	bad[len(bad)-1] ^= 1 // the last trailer's last hex digit
	r = receive(string(bad))
	if len(r.FPDUs) != 2 || r.Error == nil || r.Error.Code != 2 || r.Error.Off != 27 {
		t.Errorf("damaged trailer: %+v %+v", r.FPDUs, r.Error)
	}
	r = receive(stream[:len(stream)-2])
	if len(r.FPDUs) != 2 || r.Error == nil || r.Error.Code != 4 || r.Error.Off != 27 {
		t.Errorf("cut short: %+v %+v", r.FPDUs, r.Error)
	}
	var e struct{ Error string }
	json.Unmarshal(handle([]byte(`{"op":"tuf_receive","key":5}`)), &e)
	if !strings.Contains(e.Error, `needs "key" and "stream"`) {
		t.Errorf("no stream: %q", e.Error)
	}
}
