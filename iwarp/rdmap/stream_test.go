package rdmap

import (
	"bytes"
	"errors"
	"testing"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// streamFixture is a Stream over a fresh STag table with one sink region
// of 100 octets (STag 0x100, TO base 0x1000, remote write) in PD 1.
func streamFixture(t *testing.T) (*Stream, []byte) {
	t.Helper()
	stags := ddp.NewSTagTable()
	mem := bytes.Repeat([]byte{0xee}, 100)
	must(t, stags.Register(ddp.Region{STag: 0x100, PD: 1, Access: ddp.RemoteWrite, Base: 0x1000, Buf: mem}))
	return NewStream(ddp.NewSink(1, 7, stags, NumQueues), stags, 1, 7), mem
}

// segments cuts m into DDP segments of at most mulpdu octets.
func segments(t *testing.T, m Message, mulpdu int) [][]byte {
	t.Helper()
	segs, err := m.AppendSegments(nil, mulpdu)
	must(t, err)
	return segs
}

func TestStreamReadResponses(t *testing.T) {
	data := bytes.Repeat([]byte{1, 2, 3, 4}, 25)
	for _, tt := range []struct {
		name   string
		reads  []OutstandingRead // expected, in order
		resp   Message
		mulpdu int
		// Want: the error (layer, type, code) or, with etype 0xff, a
		// completed read of want octets.
		layer       Layer
		etype, code uint8
		want        uint64
	}{
		{"whole, one segment", []OutstandingRead{{SinkSTag: 0x100, SinkTO: 0x1000, Len: 100}}, NewReadResponse(0x100, 0x1000, data), 1 << 14, 0, 0xff, 0, 100},
		{"whole, in pieces", []OutstandingRead{{SinkSTag: 0x100, SinkTO: 0x1000, Len: 100}}, NewReadResponse(0x100, 0x1000, data), 30, 0, 0xff, 0, 100},
		{"short", []OutstandingRead{{SinkSTag: 0x100, SinkTO: 0x1000, Len: 100}}, NewReadResponse(0x100, 0x1000, data[:60]), 1 << 14,
			LayerRDMAP, ETypeRemoteProtection, CodeBaseBounds, 0},
		{"short, in pieces", []OutstandingRead{{SinkSTag: 0x100, SinkTO: 0x1000, Len: 100}}, NewReadResponse(0x100, 0x1000, data[:60]), 30,
			LayerRDMAP, ETypeRemoteProtection, CodeBaseBounds, 0},
		{"too long", []OutstandingRead{{SinkSTag: 0x100, SinkTO: 0x1000, Len: 50}}, NewReadResponse(0x100, 0x1000, data[:60]), 1 << 14,
			LayerRDMAP, ETypeRemoteProtection, CodeBaseBounds, 0},
		{"none outstanding", nil, NewReadResponse(0x100, 0x1000, data), 1 << 14,
			LayerRDMAP, ETypeRemoteOperation, CodeUnexpectedOpcode, 0},
		{"other STag", []OutstandingRead{{SinkSTag: 0x200, SinkTO: 0x1000, Len: 100}}, NewReadResponse(0x100, 0x1000, data), 1 << 14,
			LayerRDMAP, ETypeRemoteProtection, CodeInvalidSTag, 0},
		{"other TO", []OutstandingRead{{SinkSTag: 0x100, SinkTO: 0x1004, Len: 96}}, NewReadResponse(0x100, 0x1000, data[:96]), 1 << 14,
			LayerRDMAP, ETypeRemoteProtection, CodeBaseBounds, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, mem := streamFixture(t)
			for i := range tt.reads {
				s.ExpectRead(&tt.reads[i])
			}
			var ev Event
			var err error
			segs := segments(t, tt.resp, tt.mulpdu)
			for i, seg := range segs {
				ev, err = s.Receive(seg)
				if err != nil || i == len(segs)-1 {
					break
				}
				if ev.Kind != EventNone {
					t.Fatalf("segment %d of %d reported %v", i, len(segs), ev.Kind)
				}
			}
			if tt.etype == 0xff {
				if err != nil || ev.Kind != EventReadResponse || ev.Read == nil || ev.Read.Got != tt.want {
					t.Fatalf("event %+v, %v; want the read completed with %d octets", ev, err, tt.want)
				}
				if !bytes.Equal(mem[:tt.want], data[:tt.want]) {
					t.Fatal("sink differs")
				}
				if len(s.TakeReads()) != 0 {
					t.Fatal("the completed read is still outstanding")
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Layer != tt.layer || re.Type != tt.etype || re.Code != tt.code {
				t.Fatalf("error %v; want %s", err, ErrorName(tt.layer, tt.etype, tt.code))
			}
			if re.DDPHeader == nil || re.SegmentLen == 0 {
				t.Errorf("error %v carries no segment for the Terminate", re)
			}
			// Final: the stream places nothing more.
			if _, err2 := s.Receive(segments(t, NewWrite(0x100, 0x1000, []byte{9}), 1<<14)[0]); err2 != err {
				t.Fatalf("after the error a Write returned %v", err2)
			}
			if mem[0] == 9 {
				t.Fatal("placed after the stream's error")
			}
		})
	}
}

// UncheckedReadResponses places Read Responses as tagged segments, the
// model of a receiver that keeps no read queue (the hardware's ddp_rx).
func TestStreamUncheckedReadResponses(t *testing.T) {
	s, mem := streamFixture(t)
	s.UncheckedReadResponses = true
	ev, err := s.Receive(segments(t, NewReadResponse(0x100, 0x1010, []byte("abc")), 1<<14)[0])
	if err != nil || ev.Kind != EventReadResponse || ev.Read != nil || !bytes.Equal(mem[0x10:0x13], []byte("abc")) {
		t.Fatalf("event %+v, %v", ev, err)
	}
}

// A delivered Terminate ends the stream: it is reported once, and is the
// error of every later segment.
func TestStreamTerminateEndsStream(t *testing.T) {
	s, _ := streamFixture(t)
	s.Sink().Post(2, make([]byte, MaxTerminateLen), 0)
	term := Terminate{Layer: LayerDDP, EType: ETypeUntaggedBuffer, Code: CodeDDPNoBuffer}
	m, err := NewTerminate(1, &term)
	must(t, err)
	ev, err := s.Receive(segments(t, m, 1<<14)[0])
	if err != nil || ev.Kind != EventTerminate || ev.Terminate.Code != CodeDDPNoBuffer {
		t.Fatalf("event %+v, %v", ev, err)
	}
	_, err = s.Receive(segments(t, NewWrite(0x100, 0x1000, []byte{9}), 1<<14)[0])
	var got *Terminate
	if !errors.As(err, &got) || got.Code != CodeDDPNoBuffer {
		t.Fatalf("after the Terminate: %v", err)
	}
}

// ReceiveV places a Write from its pieces and joins anything else; both
// ways report alike.
func TestStreamReceiveV(t *testing.T) {
	s, mem := streamFixture(t)
	seg := segments(t, NewWrite(0x100, 0x1000, []byte("0123456789")), 1<<14)[0]
	cut := len(seg) - 4
	ev, err := s.ReceiveV([][]byte{seg[:cut], seg[cut:]}, len(seg))
	if err != nil || ev.Kind != EventWrite || string(mem[:10]) != "0123456789" {
		t.Fatalf("Write in pieces: %+v, %v, %q", ev, err, mem[:10])
	}
	buf := make([]byte, 16)
	s.Sink().Post(0, buf, 42)
	seg = segments(t, NewSendSE(1, []byte("hi")), 1<<14)[0]
	ev, err = s.ReceiveV([][]byte{seg[:5], seg[5:]}, len(seg))
	if err != nil || ev.Kind != EventSend || ev.Delivery.ID != 42 || string(buf[:2]) != "hi" {
		t.Fatalf("Send in pieces: %+v, %v", ev, err)
	}
}
