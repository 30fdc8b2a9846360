package tuf

import (
	"encoding/binary"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// Contains is the receiver's ULPDU containment test (4.4) on one TCP
// segment payload: the segment must be exactly one FPDU, that is it starts
// with a header whose Key equals key and whose Length plus 8 equals the
// segment's length. It also requires Length >= 4, room for the trailer
// (a shorter FPDU cannot be one this stack sent). When the test passes it
// returns the framed ULPDUs (between header and trailer, a part of seg);
// whether they arrived intact is CRCGood's business. The test never
// scans: an FPDU that does not start the segment is not looked for (4.4,
// "MUST NOT scan TCP segments").
func Contains(seg []byte, key Key) (ulpdus []byte, ok bool) {
	if len(seg) < Overhead {
		return nil, false
	}
	h, _ := ParseHeader(seg)
	if h.Key != key&KeyMask || int(h.Length)+HeaderLen != len(seg) {
		return nil, false
	}
	return seg[HeaderLen : len(seg)-CRCLen], true
}

// ContainsRun extends the test to a segment holding a run of whole FPDUs
// back to back, each with the key, the last one ending where the segment
// ends: what a receive offload or a coalescing middlebox makes of several
// conforming segments. It returns the length of each FPDU in the run. A
// run of one is Contains. The draft's test (4.4) admits only one FPDU per
// segment; the run is as safe against a false positive (every header in it
// must carry the key and the lengths must tile the segment exactly), and
// this package uses it only where a caller asks for it. The hardware block
// (hw/rtl/tuf_rx.v) takes single FPDUs only.
func ContainsRun(seg []byte, key Key) (fpduLens []int, ok bool) {
	for off := 0; off < len(seg); {
		rest := seg[off:]
		if len(rest) < Overhead {
			return nil, false
		}
		h, _ := ParseHeader(rest)
		n := int(h.Length) + HeaderLen
		if h.Key != key&KeyMask || h.Length < CRCLen || n > len(rest) {
			return nil, false
		}
		fpduLens = append(fpduLens, n)
		off += n
	}
	return fpduLens, len(fpduLens) > 0
}

// CRCGood reports whether a whole FPDU's trailer matches its header and
// ULPDUs (docs/tuf.md). fpdu must hold at least Overhead octets.
func CRCGood(fpdu []byte) bool {
	n := len(fpdu) - CRCLen
	return n >= HeaderLen && crc32c.Checksum(fpdu[:n]) == binary.LittleEndian.Uint32(fpdu[n:])
}

// Detector decides when a receiver stops relying on the containment test:
// "a TUF implementation which detects a very low incidence of the ULPDU
// containment property for a sustained interval (>> RTT) may assume that a
// resegmenting intermediary is in operation and SHOULD discontinue the use
// of ULP control information found using the ULPDU containment property"
// (5.2.1).
//
// It counts segments, not time, so that what it decides depends on the
// stream alone: the segments that carry data are taken in windows of
// Window segments; a window in which fewer than Window/Fraction passed the
// test is a low window; Windows low windows in a row mean a re-segmenting
// path, and the Detector falls back for good (until Reset). With the
// defaults (64, 4, 4): fewer than a quarter of the segments contained in
// each of 256 segments in a row. A conforming sender on a clean path gets
// nearly every segment contained (the exceptions of 5.2.2 to 5.2.4, a
// window below EMSS and PMTU changes, are rare and short); a middlebox
// that re-cuts at a size other than the FPDUs' gets almost none. 256
// segments of a bulk transfer span many round trips at any window size
// where TUF matters, which is the draft's ">> RTT".
type Detector struct {
	Window, Fraction, Windows int

	seen, contained int // in the current window
	low             int // low windows in a row
	fallback        bool
	total, hits     uint64
}

// Default detection parameters (see Detector).
const (
	DefaultWindow   = 64
	DefaultFraction = 4
	DefaultWindows  = 4
)

// NewDetector returns a Detector with the default parameters.
func NewDetector() *Detector {
	return &Detector{Window: DefaultWindow, Fraction: DefaultFraction, Windows: DefaultWindows}
}

// Observe counts one segment that carried data and whether it passed the
// containment test. It returns Fallback().
func (d *Detector) Observe(contained bool) bool {
	d.total++
	if contained {
		d.hits++
		d.contained++
	}
	d.seen++
	if d.seen >= d.Window {
		if d.contained*d.Fraction < d.Window {
			d.low++
		} else {
			d.low = 0
		}
		if d.low >= d.Windows {
			d.fallback = true
		}
		d.seen, d.contained = 0, 0
	}
	return d.fallback
}

// Fallback reports whether a re-segmenting path was detected: from then on
// the receiver does not rely on the containment test.
func (d *Detector) Fallback() bool { return d.fallback }

// Counts returns the segments observed and how many passed the test.
func (d *Detector) Counts() (segments, contained uint64) { return d.total, d.hits }

// Reset starts detection afresh (the ULP re-enables TUF, 5.2.1).
func (d *Detector) Reset() {
	*d = Detector{Window: d.Window, Fraction: d.Fraction, Windows: d.Windows}
}
