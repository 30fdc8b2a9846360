package siwtrace

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

const siwCapture = "../../../shared/testdata/siw-rping-default.pcap"

func loadSiw(t *testing.T) *Trace {
	t.Helper()
	tr, err := Load(siwCapture)
	if err != nil {
		t.Fatalf("%v (the capture ships in shared/testdata, beside the repository)", err)
	}
	return tr
}

// send is one data segment of a capture, retransmissions left out.
type send struct {
	fromClient bool
	payload    []byte
	time       time.Time
}

func sendsOf(c *capture.Conversation) []send {
	var out []send
	for _, fromClient := range []bool{true, false} {
		for _, s := range c.Stream(fromClient).Segments {
			if !s.Retransmission {
				out = append(out, send{fromClient, s.Payload, s.Time})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b send) int { return a.time.Compare(b.time) })
	return out
}

// writeCapture writes the sends as a capture of c's endpoints, each send
// cut into TCP segments of at most mss octets wherever that falls in the
// MPA framing, and reads it back.
func writeCapture(t *testing.T, c *capture.Conversation, sends []send, mss int) *capture.Conversation {
	t.Helper()
	var b bytes.Buffer
	w, err := capture.NewWriter(&b, c.Client, c.Server, capture.WithMSS(mss))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sends {
		if err := w.Write(s.fromClient, s.payload, s.time); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(sends[len(sends)-1].time); err != nil {
		t.Fatal(err)
	}
	convs, err := capture.ReadTCPStreamsFrom(&b)
	if err != nil || len(convs) != 1 {
		t.Fatalf("reading the written capture: %d connections, %v", len(convs), err)
	}
	return convs[0]
}

// splitFPDUs counts the FPDUs of tr whose octets came in more than one TCP
// segment, so that a test can show its capture really splits them.
func splitFPDUs(tr *Trace) int {
	n := 0
	for _, f := range tr.FPDUs {
		start := int64(len(tr.RequestRaw) + f.Offset)
		if !f.FromClient {
			start = int64(len(tr.ReplyRaw) + f.Offset)
		}
		end := start + int64(len(f.Raw))
		for _, s := range tr.Conv.Stream(f.FromClient).Segments {
			if s.Offset <= start && s.Offset+int64(len(s.Payload)) >= end {
				n--
				break
			}
		}
		n++
	}
	return n
}

// Decode reads the reassembled byte stream, so an FPDU split across TCP
// segments decodes as one (RFC 5044 A.4: receivers MUST NOT depend on FPDU
// alignment; siw itself splits some Read Responses at the MSS). The siw
// capture, re-cut at several segment sizes, must give the same trace: the
// same startup frames, FPDUs, order and times.
func TestDecodeSplitFPDUs(t *testing.T) {
	want := loadSiw(t)
	for _, mss := range []int{61, 7, 1} {
		t.Run(fmt.Sprintf("mss%d", mss), func(t *testing.T) {
			tr, err := Decode(writeCapture(t, want.Conv, sendsOf(want.Conv), mss))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if n := splitFPDUs(tr); n == 0 {
				t.Fatalf("no FPDU is split across segments at MSS %d: the test checks nothing", mss)
			} else {
				t.Logf("MSS %d: %d of %d FPDUs split across segments", mss, n, len(tr.FPDUs))
			}
			if !bytes.Equal(tr.RequestRaw, want.RequestRaw) || !bytes.Equal(tr.ReplyRaw, want.ReplyRaw) || tr.CRC != want.CRC {
				t.Errorf("startup frames % x / % x (CRC %v), want % x / % x (CRC %v)", tr.RequestRaw, tr.ReplyRaw, tr.CRC, want.RequestRaw, want.ReplyRaw, want.CRC)
			}
			if len(tr.FPDUs) != len(want.FPDUs) {
				t.Fatalf("%d FPDUs, the original capture %d", len(tr.FPDUs), len(want.FPDUs))
			}
			for i, f := range tr.FPDUs {
				w := want.FPDUs[i]
				if f.FromClient != w.FromClient || f.Offset != w.Offset || !bytes.Equal(f.Raw, w.Raw) ||
					!bytes.Equal(f.ULPDU, w.ULPDU) || f.Seg.Opcode != w.Seg.Opcode || !f.Time.Equal(w.Time) {
					t.Errorf("FPDU %d: client %v at %d, %v, %v; want client %v at %d, %v, %v",
						i, f.FromClient, f.Offset, f.Seg.Opcode, f.Time, w.FromClient, w.Offset, w.Seg.Opcode, w.Time)
				}
			}
		})
	}
}

// With CRCs negotiated, every CRC of an FPDU split across segments is
// checked over the reassembled FPDU (RFC 5044 4.4), and a corrupted octet
// in the second segment of an FPDU is caught.
func TestDecodeSplitFPDUsCRC(t *testing.T) {
	orig := loadSiw(t)
	// The siw conversation again with the C bit set in both startup
	// frames, and every FPDU framed with its CRC.
	var sends []send
	for _, fromClient := range []bool{true, false} {
		f, raw := orig.Request, orig.RequestRaw
		if !fromClient {
			f, raw = orig.Reply, orig.ReplyRaw
		}
		f.CRC = true
		b, err := f.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		sends = append(sends, send{fromClient, b, orig.Conv.Stream(fromClient).Segments[0].Time})
		if len(b) != len(raw) {
			t.Fatalf("re-encoded startup frame of %d octets, siw's %d", len(b), len(raw))
		}
	}
	slices.SortStableFunc(sends, func(a, b send) int { return a.time.Compare(b.time) })
	framers := map[bool]*mpa.Framer{true: mpa.NewFramer(false, true, 0), false: mpa.NewFramer(false, true, 0)}
	for _, f := range orig.FPDUs {
		b, err := framers[f.FromClient].AppendFPDU(nil, f.ULPDU, nil)
		if err != nil {
			t.Fatal(err)
		}
		sends = append(sends, send{f.FromClient, b, f.Time})
	}
	const mss = 45 // every FPDU but the smallest (40 octets) split
	conv := writeCapture(t, orig.Conv, sends, mss)
	tr, err := Decode(conv)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !tr.CRC || len(tr.FPDUs) != len(orig.FPDUs) {
		t.Fatalf("CRC %v, %d FPDUs; want CRC and %d FPDUs", tr.CRC, len(tr.FPDUs), len(orig.FPDUs))
	}
	if n := splitFPDUs(tr); n == 0 {
		t.Fatal("no FPDU is split across segments: the test checks nothing")
	}
	for i, f := range tr.FPDUs {
		if !bytes.Equal(f.ULPDU, orig.FPDUs[i].ULPDU) {
			t.Errorf("FPDU %d: ULPDU % x, want % x", i, f.ULPDU, orig.FPDUs[i].ULPDU)
		}
	}

	// Flip the last ULPDU octet of the client's first Read Response: it
	// lies in the second segment of its FPDU.
	var rr FPDU
	for _, f := range tr.Direction(true) {
		if f.Seg.Opcode == rdmap.OpReadResponse {
			rr = f
			break
		}
	}
	if rr.Raw == nil {
		t.Fatal("no Read Response from the client")
	}
	start := int64(len(tr.RequestRaw) + rr.Offset)
	at := start + int64(mpa.HeaderLen+len(rr.ULPDU)-1)
	if at-start < mss {
		t.Fatalf("the flipped octet at %d is in the FPDU's first segment", at)
	}
	st := conv.Stream(true)
	st.Data = bytes.Clone(st.Data)
	st.Data[at] ^= 0x01
	if _, err := Decode(conv); !errors.Is(err, &mpa.Error{Code: mpa.ErrCRC}) {
		t.Fatalf("Decode of a corrupted split FPDU: %v, want an MPA CRC error", err)
	}
}
