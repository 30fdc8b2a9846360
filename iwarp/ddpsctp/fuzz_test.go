package ddpsctp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"
)

func FuzzParsePayload(f *testing.F) {
	for _, c := range goldenCases(f) {
		wire, _ := c.p.Append(nil)
		f.Add(c.p.PPID, wire)
	}
	f.Add(PPIDControl, []byte{0, 0})
	f.Add(PPIDControl, []byte{0, 1, 0, 9})
	f.Add(uint32(0x12), []byte{0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, ppid uint32, b []byte) {
		p, err := ParsePayload(ppid, b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.PPID != ppid {
				t.Fatalf("ParsePayload(%#x, % x): %v is not a *FormatError", ppid, b, err)
			}
			return
		}
		// A payload that parses is one the layer could have sent,
		// octet for octet.
		got, err := p.Append(nil)
		if err != nil {
			t.Fatalf("Append(ParsePayload(% x)): %v", b, err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("round trip of % x gave % x", b, got)
		}
		if len(p.PrivateData) > MaxPrivateData {
			t.Fatalf("accepted %d octets of private data", len(p.PrivateData))
		}
	})
}

// FuzzSession feeds a passive Conn arbitrary messages: its input is a list
// of records, each a stream octet, a PPID octet (0 is 0x10, 1 is 0x11,
// anything else itself), an ordered flag octet, a length octet and that
// many octets. Whatever comes, the layer must not panic or hang, must end
// sessions only with its typed errors, and must hand DDP segments over in
// DDP-SSN order without gaps.
func FuzzSession(f *testing.F) {
	rec := func(stream, ppid byte, data ...byte) []byte {
		return append([]byte{stream, ppid, 0, byte(len(data))}, data...)
	}
	f.Add(bytes.Join([][]byte{
		rec(1, 1, 0, 0, 0, 1, 'h', 'i'),
		rec(1, 0, 0, 2, 0xaa),
		rec(1, 0, 0, 1, 0xbb),
		rec(1, 1, 0, 3, 0, 4),
	}, nil))
	f.Add(rec(2, 0, 0, 0, 1))
	f.Add(bytes.Join([][]byte{rec(3, 1, 0, 0, 0, 1), rec(3, 1, 0, 0, 0, 1)}, nil))
	f.Add(bytes.Join([][]byte{rec(4, 1, 0, 0, 0, 1), rec(4, 0, 0x80, 1, 1)}, nil))
	f.Add(bytes.Join([][]byte{rec(5, 1, 0, 0, 0, 9)}, nil))
	// Segments ahead of a gap past the bound on held octets.
	ahead := func(ssn byte) []byte { return rec(6, 0, append([]byte{0, ssn}, bytes.Repeat([]byte{ssn}, 200)...)...) }
	f.Add(bytes.Join([][]byte{rec(6, 1, 0, 0, 0, 1), ahead(3), ahead(4), ahead(5), ahead(2)}, nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		ind := AdaptationDDP
		// The least MULPDU (516) and the least bound, which a few
		// records pass.
		peer, local := Pipe(PipeConfig{Adaptation: [2]*uint32{&ind, &ind}, MaxMessage: MinMULPDU + SSNLen + bundleReserve})
		// The association keeps receive window books, as package
		// sctp's does.
		w := &chargedPipe{PipeEnd: local}
		c, err := New(w, Config{MaxPending: 4, MaxHeld: MinMULPDU})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for len(in) >= 4 {
			stream, ppid, ordered, n := uint16(in[0]%8), uint32(in[1]), in[2]&1 == 1, int(in[3])
			switch ppid {
			case 0:
				ppid = PPIDSegment
			case 1:
				ppid = PPIDControl
			}
			in = in[4:]
			data := in[:min(n, len(in))]
			in = in[len(data):]
			if ordered {
				peer.SendOrdered(stream, ppid, data)
			} else {
				peer.SendUnordered(context.Background(), stream, ppid, data)
			}
		}
		// A last Initiate on a stream the input does not use: once the
		// layer has it, it has handled everything before it (one reader,
		// in order; this pipe does not reorder).
		b, _ := (&Payload{PPID: PPIDControl, Func: FuncInitiate}).Append(nil)
		peer.SendUnordered(context.Background(), sentinelStream, PPIDControl, b)
		deadline := time.Now().Add(5 * time.Second)
		for {
			c.mu.Lock()
			done := c.streams[sentinelStream] != nil
			c.mu.Unlock()
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the layer did not take the input within 5 s")
			}
			time.Sleep(50 * time.Microsecond)
		}
		if h := c.Held(); h > MinMULPDU {
			t.Fatalf("the layer holds %d octets, past its bound of %d", h, MinMULPDU)
		}
		// What stays charged to the window is what waits for Receive
		// (the sentinel's credit may still be on its way).
		books := func(when string) {
			for deadline := time.Now().Add(5 * time.Second); w.window() != c.Queued(); {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %d octets charged to the window, %d waiting for Receive", when, w.window(), c.Queued())
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
		books("after the input")
		// Accept every request and read what each session got, without
		// waiting: a read deadline in the past returns what is there.
		ctx := context.Background()
		for {
			var r *Request
			select {
			case r = <-c.pending:
			default:
			}
			if r == nil {
				break
			}
			s, err := r.Accept(ctx, nil)
			if err != nil {
				continue
			}
			s.SetReadDeadline(time.Unix(1, 0))
			for {
				_, err := s.Receive(ctx)
				if err == nil {
					continue
				}
				var se *SequenceError
				var he *HeldError
				if !IsDeadline(err) && !errors.As(err, &se) && !errors.As(err, &he) && !errors.Is(err, io.EOF) {
					t.Fatalf("stream %d ended with %T %v", s.Stream(), err, err)
				}
				break
			}
		}
		books("after every session was read")
		if q := c.Queued(); q != 0 {
			t.Fatalf("%d octets wait for Receive after every session was read", q)
		}
	})
}

// sentinelStream is FuzzSession's last Initiate's stream (the input's are
// 0 to 7).
const sentinelStream = 15

// TestSessionSSNOrder: segments sent on a reordering pipe come out in
// DDP-SSN order, whatever order SCTP delivered them in.
func TestSessionSSNOrder(t *testing.T) {
	a, b := pair(t, PipeConfig{Reorder: 8, Seed: 3})
	sa, sb := open(t, a, b, 2)
	ctx := context.Background()
	const n = 300
	go func() {
		for i := range n {
			var seg [4]byte
			binary.BigEndian.PutUint32(seg[:], uint32(i))
			if err := sa.Send(ctx, seg[:]); err != nil {
				t.Error(err)
				return
			}
		}
		sa.Close(ctx)
	}()
	for i := range n {
		seg, err := sb.Receive(ctx)
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
		if got := binary.BigEndian.Uint32(seg); got != uint32(i) {
			t.Fatalf("segment %d carries %d: out of DDP-SSN order", i, got)
		}
	}
	if _, err := sb.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the Terminate: %v, want EOF", err)
	}
}
