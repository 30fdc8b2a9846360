package ddpsctp

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/rdmap"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

type goldenCase struct {
	file string
	desc string
	p    Payload
}

// goldenCases are every message the layer sends: the four Session Control
// messages (5.2.3) and a DDP Segment Chunk (5.2.2).
func goldenCases(t testing.TB) []goldenCase {
	w := rdmap.NewWrite(0x00001201, 0x1000, pattern(24))
	segs, err := w.AppendSegments(nil, MinMULPDU)
	if err != nil {
		t.Fatal(err)
	}
	return []goldenCase{
		{"initiate", "Session Initiate, DDP-SSN 0, private data \"hello\"", Control(0, FuncInitiate, []byte("hello"))},
		{"initiate_empty", "Session Initiate, DDP-SSN 0, no private data", Control(0, FuncInitiate, nil)},
		{"accept", "Session Accept, DDP-SSN 0, private data \"ok\"", Control(0, FuncAccept, []byte("ok"))},
		{"reject", "Session Reject, DDP-SSN 0, private data \"busy\"", Control(0, FuncReject, []byte("busy"))},
		{"terminate", "Session Terminate, DDP-SSN 7", Control(7, FuncTerminate, nil)},
		{"terminate_first", "Session Terminate, DDP-SSN 0 (a passive side refusing an Initiate, 6.4)", Control(0, FuncTerminate, nil)},
		{"segment_write", "DDP Segment Chunk, DDP-SSN 0x1234: RDMA Write of 24 octets to STag 0x00001201 TO 0x1000", Segment(0x1234, segs[0])},
	}
}

func renderGolden(t testing.TB, c goldenCase) []byte {
	wire, err := c.p.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n", c.desc)
	if c.p.PPID == PPIDControl {
		fmt.Fprintf(&b, "# PPID 0x%08x (DDP Stream Session Control), U=1, %d octets: DDP-SSN %04x | Function Code %04x (%v) | private data %d octets\n",
			c.p.PPID, len(wire), c.p.SSN, uint16(c.p.Func), c.p.Func, len(c.p.PrivateData))
	} else {
		fmt.Fprintf(&b, "# PPID 0x%08x (DDP Segment Chunk), U=1, %d octets: DDP-SSN %04x | DDP segment %d octets\n",
			c.p.PPID, len(wire), c.p.SSN, len(c.p.Segment))
	}
	for off := 0; off < len(wire); off += 16 {
		line := wire[off:min(off+16, len(wire))]
		parts := make([]string, len(line))
		for j, x := range line {
			parts[j] = fmt.Sprintf("%02x", x)
		}
		b.WriteString(strings.Join(parts, " ") + "\n")
	}
	return b.Bytes()
}

// TestGolden: every message the layer sends matches its golden file octet
// for octet, and parses back to itself.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "golden", c.file+".hex")
			got := renderGolden(t, c)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs:\ngot\n%s\nwant\n%s", path, got, want)
			}
			// The hex lines alone are the wire form: parse them back.
			var wire []byte
			for _, line := range strings.Split(string(want), "\n") {
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				b, err := hex.DecodeString(strings.ReplaceAll(line, " ", ""))
				if err != nil {
					t.Fatal(err)
				}
				wire = append(wire, b...)
			}
			p, err := ParsePayload(c.p.PPID, wire)
			if err != nil {
				t.Fatal(err)
			}
			if p.SSN != c.p.SSN || p.Func != c.p.Func || !bytes.Equal(p.PrivateData, c.p.PrivateData) || !bytes.Equal(p.Segment, c.p.Segment) {
				t.Fatalf("parsed %+v, want %+v", p, c.p)
			}
		})
	}
}
