package tuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/openrnic/rnic/iwarp/crc32c"
)

// The fuzz targets cover every parser of the package: ParseHeader, the
// containment tests, the in-stream Receiver (against a reference that
// parses the whole stream at once), the SegmentReceiver (against the
// Receiver) and the Seam. Seed corpora are in testdata/fuzz.

func FuzzParseHeader(f *testing.F) {
	f.Add([]byte{0x05, 0xb4, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6})
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if len(b) < HeaderLen {
			if !errors.Is(err, ErrShortHeader) {
				t.Fatalf("%d octets: %v", len(b), err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Append(nil); !bytes.Equal(got, b[:HeaderLen]) {
			t.Fatalf("round trip % x -> % x", b[:HeaderLen], got)
		}
	})
}

// refParse delineates a whole stream at once: FPDU after FPDU while 8
// octets remain, each checked for key, Length and trailer.
func refParse(stream []byte, key Key) ([][]byte, ErrorCode) {
	var out [][]byte
	for off := 0; off < len(stream); {
		if len(stream)-off < HeaderLen {
			return out, ErrTruncated
		}
		length := int(binary.BigEndian.Uint16(stream[off:]))
		k := Key(binary.BigEndian.Uint64(append([]byte{0, 0}, stream[off+2:off+8]...)))
		if k != key {
			return out, ErrKey
		}
		if length < CRCLen {
			return out, ErrLength
		}
		end := off + HeaderLen + length
		if end > len(stream) {
			return out, ErrTruncated
		}
		if crc32c.Checksum(stream[off:end-CRCLen]) != binary.LittleEndian.Uint32(stream[end-CRCLen:end]) {
			return out, ErrCRC
		}
		out = append(out, stream[off+HeaderLen:end-CRCLen])
		off = end
	}
	return out, 0
}

func FuzzReceiver(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, pack := range []bool{false, true} {
		s, _ := NewSender(Config{Key: testKey, EMSS: 300, Pack: pack})
		segs, _ := s.Segments(nil, randULPDUs(r, 6, MaxULPDU(300)))
		stream := bytes.Join(segs, nil)
		f.Add(stream, uint64(testKey), uint64(1), false)
		f.Add(stream, uint64(testKey), uint64(2), true)
	}
	f.Fuzz(func(t *testing.T, stream []byte, key uint64, seed uint64, damage bool) {
		k := Key(key) & KeyMask
		cr := rand.New(rand.NewPCG(seed, 0))
		if damage && len(stream) > 0 {
			stream = bytes.Clone(stream)
			stream[cr.IntN(len(stream))] ^= byte(1 + cr.IntN(255))
		}
		want, wcode := refParse(stream, k)
		rx := NewReceiver(k)
		got, err := feed(rx, stream, func() int { return 1 + cr.IntN(1+cr.IntN(600)) })
		if err == nil {
			err = rx.Close()
		}
		var te *Error
		switch {
		case wcode == 0 && err != nil:
			t.Fatalf("reference takes the stream, Receiver: %v", err)
		case wcode != 0 && (!errors.As(err, &te) || te.Code != wcode):
			t.Fatalf("reference error %v, Receiver: %v", wcode, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d ULPDUs, reference %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("ULPDU %d differs", i)
			}
		}
	})
}

func FuzzContains(f *testing.F) {
	good, _ := AppendFPDU(nil, testKey, []byte("contained"))
	f.Add(good, uint64(testKey))
	f.Add(append(bytes.Clone(good), good...), uint64(testKey))
	f.Add(good[:len(good)-1], uint64(testKey))
	f.Fuzz(func(t *testing.T, seg []byte, key uint64) {
		k := Key(key) & KeyMask
		u, ok := Contains(seg, k)
		if ok {
			h, _ := ParseHeader(seg)
			if h.Key != k || int(h.Length)+HeaderLen != len(seg) || len(u) != len(seg)-Overhead {
				t.Fatalf("Contains passed a segment that is not one FPDU: %+v, %d octets", h, len(seg))
			}
		}
		lens, runOK := ContainsRun(seg, k)
		if ok && (!runOK || len(lens) != 1) {
			t.Fatalf("Contains passed, ContainsRun = %v, %v", lens, runOK)
		}
		if runOK {
			sum := 0
			for _, n := range lens {
				if _, one := Contains(seg[sum:sum+n], k); !one {
					t.Fatalf("run member at %d is not contained on its own", sum)
				}
				sum += n
			}
			if sum != len(seg) {
				t.Fatalf("run covers %d of %d octets", sum, len(seg))
			}
		}
	})
}

// FuzzSegmentReceiver: any cut of a framed stream (a middlebox at a fixed
// size or random cuts) delivers what the in-stream Receiver does, and
// nothing is ever taken through the test inside an FPDU.
func FuzzSegmentReceiver(f *testing.F) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 536, 1} {
		us := randULPDUs(r, 8, 400)
		f.Add(bytes.Join(us, []byte{0xa5, 0x5a}), uint16(n), uint64(n+1))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, seed uint64) {
		cr := rand.New(rand.NewPCG(seed, 1))
		// The data becomes ULPDUs of random lengths, framed at EMSS 512.
		var us [][]byte
		for len(data) > 0 {
			n := min(len(data), cr.IntN(MaxULPDU(512)+1))
			us = append(us, data[:n])
			data = data[n:]
		}
		s, _ := NewSender(Config{Key: testKey, EMSS: 512, Pack: seed%2 == 0})
		segs, err := s.Segments(nil, us)
		if err != nil {
			t.Fatal(err)
		}
		stream := bytes.Join(segs, nil)
		switch {
		case cut == 0:
		case cut == 1:
			segs = randomCut(cr, stream, 700)
		default:
			segs = middlebox(stream, int(cut))
		}
		sr := NewSegmentReceiver(testKey)
		var got [][]byte
		var off uint64
		for _, seg := range segs {
			took, err := sr.Segment(off, seg, func(_ uint64, u []byte) error {
				got = append(got, bytes.Clone(u))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if took && !bytes.Equal(seg, stream[off:off+uint64(len(seg))]) {
				t.Fatal("took a segment that is not the stream's")
			}
			off += uint64(len(seg))
		}
		if err := sr.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.Join(got, nil), bytes.Join(us, nil)) {
			t.Fatal("delivered octets differ from the ULPDUs sent")
		}
		if _, fp := sr.Stats(); fp != 0 && cut == 0 {
			t.Fatalf("%d false positives on the sender's own segments", fp)
		}
	})
}

// FuzzSeam: whatever the segments, the seam takes a segment only when it
// is one FPDU with the key starting at Next, and Next moves by exactly
// the segments taken.
func FuzzSeam(f *testing.F) {
	good, _ := AppendFPDU(nil, testKey, []byte("seam"))
	f.Add(good, uint32(0), uint32(0), uint8(1))
	f.Add(good, uint32(0xfffffff8), uint32(0xfffffff8), uint8(3))
	f.Add(good[1:], uint32(5), uint32(4), uint8(2))
	f.Fuzz(func(t *testing.T, seg []byte, next, seq uint32, times uint8) {
		s := Seam{Enabled: true, Key: testKey, Next: next}
		for i := 0; i < int(times%4)+1; i++ {
			before := s.Next
			o := s.Take(seq, seg)
			if o.Reason == Taken {
				if _, ok := Contains(seg, testKey); !ok || seq != before {
					t.Fatalf("took a segment at %#x (Next %#x) that is not contained", seq, before)
				}
				if s.Next != before+uint32(len(seg)) {
					t.Fatalf("Next %#x after taking %d octets at %#x", s.Next, len(seg), before)
				}
				if o.CRCGood != CRCGood(seg) || s.Failed == o.CRCGood {
					t.Fatalf("CRC verdict %v, failed %v", o.CRCGood, s.Failed)
				}
			} else if s.Next != before {
				t.Fatalf("Next moved on %v", o.Reason)
			}
			if o.Early {
				if _, ok := Contains(seg, testKey); !ok || !CRCGood(seg) || o.Reason != OutOfOrder {
					t.Fatalf("early but not a whole good FPDU past a hole: %v", o.Reason)
				}
			}
			seq += uint32(len(seg))
		}
	})
}

func FuzzParseStartupHeader(f *testing.F) {
	for _, k := range [][]byte{kindRequest, kindReply, kindAck} {
		b, _ := appendStartup(nil, k, StartupFrame{Key: testKey, PrivateData: []byte{0, 1, 2}})
		f.Add(b, uint8(0))
		f.Add(b, uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		kind := []string{"REQ", "REP", "ACK"}[which%3]
		fr, n, err := ParseStartupHeader(b, kind)
		if err != nil {
			if !errors.Is(err, ErrBadStartup) {
				t.Fatalf("error not ErrBadStartup: %v", err)
			}
			return
		}
		// What parses re-encodes to the same header.
		k := map[string][]byte{"REQ": kindRequest, "REP": kindReply, "ACK": kindAck}[kind]
		again, err := appendStartup(nil, k, StartupFrame{Key: fr.Key, Reject: fr.Reject, PrivateData: make([]byte, n)})
		if err != nil || !bytes.Equal(again[:startupHeaderLen], b[:startupHeaderLen]) {
			t.Fatalf("header % x re-encodes to % x (%v)", b[:startupHeaderLen], again[:startupHeaderLen], err)
		}
	})
}
