// Package siwtrace decodes a captured MPA connection (such as the two Linux
// siw peers of ../shared/testdata/siw-rping-default.pcap, or a session with
// siw in the interop guest) into the startup frames and the FPDUs of both
// directions, in the order they crossed the wire, for
// tests that check the stack against siw's bytes or replay one side of the
// conversation against the stack.
package siwtrace

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// FPDU is one FPDU of the capture.
type FPDU struct {
	// FromClient is true for FPDUs the client (the MPA Initiator) sent.
	FromClient bool
	// Offset is where the FPDU starts in its direction's Full Operation
	// octets (Trace.Full).
	Offset int
	// Raw is the FPDU as on the wire: ULPDU_Length, ULPDU, pad and CRC.
	Raw []byte
	// ULPDU is the DDP segment it carries, and Seg its RDMAP reading.
	ULPDU []byte
	Seg   rdmap.Segment
	// Time is when the TCP segment holding its last octet was captured.
	Time time.Time
}

// Trace is a decoded capture of one MPA connection.
type Trace struct {
	Conv *capture.Conversation
	// Request and Reply are the startup frames; RequestRaw and ReplyRaw
	// their octets.
	Request, Reply       mpa.StartupFrame
	RequestRaw, ReplyRaw []byte
	// Full holds each direction's octets after its startup frame, indexed
	// by FromClient (Full[1] is the client's).
	Full [2][]byte
	// FPDUs lists both directions' FPDUs in capture order.
	FPDUs []FPDU
	// CRC reports that the startup negotiated CRCs, which Decode checked.
	CRC bool
}

// Direction returns the FPDUs one side sent, in order.
func (t *Trace) Direction(fromClient bool) []FPDU {
	var out []FPDU
	for _, f := range t.FPDUs {
		if f.FromClient == fromClient {
			out = append(out, f)
		}
	}
	return out
}

// FullOf returns the Full Operation octets one side sent.
func (t *Trace) FullOf(fromClient bool) []byte { return t.Full[index(fromClient)] }

// Load reads and decodes the capture at path, which must hold one TCP
// connection (see Decode).
func Load(path string) (*Trace, error) {
	convs, err := capture.ReadTCPStreams(path)
	if err != nil {
		return nil, err
	}
	if len(convs) != 1 {
		return nil, fmt.Errorf("siwtrace: %s holds %d TCP connections, want 1", path, len(convs))
	}
	return Decode(convs[0])
}

// Decode decodes one captured connection carrying MPA without markers (siw
// never uses them): both startup frames, then every FPDU through the
// in-order receiver, its CRC checked when the startup negotiated CRC, and
// RDMAP classification.
func Decode(conv *capture.Conversation) (*Trace, error) {
	t := &Trace{Conv: conv}
	var sizes [2]int
	for _, fromClient := range []bool{true, false} {
		data := t.Conv.Stream(fromClient).Data
		f, n, err := mpa.ParseStartupFrame(data, 0)
		if err != nil {
			return nil, fmt.Errorf("siwtrace: the %s's startup frame: %w", side(fromClient), err)
		}
		if f.Reply == fromClient {
			return nil, fmt.Errorf("siwtrace: the %s's startup frame has Reply=%v", side(fromClient), f.Reply)
		}
		if f.Markers {
			return nil, errors.New("siwtrace: the capture uses markers, which siw never does")
		}
		if fromClient {
			t.Request, t.RequestRaw = f, data[:n]
		} else {
			t.Reply, t.ReplyRaw = f, data[:n]
		}
		sizes[index(fromClient)] = n
		t.Full[index(fromClient)] = data[n:]
	}
	// CRC is on both ways when either side asked (RFC 5044 7.1.2).
	t.CRC = t.Request.CRC || t.Reply.CRC
	var fpdus []FPDU
	for _, fromClient := range []bool{true, false} {
		st := t.Conv.Stream(fromClient)
		full, n := t.Full[index(fromClient)], sizes[index(fromClient)]
		rx := mpa.NewReceiver(false, t.CRC, 0)
		err := rx.Feed(full, func(seq uint32, ulpdu []byte) error {
			u := slices.Clone(ulpdu)
			seg, err := rdmap.Classify(u)
			if err != nil {
				return fmt.Errorf("FPDU at offset %d: %w", seq, err)
			}
			end := int(seq) + mpa.HeaderLen + len(u) + mpa.PadLen(len(u)) + mpa.CRCLen
			fpdus = append(fpdus, FPDU{
				FromClient: fromClient, Offset: int(seq), Raw: full[seq:end],
				ULPDU: u, Seg: seg, Time: timeOf(st, int64(n+end)),
			})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("siwtrace: the %s's stream: %w", side(fromClient), err)
		}
		if rx.Seq() != uint32(len(full)) {
			return nil, fmt.Errorf("siwtrace: a partial FPDU at the end of the %s's stream", side(fromClient))
		}
	}
	slices.SortStableFunc(fpdus, func(a, b FPDU) int { return a.Time.Compare(b.Time) })
	t.FPDUs = fpdus
	return t, nil
}

// timeOf returns the capture time of the first segment that carried the
// stream octet just before offset end.
func timeOf(st *capture.Stream, end int64) time.Time {
	for _, s := range st.Segments {
		if !s.Retransmission && s.Offset < end && s.Offset+int64(len(s.Payload)) >= end {
			return s.Time
		}
	}
	return time.Time{}
}

func index(fromClient bool) int {
	if fromClient {
		return 1
	}
	return 0
}

func side(fromClient bool) string {
	if fromClient {
		return "client"
	}
	return "server"
}
