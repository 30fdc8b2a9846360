package tuf

import (
	"encoding/binary"
	"fmt"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// Receiver delineates FPDUs in an in-order byte stream by Length and Key:
// the first FPDU starts at the stream's first octet, each next one where
// the Length of the one before says. It checks every header's key and
// every trailer and hands the framed ULPDUs of each FPDU to its caller.
// This is what a receiver does where TCP segment boundaries are not
// visible (a kernel TCP socket), and what it falls back to once a
// re-segmenting path has been detected (5.2.1); it needs no containment
// and works with the stream cut anywhere, one octet at a time included.
//
// Errors (in this order, each ending the stream): a header whose key is
// not the connection's, ErrKey, as soon as the header is whole; a Length
// below 4, ErrLength; a trailer that does not match, ErrCRC, once the
// trailer is whole. Every later Feed returns the same error.
type Receiver struct {
	key Key
	off uint64 // stream offset of the next octet
	at  uint64 // stream offset of the current FPDU's header

	hdr    [HeaderLen]byte
	hdrGot int
	length int // the current FPDU's Length; valid once hdrGot == HeaderLen
	body   []byte
	err    error
}

// NewReceiver returns a Receiver for a stream whose FPDUs carry key.
func NewReceiver(key Key) *Receiver { return &Receiver{key: key & KeyMask} }

// Offset is the stream offset of the next octet the Receiver expects.
func (r *Receiver) Offset() uint64 { return r.off }

// AtBoundary reports whether the next octet starts an FPDU.
func (r *Receiver) AtBoundary() bool { return r.hdrGot == 0 }

// Err returns the error that stopped the Receiver, or nil.
func (r *Receiver) Err() error { return r.err }

// Close reports ErrTruncated if the stream stopped inside an FPDU, else
// the Receiver's error, if any.
func (r *Receiver) Close() error {
	if r.err == nil && r.hdrGot > 0 {
		r.err = errorf(ErrTruncated, r.at, "FPDU at offset %d: %d of its octets arrived", r.at,
			r.hdrGot+len(r.body))
	}
	return r.err
}

// Feed consumes the next chunk of the stream. For each FPDU it completes
// and checks it calls deliver with the FPDU's stream offset and its framed
// ULPDUs (valid only during the call). An error from deliver stops the
// Receiver and is returned as is.
func (r *Receiver) Feed(p []byte, deliver func(off uint64, ulpdus []byte) error) error {
	if r.err != nil {
		return r.err
	}
	for len(p) > 0 {
		if r.hdrGot < HeaderLen {
			if r.hdrGot == 0 {
				r.at = r.off
				// A whole FPDU in p: checked and delivered in place.
				if len(p) >= Overhead {
					h, _ := ParseHeader(p)
					n := int(h.Length) + HeaderLen
					if h.Key == r.key && h.Length >= CRCLen && n <= len(p) {
						if err := r.finish(p[:n], deliver); err != nil {
							return err
						}
						p = p[n:]
						continue
					}
				}
			}
			k := copy(r.hdr[r.hdrGot:], p)
			r.hdrGot += k
			r.off += uint64(k)
			p = p[k:]
			if r.hdrGot < HeaderLen {
				return nil
			}
			h, _ := ParseHeader(r.hdr[:])
			if err := r.checkHeader(h); err != nil {
				return err
			}
			r.length = int(h.Length)
			r.body = append(r.body[:0], r.hdr[:]...)
			continue
		}
		k := min(r.length+HeaderLen-len(r.body), len(p))
		r.body = append(r.body, p[:k]...)
		r.off += uint64(k)
		p = p[k:]
		if len(r.body) == r.length+HeaderLen {
			if err := r.finish(r.body, deliver); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Receiver) checkHeader(h Header) error {
	switch {
	case h.Key != r.key:
		r.err = errorf(ErrKey, r.at, "FPDU at offset %d carries key %v, the connection's is %v", r.at, h.Key, r.key)
	case h.Length < CRCLen:
		r.err = errorf(ErrLength, r.at, "FPDU at offset %d has Length %d, below the %d-octet trailer", r.at, h.Length, CRCLen)
	}
	return r.err
}

// finish checks the whole FPDU fpdu (at r.at) and delivers its ULPDUs.
func (r *Receiver) finish(fpdu []byte, deliver func(uint64, []byte) error) error {
	n := len(fpdu) - CRCLen
	if got, want := binary.LittleEndian.Uint32(fpdu[n:]), crc32c.Checksum(fpdu[:n]); got != want {
		r.err = errorf(ErrCRC, r.at, "FPDU at offset %d (Length %d): trailer %#08x, computed %#08x",
			r.at, n+CRCLen-HeaderLen, got, want)
		return r.err
	}
	at := r.at
	r.off = at + uint64(len(fpdu))
	r.hdrGot = 0
	r.body = r.body[:0]
	if err := deliver(at, fpdu[HeaderLen:n]); err != nil {
		r.err = err
		return err
	}
	return nil
}

// SegmentReceiver is a receiver where TCP segment boundaries are visible
// (the project's impairment wire, the hardware's segment seam) and the
// segments come in stream order (out-of-order ones are TCP reassembly's
// business first, driver.Reasm). It runs the containment test on each
// segment and feeds the Detector. While no re-segmenting path has been
// detected, a segment that passes the test at an FPDU boundary is taken
// through the test (its ULPDUs located by containment alone, as a
// direct-placement NIC does); everything else, and every segment once the
// Detector has fallen back, is delineated in-stream by Length and Key.
// Both ways deliver the same ULPDUs for a good stream. A segment that
// passes the test while the stream is inside an FPDU is a false positive
// of the test (the key turned up in the data); it is never taken that
// way, and is counted (FalsePositives).
type SegmentReceiver struct {
	rx       *Receiver
	det      *Detector
	key      Key
	viaTest  uint64
	falsePos uint64
}

// NewSegmentReceiver returns a SegmentReceiver for key with the default
// Detector.
func NewSegmentReceiver(key Key) *SegmentReceiver {
	return &SegmentReceiver{rx: NewReceiver(key), det: NewDetector(), key: key & KeyMask}
}

// Detector returns the receiver's Detector (to read or tune it).
func (s *SegmentReceiver) Detector() *Detector { return s.det }

// Offset is the stream offset of the next octet expected.
func (s *SegmentReceiver) Offset() uint64 { return s.rx.Offset() }

// Stats returns how many segments were taken through the containment test
// and how many passed it inside an FPDU (never taken).
func (s *SegmentReceiver) Stats() (viaTest, falsePositives uint64) { return s.viaTest, s.falsePos }

// Close is the Receiver's Close.
func (s *SegmentReceiver) Close() error { return s.rx.Close() }

// Segment takes the next segment payload, which must start at stream
// offset off == Offset(). It reports whether the segment was taken through
// the containment test.
func (s *SegmentReceiver) Segment(off uint64, seg []byte, deliver func(off uint64, ulpdus []byte) error) (bool, error) {
	if err := s.rx.Err(); err != nil {
		return false, err
	}
	if off != s.rx.Offset() {
		return false, fmt.Errorf("tuf: segment at offset %d, the stream is at %d: reassemble out-of-order segments first", off, s.rx.Offset())
	}
	if len(seg) == 0 {
		return false, nil
	}
	_, contained := Contains(seg, s.key)
	fallback := s.det.Observe(contained)
	if contained && !s.rx.AtBoundary() {
		s.falsePos++
		contained = false
	}
	if contained && !fallback {
		s.viaTest++
	}
	// Delineation is the same either way for a segment that is one whole
	// FPDU at a boundary: Feed takes it in place, checks key, Length and
	// trailer, and delivers it.
	return contained && !fallback, s.rx.Feed(seg, deliver)
}
