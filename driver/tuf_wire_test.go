package driver

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/openrnic/rnic/iwarp/tuf"
)

// TUF over the impairment wire (wire.go's Impair: the re-segmenting
// middlebox, cuts and joins, duplicates, reordering, loss): the segment
// boundaries are visible here, so the containment test runs on them
// (docs/tuf.md). Two receivers take the same impaired segments:
//
//   - tuf.Seam, the hardware block's model, on the segments as they
//     arrive: whatever it takes or marks for early placement must be an
//     FPDU the sender sent, at its own sequence number (no false
//     positive), and once the host has given
//     the stream's FPDUs back one a segment, every ULPDU has been taken
//     once, in order;
//   - tuf.SegmentReceiver on the segments after TCP reassembly (in order,
//     duplicates dropped, overlaps trimmed, boundaries kept): it delivers
//     the stream, takes every segment of a clean path through the test,
//     and detects the middlebox.
func TestTUFOverImpairedWire(t *testing.T) {
	const key tuf.Key = 0x3c5a96e1f00d
	r := rand.New(rand.NewPCG(32, 3))
	var ulpdus [][]byte
	for i := 0; i < 600; i++ {
		n := 14 + r.IntN(tuf.MaxULPDU(1460)-13)
		if i%4 == 0 {
			n = 14 + r.IntN(100)
		}
		u := make([]byte, n)
		for j := range u {
			u[j] = byte(r.Uint32())
		}
		ulpdus = append(ulpdus, u)
	}
	s, err := tuf.NewSender(tuf.Config{Key: key, EMSS: 1460})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := s.Segments(nil, ulpdus)
	if err != nil {
		t.Fatal(err)
	}
	const base = 0xfffe0000 // the sequence numbers wrap inside the stream
	var burst []Segment
	truth := map[uint32][]byte{}
	seq := uint32(base)
	for _, seg := range sent {
		burst = append(burst, Segment{QPN: 1, Seq: seq, Octets: seg})
		truth[seq] = seg
		seq += uint32(len(seg))
	}
	end := seq
	for _, imp := range []Impair{
		{},
		{Reorder: 6, Dup: 0.2, Loss: 0.1, LossAfter: 3},
		{Cut: 0.5, Coalesce: 0.3},
		{Middlebox: 536},
		{Middlebox: 536, Cut: 0.3, Coalesce: 0.2, Dup: 0.2, Reorder: 5, Loss: 0.15, LossAfter: 2},
	} {
		t.Run(imp.String(), func(t *testing.T) {
			var st WireStats
			got := imp.apply(rand.New(rand.NewPCG(uint64(len(imp.String())), 9)), burst, &st)

			// The seam on the arrivals, then the host's give-back.
			seam := tuf.Seam{Enabled: true, Key: key, Next: base}
			var taken []byte
			took, before, early := 0, 0, 0
			for i, g := range append(got, burst...) {
				o := seam.Take(g.Seq, g.Octets)
				if o.Early {
					// Placed early: it must be a sent FPDU too.
					if want, ok := truth[g.Seq]; !ok || !bytes.Equal(want, g.Octets) {
						t.Fatalf("the seam marked %d octets at %#x early that are not a sent FPDU there", len(g.Octets), g.Seq)
					}
					early++
				}
				if o.Reason != tuf.Taken {
					continue
				}
				if want, ok := truth[g.Seq]; !ok || !bytes.Equal(want, g.Octets) || !o.CRCGood {
					t.Fatalf("the seam took %d octets at %#x that are not a sent FPDU there", len(g.Octets), g.Seq)
				}
				taken = append(taken, o.ULPDUs...)
				took++
				if i < len(got) {
					before++
				}
			}
			if seam.Next != end || !bytes.Equal(taken, bytes.Join(ulpdus, nil)) {
				t.Fatalf("the seam took %d segments and stopped at %#x (end %#x)", took, seam.Next, end)
			}

			// The receiver where the boundaries are visible, after
			// reassembly.
			sr := tuf.NewSegmentReceiver(key)
			var out [][]byte
			for _, g := range reassemble(got, base) {
				if _, err := sr.Segment(uint64(g.Seq-base), g.Octets, func(_ uint64, u []byte) error {
					out = append(out, bytes.Clone(u))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			if err := sr.Close(); err != nil {
				t.Fatal(err)
			}
			if len(out) != len(ulpdus) || !bytes.Equal(bytes.Join(out, nil), bytes.Join(ulpdus, nil)) {
				t.Fatalf("%d ULPDUs delivered, %d sent", len(out), len(ulpdus))
			}
			n, hits := sr.Detector().Counts()
			via, fp := sr.Stats()
			t.Logf("%v: %d segments arrived, seam took %d before the give-back (%d more early); in order: %d segments, %d contained, %d taken through the test, fallback %v",
				imp, len(got), before, early, n, hits, via, sr.Detector().Fallback())
			if fp != 0 {
				t.Errorf("%d false positives", fp)
			}
			switch {
			case imp == Impair{}:
				if hits != n || sr.Detector().Fallback() {
					t.Errorf("clean path: %d of %d contained, fallback %v", hits, n, sr.Detector().Fallback())
				}
			case imp.Middlebox > 0:
				if !sr.Detector().Fallback() {
					t.Errorf("the middlebox was not detected: %d of %d contained", hits, n)
				}
			}
		})
	}
}

// reassemble is TCP reassembly that keeps segment boundaries: the arrivals
// in sequence order from base, each duplicate dropped, each overlap
// trimmed to its new octets.
func reassemble(got []Segment, base uint32) []Segment {
	segs := append([]Segment(nil), got...)
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].Seq-base < segs[j].Seq-base })
	var out []Segment
	next := base
	for _, s := range segs {
		off := int(next - s.Seq)
		if int32(next-s.Seq) < 0 {
			panic(fmt.Sprintf("a hole at %#x: the impairment lost data for good", next))
		}
		if off >= len(s.Octets) {
			continue
		}
		out = append(out, Segment{QPN: s.QPN, Seq: next, Octets: s.Octets[off:]})
		next += uint32(len(s.Octets) - off)
	}
	return out
}
