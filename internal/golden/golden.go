// Package golden reads and checks the hex golden files the protocol
// packages' tests keep under testdata/golden: lines of hex octets
// (spaces allowed), comment lines starting with "#", and "# segment" lines
// that start a new segment in files holding several.
package golden

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Segments returns the segments of the golden file at path: each
// "# segment" line starts one, hex lines add to it, other comment lines
// and blank lines are skipped.
func Segments(t testing.TB, path string) [][]byte {
	t.Helper()
	var segs [][]byte
	for _, line := range lines(t, path) {
		switch {
		case strings.HasPrefix(line, "# segment"):
			segs = append(segs, nil)
		case strings.HasPrefix(line, "#"), strings.TrimSpace(line) == "":
		default:
			b := decode(t, path, line)
			if len(segs) == 0 {
				t.Fatalf("%s: hex line %q before the first \"# segment\"", path, line)
			}
			segs[len(segs)-1] = append(segs[len(segs)-1], b...)
		}
	}
	return segs
}

// Bytes returns every hex line of the golden file at path, in order, as
// one run of octets (comment and blank lines skipped).
func Bytes(t testing.TB, path string) []byte {
	t.Helper()
	var out []byte
	for _, line := range lines(t, path) {
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, decode(t, path, line)...)
	}
	return out
}

// Check compares got, a golden file's whole text as the test renders it,
// with the file at path; with update it writes the file instead.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the encoder's output:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

func lines(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	return strings.Split(string(data), "\n")
}

func decode(t testing.TB, path, line string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(line, " ", ""))
	if err != nil {
		t.Fatalf("%s: bad line %q", path, line)
	}
	return b
}
