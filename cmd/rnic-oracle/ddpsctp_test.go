package main

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/rdmap"
)

// TestDDPSCTPPath: the segments of RDMAP messages come back from either
// path as they went in, in order, and the chunks are DDP-SSN and segment.
func TestDDPSCTPPath(t *testing.T) {
	w := rdmap.NewWrite(0x1201, 0x1000, make([]byte, 5000))
	segs, err := w.AppendSegments(nil, 1154)
	if err != nil {
		t.Fatal(err)
	}
	var hexSegs []string
	for _, s := range segs {
		hexSegs = append(hexSegs, hex.EncodeToString(s))
	}
	for _, path := range []string{`"path":"udp"`, `"path":"pipe","reorder":4,"seed":3`} {
		req, _ := json.Marshal(hexSegs)
		out := handle([]byte(`{"op":"ddpsctp_path","segments":` + string(req) + `,` + path + `}`))
		var rep struct {
			MULPDU   int      `json:"mulpdu"`
			Chunks   []string `json:"chunks"`
			Segments []string `json:"segments"`
			Error    string   `json:"error"`
		}
		if err := json.Unmarshal(out, &rep); err != nil || rep.Error != "" {
			t.Fatalf("%s: %s", path, out)
		}
		if strings.Join(rep.Segments, ",") != strings.Join(hexSegs, ",") {
			t.Fatalf("%s: recovered segments differ", path)
		}
		for i, c := range rep.Chunks {
			if c[:4] != hex.EncodeToString([]byte{0, byte(i + 1)}) || c[4:] != hexSegs[i] {
				t.Fatalf("%s: chunk %d is %s...", path, i, c[:8])
			}
		}
		if rep.MULPDU < 516 {
			t.Fatalf("MULPDU %d", rep.MULPDU)
		}
	}
	if out := handle([]byte(`{"op":"ddpsctp_path","segments":[],"path":"tcp"}`)); !strings.Contains(string(out), `want \"udp\" or \"pipe\"`) {
		t.Fatalf("bad path: %s", out)
	}
}
