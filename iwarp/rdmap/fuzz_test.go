package rdmap

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/openrnic/rnic/iwarp/ddp"
)

func FuzzParseTerminate(f *testing.F) {
	for _, c := range goldenCases(f) {
		if c.msg.Opcode == OpTerminate {
			f.Add(c.msg.Payload)
		}
	}
	f.Add([]byte{0, 0, 0x40, 0, 0xc1})
	f.Add([]byte{0, 0, 0xe0, 0})
	for _, c := range siwTerminates {
		b, _ := hex.DecodeString(c.hex)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The lenient reading agrees with the strict one on everything
		// the strict one accepts, and yields only well-formed Terminates.
		peer, perr := ParsePeerTerminate(b)
		if perr == nil {
			if _, err := peer.Append(nil); err != nil {
				t.Fatalf("ParsePeerTerminate gave an unencodable %+v: %v", peer, err)
			}
		}
		term, err := ParseTerminate(b)
		if err == nil && (perr != nil || peer.SwappedBitfields) {
			t.Fatalf("ParsePeerTerminate disagrees on a conforming Terminate: %+v, %v", peer, perr)
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		out, err := term.Append(nil)
		if err != nil {
			t.Fatalf("Append of a parsed Terminate: %v", err)
		}
		// Identical but for the 13 reserved bits, which go out as zero.
		in := bytes.Clone(b)
		binary.BigEndian.PutUint16(in[2:], binary.BigEndian.Uint16(in[2:])&0xe000)
		if !bytes.Equal(out, in) || term.Len() != len(b) {
			t.Fatalf("round trip % x -> % x", b, out)
		}
		// The error it reports makes the same Terminate again, except that
		// a zero segment length (impossible: a segment has a header) reads
		// as unknown.
		again := term.Err().Terminate()
		if again.M != (term.M && term.SegmentLen > 0) || again.D != term.D || again.R != term.R {
			t.Fatalf("Err().Terminate() = %+v, from %+v", again, term)
		}
	})
}

func FuzzParseReadRequest(f *testing.F) {
	f.Add(goldenRR.Append(nil))
	f.Add(make([]byte, 27))
	f.Add(bytes.Repeat([]byte{0xff}, 28))
	f.Fuzz(func(t *testing.T, b []byte) {
		rr, err := ParseReadRequest(b)
		if (err == nil) != (len(b) == ReadRequestLen) {
			t.Fatalf("%d octets: %v", len(b), err)
		}
		if err == nil && !bytes.Equal(rr.Append(nil), b) {
			t.Fatalf("round trip % x", b)
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, c := range goldenCases(f) {
		segs, err := c.msg.AppendSegments(nil, goldenMULPDU)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range segs {
			f.Add(s)
		}
	}
	f.Add([]byte{0x41, 0x43, 0, 0})
	f.Add((&ddp.Header{Last: true, DV: 1, ULPCtrl: 0x43, QN: 1}).Append(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Classify(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T", err)
			}
			if e.SegmentLen != len(b) {
				t.Fatalf("SegmentLen %d of a %d-octet segment", e.SegmentLen, len(b))
			}
			// Every classification error can be sent back in a Terminate
			// that parses again.
			term := e.Terminate()
			out, err := term.Append(nil)
			if err != nil {
				t.Fatalf("Terminate for %v: %v", e, err)
			}
			if _, err := ParseTerminate(out); err != nil {
				t.Fatalf("Terminate for %v does not parse: %v", e, err)
			}
			return
		}
		h := &s.Header
		rv, op := ParseControl(h.ULPCtrl)
		if rv != Version || op != s.Opcode || !op.Valid() || op.Tagged() != h.Tagged || h.DV != ddp.Version ||
			(!h.Tagged && h.QN != op.QN()) {
			t.Fatalf("accepted %v as %v", h, s.Opcode)
		}
		if !bytes.Equal(append(h.Append(nil), s.Payload...), b) {
			t.Fatal("header and payload do not give the segment back")
		}
	})
}
