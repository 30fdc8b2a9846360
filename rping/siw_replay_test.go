package rping

// Replays of a real siw conversation (../shared/testdata/
// siw-rping-default.pcap: rdma-core's rping -c -C 3 -v against rping -s,
// both over Linux siw) against this package's server and client. The
// replayer plays one side's captured FPDUs over real TCP, in the capture's
// order, and checks that the stack on the other side answers with the very
// octets siw sent, apart from the addresses and STags each side chose for
// its own buffers: a Read Request's sink STag and TO (the server's), and the
// address and STag in the client's advertisements. The replayer maps the
// captured values of those to the live ones before sending FPDUs that refer
// to them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/openrnic/rnic/internal/siwtrace"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/verbs"
)

const siwCapture = "../../shared/testdata/siw-rping-default.pcap"

func loadTrace(t *testing.T) *siwtrace.Trace {
	t.Helper()
	tr, err := siwtrace.Load(siwCapture)
	if err != nil {
		t.Fatalf("%v (the capture ships in ../shared/testdata)", err)
	}
	return tr
}

// siwConfig is the configuration that makes the stack's startup frame the
// one siw's rping sent: revision 2, IRD and ORD 1, no CRC, no markers.
func siwConfig(tr *siwtrace.Trace) verbs.QPConfig {
	return verbs.QPConfig{MPA: mpa.Config{Rev: tr.Request.Rev, NoCRC: !tr.Request.CRC, IRD: tr.Request.Params.IRD, ORD: tr.Request.Params.ORD}}
}

// liveFPDU is one FPDU read from the stack under test.
type liveFPDU struct {
	off   int // in the live Full Operation stream
	ulpdu []byte
}

// reader reads the live peer's FPDUs in order and keeps every octet.
type reader struct {
	ch   chan liveFPDU
	err  error // valid once ch is closed
	full bytes.Buffer
}

func newReader(c net.Conn) *reader {
	r := &reader{ch: make(chan liveFPDU, 64)}
	go func() {
		defer close(r.ch)
		rx := mpa.NewReceiver(false, false, 0)
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			r.full.Write(buf[:n])
			if ferr := rx.Feed(buf[:n], func(seq uint32, u []byte) error {
				r.ch <- liveFPDU{int(seq), bytes.Clone(u)}
				return nil
			}); ferr != nil {
				r.err = ferr
				return
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					r.err = err
				}
				return
			}
		}
	}()
	return r
}

func (r *reader) next(t *testing.T, what string) liveFPDU {
	t.Helper()
	select {
	case f, ok := <-r.ch:
		if !ok {
			t.Fatalf("the stack's stream ended (%v) before %s", r.err, what)
		}
		return f
	case <-time.After(10 * time.Second):
		t.Fatalf("no FPDU from the stack for %s", what)
	}
	return liveFPDU{}
}

// chosen is a field one side chose for itself: its position in the ULPDU.
type chosen struct {
	off, n int
	name   string
}

// chosenFields lists the octets of a ULPDU that hold values its sender
// chose for its own buffers.
func chosenFields(seg rdmap.Segment, fromClient bool) []chosen {
	switch {
	case seg.Opcode == rdmap.OpReadRequest && !fromClient:
		// Sink STag and sink TO follow the untagged header.
		return []chosen{{ddp.UntaggedHeaderLen, 4, "sink STag"}, {ddp.UntaggedHeaderLen + 4, 8, "sink TO"}}
	case seg.Opcode == rdmap.OpSend && fromClient && len(seg.Payload) == AdvLen:
		return []chosen{{ddp.UntaggedHeaderLen, 8, "advertised address"}, {ddp.UntaggedHeaderLen + 8, 4, "advertised STag"}}
	}
	return nil
}

// mapping translates values siw chose to the values the live stack chose.
type mapping map[uint64]uint64

func (m mapping) learn(t *testing.T, name string, captured, live []byte) {
	t.Helper()
	c, l := be(captured), be(live)
	if old, ok := m[c]; ok && old != l {
		t.Fatalf("%s %#x stands for both %#x and %#x", name, c, old, l)
	}
	m[c] = l
}

// rewrite replaces, in a captured ULPDU about to be replayed, the STag and
// TO fields that refer to the live side's buffers.
func (m mapping) rewrite(t *testing.T, u []byte, seg rdmap.Segment) []byte {
	t.Helper()
	u = bytes.Clone(u)
	var fields []chosen
	switch seg.Opcode {
	case rdmap.OpWrite, rdmap.OpReadResponse:
		fields = []chosen{{2, 4, "STag"}, {6, 8, "TO"}}
	case rdmap.OpReadRequest:
		// RFC 5040 4.4: sink STag, sink TO, size, then the Data Source
		// the client advertised: source STag and source TO.
		fields = []chosen{{ddp.UntaggedHeaderLen + 16, 4, "source STag"}, {ddp.UntaggedHeaderLen + 20, 8, "source TO"}}
	}
	for _, f := range fields {
		v, ok := m[be(u[f.off:f.off+f.n])]
		if !ok {
			t.Fatalf("replaying %v: its %s %#x was never chosen by the stack", seg.Opcode, f.name, be(u[f.off:f.off+f.n]))
		}
		put(u[f.off:f.off+f.n], v)
	}
	return u
}

func be(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

func put(b []byte, v uint64) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// replay plays the side of tr given by asClient over c (whose startup
// frames have been exchanged), and checks every FPDU the stack sends.
func replay(t *testing.T, tr *siwtrace.Trace, c net.Conn, r *reader, asClient bool) {
	t.Helper()
	m := mapping{}
	fr := mpa.NewFramer(false, false, 0)
	var wire []byte
	for i, f := range tr.FPDUs {
		what := fmt.Sprintf("FPDU %d (%v from the %s)", i, f.Seg.Opcode, map[bool]string{true: "client", false: "server"}[f.FromClient])
		if f.FromClient == asClient {
			u := m.rewrite(t, f.ULPDU, f.Seg)
			var err error
			wire, err = fr.AppendFPDU(wire[:0], u, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(wire); err != nil {
				t.Fatalf("replaying %s: %v", what, err)
			}
			continue
		}
		got := r.next(t, what)
		if got.off != f.Offset {
			t.Errorf("%s: the stack's FPDU starts at offset %d, siw's at %d", what, got.off, f.Offset)
		}
		want := f.ULPDU
		if len(got.ulpdu) != len(want) {
			t.Fatalf("%s: the stack sent a %d-octet ULPDU, siw %d octets\n got % x\nwant % x", what, len(got.ulpdu), len(want), got.ulpdu, want)
		}
		masked := bytes.Clone(got.ulpdu)
		for _, ch := range chosenFields(f.Seg, f.FromClient) {
			m.learn(t, ch.name, want[ch.off:ch.off+ch.n], got.ulpdu[ch.off:ch.off+ch.n])
			copy(masked[ch.off:ch.off+ch.n], want[ch.off:ch.off+ch.n])
		}
		if !bytes.Equal(masked, want) {
			t.Fatalf("%s differs from siw's\n got % x\nwant % x", what, got.ulpdu, want)
		}
	}
}

// compareStreams checks the stack's whole Full Operation stream against
// siw's, octet for octet, with the chosen fields taken from siw's.
func compareStreams(t *testing.T, tr *siwtrace.Trace, live []byte, fromClient bool) {
	t.Helper()
	want := tr.FullOf(fromClient)
	live = bytes.Clone(live)
	for _, f := range tr.Direction(fromClient) {
		for _, ch := range chosenFields(f.Seg, fromClient) {
			o := f.Offset + mpa.HeaderLen + ch.off
			if o+ch.n <= len(live) {
				copy(live[o:o+ch.n], want[o:o+ch.n])
			}
		}
	}
	if !bytes.Equal(live, want) {
		n := min(len(live), len(want))
		i := 0
		for i < n && live[i] == want[i] {
			i++
		}
		t.Fatalf("the stack sent %d octets after its startup frame, siw %d; first difference at %d", len(live), len(want), i)
	}
}

// stackResult is how this package's side of a replay ended.
type stackResult struct {
	st  *Stats
	err error
	out string // its -v output
}

// startStack connects this package's server (stackIsClient false) or client
// over loopback TCP and returns the replayer's end of the connection. The
// stack runs in rping's siw configuration, 64-octet pings, 3 rounds.
func startStack(t *testing.T, ctx context.Context, tr *siwtrace.Trace, stackIsClient bool) (net.Conn, <-chan stackResult) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The listener is closed once its Accept has returned, not when this
	// function does: a connection still in the listen backlog when the
	// listener closes is reset, and the replay's first write fails.
	t.Cleanup(func() { ln.Close() })
	done := make(chan stackResult, 1)
	run := func(c net.Conn) {
		var out bytes.Buffer
		cfg := Config{Size: 64, Count: 3, Validate: true, Verbose: &out, QP: siwConfig(tr)}
		var res stackResult
		if stackIsClient {
			res.st, res.err = Client(ctx, nil, c, cfg)
		} else {
			res.st, res.err = Serve(ctx, nil, c, cfg)
		}
		res.out = out.String()
		done <- res
	}
	var c net.Conn
	if stackIsClient {
		go func() {
			sc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				done <- stackResult{err: err}
				return
			}
			run(sc)
		}()
		c, err = ln.Accept()
		ln.Close()
	} else {
		go func() {
			sc, err := ln.Accept()
			ln.Close()
			if err != nil {
				done <- stackResult{err: err}
				return
			}
			run(sc)
		}()
		c, err = net.Dial("tcp", ln.Addr().String())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, done
}

// expectFrame reads the stack's startup frame and requires siw's octets.
func expectFrame(t *testing.T, c net.Conn, want []byte, what string) {
	t.Helper()
	got := make([]byte, len(want))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the stack's %s: %v", what, err)
	}
	c.SetReadDeadline(time.Time{})
	if !bytes.Equal(got, want) {
		t.Fatalf("the stack's %s differs from siw's\n got % x\nwant % x", what, got, want)
	}
}

// TestReplaySiwClientAgainstServer plays siw's rping client from the
// capture against this package's server.
func TestReplaySiwClientAgainstServer(t *testing.T) {
	tr := loadTrace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, done := startStack(t, ctx, tr, false)
	if _, err := c.Write(tr.RequestRaw); err != nil {
		t.Fatal(err)
	}
	expectFrame(t, c, tr.ReplyRaw, "Reply")
	r := newReader(c)
	replay(t, tr, c, r, true)
	// siw's client disconnects after its three rounds; so does the replay.
	c.(*net.TCPConn).CloseWrite()
	res := <-done
	if res.err != nil {
		t.Fatalf("server: %v", res.err)
	}
	for range r.ch {
		t.Error("the stack sent an FPDU after the last round")
	}
	compareStreams(t, tr, r.full.Bytes(), false)
	if res.st.Rounds != 3 || res.st.Verified != 3*64 {
		t.Errorf("server: %d rounds, %d octets verified; want 3 and 192", res.st.Rounds, res.st.Verified)
	}
	t.Logf("server output:\n%s", res.out)
}

// TestReplaySiwServerAgainstClient plays siw's rping server from the
// capture against this package's client.
func TestReplaySiwServerAgainstClient(t *testing.T) {
	tr := loadTrace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, done := startStack(t, ctx, tr, true)
	expectFrame(t, c, tr.RequestRaw, "Request")
	if _, err := c.Write(tr.ReplyRaw); err != nil {
		t.Fatal(err)
	}
	r := newReader(c)
	replay(t, tr, c, r, false)
	// The client closes after its rounds, as siw's did: the stream ends,
	// and the replayed server closes its half as rping's server does.
	for range r.ch {
		t.Error("the stack sent an FPDU after the last round")
	}
	c.(*net.TCPConn).CloseWrite()
	res := <-done
	if res.err != nil {
		t.Fatalf("client: %v", res.err)
	}
	if r.err != nil {
		t.Errorf("the client's stream ended with %v", r.err)
	}
	compareStreams(t, tr, r.full.Bytes(), true)
	if res.st.Rounds != 3 || res.st.Verified != 3*64 {
		t.Errorf("client: %d rounds, %d octets verified; want 3 and 192", res.st.Rounds, res.st.Verified)
	}
	// rping -v prints what the server wrote back: siw's Write payloads.
	var want bytes.Buffer
	for _, f := range tr.Direction(false) {
		if f.Seg.Opcode == rdmap.OpWrite {
			fmt.Fprintf(&want, "ping data: %s\n", cstring(f.Seg.Payload))
		}
	}
	if res.out != want.String() {
		t.Errorf("client output %q, want %q", res.out, want.String())
	}
	t.Logf("client output:\n%s", res.out)
}

// The capture's ping data is what PingData generates: the client's Read
// Responses carry rping's buffer, octet for octet.
func TestSiwPingDataMatches(t *testing.T) {
	tr := loadTrace(t)
	round := 0
	for _, f := range tr.Direction(true) {
		if f.Seg.Opcode != rdmap.OpReadResponse {
			continue
		}
		if want := PingData(round, len(f.Seg.Payload)); !bytes.Equal(f.Seg.Payload, want) {
			t.Errorf("round %d: siw's client sent %q, PingData gives %q", round, f.Seg.Payload, want)
		}
		round++
	}
	if round != 3 {
		t.Fatalf("%d Read Responses, want 3", round)
	}
	// And the server's "go ahead" Sends are rping's zeroed send buffer.
	for _, f := range tr.Direction(false) {
		if f.Seg.Opcode == rdmap.OpSend && !bytes.Equal(f.Seg.Payload, make([]byte, AdvLen)) {
			t.Errorf("siw's server sent go-ahead % x", f.Seg.Payload)
		}
	}
}
