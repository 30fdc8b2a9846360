package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The checked-in hw/rtl/rnic_codes.vh and hw/rtl/vhdl/rnic_codes_pkg.vhd are
// what the generator writes from the Go model's codes.
func TestCheckedInFilesUpToDate(t *testing.T) {
	if s := stale(filepath.Join("..", "..")); len(s) > 0 {
		t.Fatalf("out of date: %v; run `go run ./internal/hdlcodes` from the repository root", s)
	}
}

// stale notices a changed file (the test above can fail).
func TestStaleNoticesADifference(t *testing.T) {
	root := t.TempDir()
	for rel, text := range outputs() {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s := stale(root); len(s) != 0 {
		t.Fatalf("fresh copies reported stale: %v", s)
	}
	rel := filepath.Join("hw", "rtl", "rnic_codes.vh")
	text := bytes.Replace(outputs()[rel], []byte("16'h1101"), []byte("16'h1102"), 1)
	if err := os.WriteFile(filepath.Join(root, rel), text, 0o644); err != nil {
		t.Fatal(err)
	}
	if s := stale(root); len(s) != 1 || s[0] != rel {
		t.Fatalf("a changed code: stale = %v, want [%s]", s, rel)
	}
}

// The words are the Terminate fields the block reports, as RFC 5040 7 and
// RFC 5041 7.2 number them.
func TestWords(t *testing.T) {
	want := map[string]uint16{
		"RDMAP_LOCAL_CATASTROPHIC": 0x0000, "RDMAP_ACCESS_RIGHTS": 0x0102, "RDMAP_CANNOT_INVALIDATE": 0x0109,
		"RDMAP_INVALID_VERSION": 0x0205, "RDMAP_UNEXPECTED_OPCODE": 0x0206, "RDMAP_STREAM_CATASTROPHIC": 0x0207,
		"DDP_INVALID_STAG": 0x1100, "DDP_BASE_BOUNDS": 0x1101, "DDP_STAG_NOT_ASSOCIATED": 0x1102,
		"DDP_TO_WRAP": 0x1103, "DDP_TAGGED_INVALID_VERSION": 0x1104, "DDP_INVALID_QN": 0x1201,
		"DDP_NO_BUFFER": 0x1202, "DDP_MSN_RANGE": 0x1203, "DDP_INVALID_MO": 0x1204, "DDP_TOO_LONG": 0x1205,
		"DDP_UNTAGGED_INVALID_VERSION": 0x1206,
	}
	if len(errWords) != len(want) {
		t.Fatalf("%d words, want %d", len(errWords), len(want))
	}
	for _, e := range errWords {
		if w, ok := want[e.name]; !ok || e.word() != w {
			t.Errorf("ERR_%s = %#04x, want %#04x", e.name, e.word(), w)
		}
	}
}
