package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 15, 0, 0, 123456789, time.UTC)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

// writeSample writes a small conversation and returns the file and the
// two streams it should hold.
func writeSample(t *testing.T, client, server netip.AddrPort, opts ...Option) (path string, cs, sc []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "sample.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, client, server, opts...)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		fromClient bool
		segment    bool
		payloads   [][]byte
	}{
		{true, false, [][]byte{[]byte("hello")}},
		{false, false, [][]byte{pattern(4000, 1)}}, // cut at MSS
		{true, true, [][]byte{pattern(1, 2), pattern(9000, 3), pattern(70000, 4)}},
		{false, true, [][]byte{{}, pattern(3, 5)}},
		{false, false, nil},
	}
	for i, s := range steps {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if s.segment {
			err = w.Segment(s.fromClient, at, s.payloads...)
		} else {
			err = w.Write(s.fromClient, bytes.Join(s.payloads, nil), at)
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		for _, p := range s.payloads {
			if s.fromClient {
				cs = append(cs, p...)
			} else {
				sc = append(sc, p...)
			}
		}
	}
	if err := w.Close(t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(t0.Add(time.Second)); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Write(true, []byte("late"), t0); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	return path, cs, sc
}

func TestWriterRoundTrip(t *testing.T) {
	for _, fam := range [][2]netip.AddrPort{{cli4, srv4}, {cli6, srv6}} {
		t.Run(fam[0].Addr().String(), func(t *testing.T) {
			path, cs, sc := writeSample(t, fam[0], fam[1], WithISN(0xfffff000, 42))
			convs, err := ReadTCPStreams(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(convs) != 1 {
				t.Fatalf("%d conversations", len(convs))
			}
			c := convs[0]
			if c.Client != fam[0] || c.Server != fam[1] {
				t.Errorf("client %v server %v", c.Client, c.Server)
			}
			if !bytes.Equal(c.ClientToServer.Data, cs) || !bytes.Equal(c.ServerToClient.Data, sc) {
				t.Errorf("streams differ: %d/%d and %d/%d octets", len(c.ClientToServer.Data), len(cs), len(c.ServerToClient.Data), len(sc))
			}
			if c.ClientToServer.ISN != 0xfffff000 || c.ServerToClient.ISN != 42 {
				t.Errorf("ISNs %#x %d", c.ClientToServer.ISN, c.ServerToClient.ISN)
			}
			max := MaxSegmentIPv4
			if fam[0].Addr().Is6() {
				max = MaxSegmentIPv6
			}
			var sizes []int
			for _, s := range c.ClientToServer.Segments {
				sizes = append(sizes, len(s.Payload))
			}
			if want := []int{5, 1, 9000, max, 70000 - max}; !slices.Equal(sizes, want) {
				t.Errorf("client segment sizes %v, want %v", sizes, want)
			}
			sizes = sizes[:0]
			for _, s := range c.ServerToClient.Segments {
				sizes = append(sizes, len(s.Payload))
			}
			if want := []int{1460, 1460, 1080, 3}; !slices.Equal(sizes, want) {
				t.Errorf("server segment sizes %v, want %v", sizes, want)
			}
			if s := c.ClientToServer.Segments[1]; !s.Time.Equal(t0.Add(2 * time.Millisecond)) {
				t.Errorf("segment time %v (nanosecond timestamps expected)", s.Time)
			}
			for _, st := range []*Stream{&c.ClientToServer, &c.ServerToClient} {
				if !st.SYN || !st.FIN || st.RST {
					t.Errorf("SYN %v FIN %v RST %v", st.SYN, st.FIN, st.RST)
				}
			}
		})
	}
}

// checkWithTshark has tshark verify every IP and TCP checksum of the
// capture and look for anything it finds wrong.
func checkWithTshark(t *testing.T, path string, wantFrames int) {
	t.Helper()
	check := []string{"-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"}
	fields := runTshark(t, append([]string{"-r", path, "-T", "fields",
		"-e", "frame.number", "-e", "ip.checksum.status", "-e", "tcp.checksum.status"}, check...)...)
	lines := strings.Split(strings.TrimSpace(fields), "\n")
	if len(lines) != wantFrames {
		t.Errorf("tshark read %d frames, want %d", len(lines), wantFrames)
	}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		// 1 = Good; IPv6 has no header checksum (empty field).
		if len(f) != 3 || (f[1] != "" && f[1] != "1") || f[2] != "1" {
			t.Errorf("tshark checksum status (frame, ip, tcp): %q", l)
		}
	}
	verbose := runTshark(t, append([]string{"-r", path, "-V"}, check...)...)
	for _, bad := range []string{"Bad", "Malformed", "Expert Info (Warning", "Expert Info (Error", "[incorrect", "Unreassembled"} {
		if i := strings.Index(verbose, bad); i >= 0 {
			t.Errorf("tshark -V reports %q: ...%s...", bad, verbose[max(0, i-300):min(len(verbose), i+200)])
		}
	}
	if n := strings.Count(verbose, "[Checksum Status: Good]"); n < wantFrames {
		t.Errorf("%d good TCP checksums, want %d", n, wantFrames)
	}
}

func TestWriterOutputAcceptedByTshark(t *testing.T) {
	for _, fam := range [][2]netip.AddrPort{{cli4, srv4}, {cli6, srv6}} {
		t.Run(fam[0].Addr().String(), func(t *testing.T) {
			path, _, _ := writeSample(t, fam[0], fam[1])
			// 3 handshake + 1+1 + 3+1 + 4+1 + 1+1 + 3 closing frames
			checkWithTshark(t, path, 19)
			conv := runTshark(t, "-r", path, "-q", "-z", "conv,tcp")
			want := fmt.Sprintf("%s:%d", fam[0].Addr(), fam[0].Port())
			if !strings.Contains(conv, want) {
				t.Errorf("tshark conversation table lacks %s:\n%s", want, conv)
			}
		})
	}
}

// TestWriterIWARPDecodes replays the siw rping streams through a Writer,
// one Segment call per original segment so that FPDUs stay aligned, and
// checks that tshark decodes the result to the same iWARP messages as
// the original capture.
func TestWriterIWARPDecodes(t *testing.T) {
	orig := requireSiwCapture(t)
	convs, err := ReadTCPStreams(orig)
	if err != nil || len(convs) != 1 {
		t.Fatalf("ReadTCPStreams: %d conversations, %v", len(convs), err)
	}
	c := convs[0]
	type ev struct {
		fromClient bool
		s          Segment
	}
	var evs []ev
	for _, fromClient := range []bool{true, false} {
		for _, s := range c.Stream(fromClient).Segments {
			if !s.Retransmission {
				evs = append(evs, ev{fromClient, s})
			}
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return a.s.Time.Compare(b.s.Time) })

	path := filepath.Join(t.TempDir(), "replay.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, c.Client, c.Server, WithISN(c.ClientToServer.ISN, c.ServerToClient.ISN))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := w.Segment(e.fromClient, e.s.Time, e.s.Payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(evs[len(evs)-1].s.Time); err != nil {
		t.Fatal(err)
	}
	fields := []string{"-Y", "iwarp_mpa", "-T", "fields", "-e", "tcp.srcport", "-e", "iwarp_mpa.rev",
		"-e", "iwarp_mpa.privatedata", "-e", "iwarp_mpa.ulpdulength", "-e", "iwarp_ddp.tagged_flag",
		"-e", "iwarp_ddp.qn", "-e", "iwarp_ddp.msn", "-e", "iwarp_rdma.opcode", "-e", "_ws.col.Info"}
	want := runTshark(t, append([]string{"-r", orig}, fields...)...)
	got := runTshark(t, append([]string{"-r", path}, fields...)...)
	if n := strings.Count(want, "\n"); n != 23 {
		t.Errorf("tshark finds %d iWARP frames in the original, want 23", n)
	}
	if got != want {
		t.Errorf("tshark decodes the replay differently.\noriginal:\n%s\nreplay:\n%s", want, got)
	}
	checkWithTshark(t, path, 3+2*len(evs)+3)
}

func TestNewWriterErrors(t *testing.T) {
	var b bytes.Buffer
	cases := []struct {
		name           string
		client, server netip.AddrPort
		opts           []Option
	}{
		{"mixed families", cli4, srv6, nil},
		{"same endpoint", cli4, cli4, nil},
		{"invalid", netip.AddrPort{}, srv4, nil},
		{"MSS 0", cli4, srv4, []Option{WithMSS(0)}},
		{"MSS too large", cli4, srv4, []Option{WithMSS(MaxSegmentIPv4 + 1)}},
		{"bad MAC", cli4, srv4, []Option{WithMACs(net.HardwareAddr{1}, net.HardwareAddr{2})}},
	}
	for _, c := range cases {
		if _, err := NewWriter(&b, c.client, c.server, c.opts...); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	// IPv4-mapped addresses count as IPv4, and the v6 limit allows more.
	if _, err := NewWriter(&b, netip.MustParseAddrPort("[::ffff:192.0.2.1]:1"), srv4); err != nil {
		t.Errorf("mapped IPv4: %v", err)
	}
	if w, err := NewWriter(&b, cli6, srv6, WithMSS(MaxSegmentIPv6)); err != nil || w.MSS() != MaxSegmentIPv6 || w.MaxSegment() != MaxSegmentIPv6 {
		t.Errorf("IPv6 MSS %d: %v", MaxSegmentIPv6, err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriterStickyError(t *testing.T) {
	w, err := NewWriter(&failWriter{n: 100}, cli4, srv4)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(true, make([]byte, 10000), t0); err != nil {
		t.Fatal(err) // still buffered
	}
	if err := w.Flush(); err == nil {
		t.Fatal("Flush: no error")
	}
	if err := w.Write(true, []byte("x"), t0); err == nil || w.Err() == nil {
		t.Error("no sticky error")
	}
	if err := w.Close(t0); err == nil {
		t.Error("Close: no error")
	}
}

// An empty conversation still gets a handshake and a close.
func TestWriterEmpty(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, cli4, srv4)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Open(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(time.Time{}); err != nil {
		t.Fatal(err)
	}
	convs, err := ReadTCPStreamsFrom(&b)
	if err != nil || len(convs) != 1 || !convs[0].ClientToServer.FIN || !convs[0].ServerToClient.SYN {
		t.Fatalf("%d conversations, %v", len(convs), err)
	}
	if s := convs[0].ClientToServer; len(s.Data) != 0 || len(s.Segments) != 0 {
		t.Errorf("data %q", s.Data)
	}
}

// echoSession runs a request/response exchange over a connected pair,
// each side in its own goroutine, and returns what each side sent.
func echoSession(t *testing.T, client, server net.Conn, rounds int) (cs, sc []byte) {
	t.Helper()
	var wg sync.WaitGroup
	var srvSent []byte
	var srvErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				reply := append([]byte("re:"), buf[:n]...)
				srvSent = append(srvSent, reply...)
				if _, err := server.Write(reply); err != nil {
					srvErr = err
					return
				}
			}
			if err != nil {
				if err != io.EOF {
					srvErr = err
				}
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for i := range rounds {
		msg := pattern(1+i*397%5000, byte(i))
		if _, err := client.Write(msg); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, msg...)
		want := 3 + len(msg)
		for got := 0; got < want; {
			n, err := client.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if srvErr != nil {
		t.Fatal(srvErr)
	}
	return cs, srvSent
}

// tcpPair returns the two ends of a TCP connection over loopback.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(acc)
			return
		}
		acc <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-acc
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestTap(t *testing.T) {
	pairs := map[string]func(t *testing.T) (net.Conn, net.Conn){
		"pipe": func(*testing.T) (net.Conn, net.Conn) { return net.Pipe() },
		"tcp":  tcpPair,
	}
	for name, pair := range pairs {
		t.Run(name, func(t *testing.T) {
			c, s := pair(t)
			path := filepath.Join(t.TempDir(), "tap.pcap")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			w, err := NewWriter(f, cli4, srv4)
			if err != nil {
				t.Fatal(err)
			}
			cs, sc := echoSession(t, w.Tap(c, true), w.Tap(s, false), 40)
			if err := w.Close(time.Time{}); err != nil {
				t.Fatal(err)
			}
			convs, err := ReadTCPStreams(path)
			if err != nil || len(convs) != 1 {
				t.Fatalf("%d conversations, %v", len(convs), err)
			}
			if !bytes.Equal(convs[0].ClientToServer.Data, cs) || !bytes.Equal(convs[0].ServerToClient.Data, sc) {
				t.Errorf("recorded streams differ from what was sent")
			}
			for _, st := range []*Stream{&convs[0].ClientToServer, &convs[0].ServerToClient} {
				for _, s := range st.Segments {
					if len(s.Payload) > w.MSS() {
						t.Errorf("tap segment of %d octets exceeds MSS", len(s.Payload))
					}
				}
			}
			if name == "tcp" {
				checkWithTshark(t, path, countFrames(t, path))
			}
		})
	}
}

// TestTapOrder checks that in a strict ping-pong each reply is captured
// after the request it answers, on either kind of connection.
func TestTapOrder(t *testing.T) {
	c, s := net.Pipe()
	var b bytes.Buffer
	w, err := NewWriter(&b, cli6, srv6)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := echoSession(t, w.Tap(c, true), w.Tap(s, false), 25)
	if err := w.Close(time.Time{}); err != nil {
		t.Fatal(err)
	}
	convs, err := ReadTCPStreamsFrom(&b)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%d conversations, %v", len(convs), err)
	}
	if !bytes.Equal(convs[0].ClientToServer.Data, cs) {
		t.Fatal("client stream differs")
	}
	// Request i ends at a known client offset, and reply i starts at a
	// known server offset: the reply must be captured no earlier than
	// the last segment of the request.
	segAt := func(st *Stream, off int64) Segment {
		for _, s := range st.Segments {
			if s.Offset <= off && off < s.Offset+int64(len(s.Payload)) {
				return s
			}
		}
		t.Fatalf("no segment holds offset %d", off)
		return Segment{}
	}
	var reqEnd, repStart int64
	for i := range 25 {
		n := int64(1 + i*397%5000) // as in echoSession
		reqEnd += n
		req := segAt(&convs[0].ClientToServer, reqEnd-1)
		rep := segAt(&convs[0].ServerToClient, repStart)
		if rep.Offset != repStart {
			t.Errorf("reply %d does not start a segment", i)
		}
		if rep.Time.Before(req.Time) {
			t.Errorf("reply %d captured at %v, before its request at %v", i, rep.Time, req.Time)
		}
		repStart += 3 + n
	}
}

func TestTapDuplex(t *testing.T) {
	c, s := tcpPair(t)
	var b bytes.Buffer
	w, err := NewWriter(&b, cli4, srv4, WithMSS(100))
	if err != nil {
		t.Fatal(err)
	}
	// Only the server end is ours.
	cs, sc := echoSession(t, c, w.TapDuplex(s, false), 10)
	if err := w.Close(time.Time{}); err != nil {
		t.Fatal(err)
	}
	convs, err := ReadTCPStreamsFrom(&b)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%d conversations, %v", len(convs), err)
	}
	if !bytes.Equal(convs[0].ClientToServer.Data, cs) || !bytes.Equal(convs[0].ServerToClient.Data, sc) {
		t.Errorf("recorded streams differ from what was sent")
	}
	for _, s := range convs[0].ClientToServer.Segments {
		if len(s.Payload) > 100 {
			t.Errorf("segment of %d octets with MSS 100", len(s.Payload))
		}
	}
}

// A Write that fails after being recorded is followed by a RST.
func TestTapAbort(t *testing.T) {
	c, s := net.Pipe()
	s.Close()
	var b bytes.Buffer
	w, err := NewWriter(&b, cli4, srv4)
	if err != nil {
		t.Fatal(err)
	}
	tc := w.Tap(c, true)
	if _, err := tc.Write([]byte("lost")); err == nil {
		t.Fatal("write to a closed pipe succeeded")
	}
	_, _ = tc.Write([]byte("after the reset"))
	if err := w.Close(time.Time{}); err != nil {
		t.Fatal(err)
	}
	convs, err := ReadTCPStreamsFrom(&b)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%d conversations, %v", len(convs), err)
	}
	st := convs[0].ClientToServer
	if !st.RST || st.FIN || string(st.Data) != "lost" {
		t.Errorf("RST %v FIN %v data %q", st.RST, st.FIN, st.Data)
	}
}

func countFrames(t *testing.T, path string) int {
	t.Helper()
	return strings.Count(runTshark(t, "-r", path, "-T", "fields", "-e", "frame.number"), "\n")
}

// BenchmarkWriterSegment measures the cost of recording one FPDU-sized
// segment and its ACK.
func BenchmarkWriterSegment(b *testing.B) {
	w, err := NewWriter(io.Discard, cli4, srv4)
	if err != nil {
		b.Fatal(err)
	}
	p := pattern(1024, 0)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := w.Segment(i%2 == 0, t0, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadSiwRping measures reading the siw capture.
func BenchmarkReadSiwRping(b *testing.B) {
	data, err := os.ReadFile(siwCapture)
	if err != nil {
		b.Fatalf("the siw rping capture is missing: %v", err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadTCPStreamsFrom(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
