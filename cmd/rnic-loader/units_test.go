package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// One size parser for every size flag: SI units are decimal, IEC units
// binary, and nothing negative, fractional or unknown gets through.
func TestParseOctets(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"4096", 4096}, {"64K", 64000}, {"64k", 64000}, {"64KB", 64000}, {"64kB", 64000},
		{"64KiB", 65536}, {"64kib", 65536}, {"64Ki", 65536}, {"1MB", 1000000}, {"1MiB", 1 << 20},
		{"2GiB", 2 << 30}, {"2G", 2e9}, {"1.5KiB", 1536}, {"100B", 100}, {"0", 0}, {" 7 ", 7}, {"1 MiB", 1 << 20},
	} {
		got, err := parseOctets(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseOctets(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "-1", "-1KiB", "64x", "K", "1.1B", "0.5", "1e3", "9999999999999999999", "10000000TiB", "1..5K", "+"} {
		if got, err := parseOctets(in); err == nil {
			t.Errorf("parseOctets(%q) = %d, want an error", in, got)
		} else if !strings.Contains(err.Error(), sizeExamples) {
			t.Errorf("parseOctets(%q): %v does not say what a size looks like", in, err)
		}
	}
}

func TestSayOctets(t *testing.T) {
	for n, want := range map[int64]string{
		1: "1 octet", 100: "100 octets", 64000: "64000 octets (64 kB)", 65536: "65536 octets (64 KiB)",
		64000000: "64000000 octets (64 MB)", 1 << 30: "1073741824 octets (1 GiB)", 1000001: "1000001 octets (1.0 MB)",
		65535: "65535 octets (65.5 kB)", 640000: "640000 octets (640 kB)", 4096000: "4096000 octets (4096 kB)",
		2 << 20: "2097152 octets (2 MiB)", 3 << 30: "3221225472 octets (3 GiB)",
	} {
		if got := sayOctets(n); got != want {
			t.Errorf("sayOctets(%d) = %q, want %q", n, got, want)
		}
	}
}

// A size flag's range error names the range.
func TestSizeValueRange(t *testing.T) {
	v := newSize(64, 26, 65535, "ping size")
	if err := v.Set("4KiB"); err != nil || v.Int64() != 4096 {
		t.Fatalf("Set(4KiB): %v, %d", err, v.Int64())
	}
	err := v.Set("64KiB")
	if err == nil || err.Error() != "ping size: 65536 octets (64 KiB) is out of range: want 26 octets to 65535 octets (65.5 kB)" {
		t.Fatalf("Set(64KiB): %v", err)
	}
	if v.Int64() != 4096 {
		t.Fatalf("a refused value changed the flag to %d", v.Int64())
	}
	// String says the value as a flag takes it back.
	for _, n := range []int64{26, 999, 4096, 65535, 64000, 1 << 30, 1000001} {
		w := newSize(n, 0, 1<<40, "x")
		back, err := parseOctets(w.String())
		if err != nil || back != n {
			t.Errorf("String() of %d is %q, which parses as %d, %v", n, w.String(), back, err)
		}
	}
	if s := newSize(256<<20, 0, 1<<40, "x").String(); s != "256MiB" {
		t.Errorf("String() of 256 MiB is %q", s)
	}
}

// A name that does not resolve is reported as such, not as a server that
// might not be listening (the test makes the error: no lookup leaves the
// machine).
func TestDialErrorWords(t *testing.T) {
	ctx := context.Background()
	dns := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}
	if got := dialError(ctx, "nowhere.invalid:7174", dns, "x").Error(); !strings.Contains(got, "cannot resolve the host of nowhere.invalid:7174: no such host") || strings.Contains(got, "listening") {
		t.Errorf("DNS failure: %q", got)
	}
	to := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	if got := dialError(ctx, "10.0.0.1:7174", to, "x").Error(); !strings.Contains(got, "no answer from 10.0.0.1:7174: the connection timed out") {
		t.Errorf("timeout: %q", got)
	}
	ref := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	if got := dialError(ctx, "127.0.0.1:1", ref, "rnic-loader bench --listen 127.0.0.1:1").Error(); !strings.Contains(got, "refused the connection: nothing listens on that port; start a server there (rnic-loader bench --listen 127.0.0.1:1)") {
		t.Errorf("refused: %q", got)
	}
	unreach := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}
	if got := dialError(ctx, "h:1", unreach, "x").Error(); !strings.Contains(got, "h:1 is unreachable") {
		t.Errorf("unreachable: %q", got)
	}
}

// A timeout and an interrupt are told apart by the context's cause.
func TestEndCauses(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	ctx, stop := withTimeout(parent, time.Hour)
	defer stop()
	cancel(&interrupted{sig: os.Interrupt})
	if !wasInterrupted(ctx) {
		t.Fatalf("an interrupt of the parent: cause %v", context.Cause(ctx))
	}
	ctx2, stop2 := withTimeout(context.Background(), time.Nanosecond)
	defer stop2()
	<-ctx2.Done()
	if wasInterrupted(ctx2) || endCause(ctx2) == nil || endCause(ctx2).Error() != "gave up after --timeout 1ns (raise it, or give --timeout 0 for no limit)" {
		t.Fatalf("a timeout: cause %v", endCause(ctx2))
	}
	ctx3, stop3 := withTimeout(context.Background(), 0)
	defer stop3()
	if _, ok := ctx3.Deadline(); ok || ctx3.Err() != nil {
		t.Fatal("--timeout 0 set a deadline")
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The progress line speaks Gbit/s, the unit of the summary.
func TestProgressUnit(t *testing.T) {
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = time.Millisecond
	var out syncBuf
	p := newProgress(&out, "iWARP write", 1<<30)
	p.add(1 << 29)
	for !strings.Contains(out.String(), "\n") {
		time.Sleep(time.Millisecond)
	}
	p.finish()
	line := strings.SplitN(out.String(), "\n", 2)[0]
	if !strings.HasPrefix(line, "iWARP write: 512 MiB of 1 GiB (50%), ") || !strings.HasSuffix(line, " Gbit/s") {
		t.Fatalf("progress line %q", line)
	}
}

// readSizes records the sizes of the reads asked of a connection.
type readSizes struct {
	net.Conn
	mu sync.Mutex
	// asked and got are the lengths of the reads' buffers and what they
	// returned.
	asked, got []int
	// writes records the sizes of the writes made.
	writes []int
}

func (c *readSizes) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.asked = append(c.asked, len(p))
	c.got = append(c.got, n)
	c.mu.Unlock()
	return n, err
}

func (c *readSizes) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, len(p))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// The raw TCP baseline moves and verifies the same octets as before, but
// in large system calls whatever the message size: the receiver asks for
// rawBatch octets at a time (it used to read one message at a time), and
// a sender of small messages hands them over in rawBatch batches (it used
// to write each message on its own).
func TestRawBaselineBatches(t *testing.T) {
	for _, c := range []struct {
		size  int
		total int64
	}{{100, 10_000_001}, {64 << 10, 20 << 20}, {3000, 12_345_678}} {
		a, b := net.Pipe()
		pat := newPattern(7, c.size)
		h := rawHello{size: c.size, total: c.total, seed: 7, run: 1, sessions: 1, rawConns: 2}
		rc := &readSizes{Conn: b}
		type verdict struct {
			v, msgs, bad int64
			err          error
		}
		done := make(chan verdict, 1)
		go func() {
			var key [16 + rawHdrLen]byte
			if _, err := io.ReadFull(rc, key[:]); err != nil {
				done <- verdict{err: err}
				return
			}
			hh, err := parseRawHello(key[16:])
			if err != nil || hh != h {
				done <- verdict{err: errors.Join(err, errors.New("hello mismatch"))}
				return
			}
			rc.mu.Lock()
			rc.asked, rc.got = nil, nil
			rc.mu.Unlock()
			v, m, bad, err := rawReceive(context.Background(), rc, newPattern(7, c.size), hh.size, hh.total, nil)
			done <- verdict{v, m, bad, err}
		}()
		wc := &readSizes{Conn: a}
		if _, err := wc.Write(h.append(nil)); err != nil {
			t.Fatal(err)
		}
		n, m, err := rawSend(context.Background(), wc, pat, c.size, c.total, nil, nil)
		if err != nil || n != c.total {
			t.Fatalf("size %d: sent %d of %d: %v", c.size, n, c.total, err)
		}
		r := <-done
		wantMsgs := (c.total + int64(c.size) - 1) / int64(c.size)
		if r.err != nil || r.v != c.total || r.bad != 0 || r.msgs != wantMsgs || m != wantMsgs {
			t.Fatalf("size %d: verified %d of %d in %d messages (sent %d, want %d), %d mismatches, %v", c.size, r.v, c.total, r.msgs, m, wantMsgs, r.bad, r.err)
		}
		var before int64
		for i, n := range rc.asked {
			if want := min(rawBatch, c.total-before); int64(n) != want {
				t.Errorf("size %d: read %d asked for %d octets, want %d", c.size, i, n, want)
			}
			before += int64(rc.got[i])
		}
		if c.size < rawStaging {
			// Past the hello, every write but the last is a batch.
			for i, n := range wc.writes[1 : len(wc.writes)-1] {
				if n < rawBatch {
					t.Errorf("size %d: write %d of %d octets, want batches of %d", c.size, i+1, n, rawBatch)
				}
			}
		}
		a.Close()
		b.Close()
	}
}

// A corrupted octet in a baseline is counted, wherever it falls.
func TestRawBaselineDetectsMismatch(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	const size, total = 1000, 5_000_000
	done := make(chan int64, 1)
	go func() {
		v, _, bad, _ := rawReceive(context.Background(), b, newPattern(3, size), size, total, nil)
		if v != total {
			bad = -1
		}
		done <- bad
	}()
	pat := newPattern(3, size)
	stream := make([]byte, 0, total)
	for i := uint64(0); int64(len(stream)) < total; i++ {
		stream = append(stream, pat.msg(i)...)
	}
	stream[4_321_000] ^= 0xff
	stream[4_999_999] ^= 1
	go a.Write(stream)
	if bad := <-done; bad != 2 {
		t.Fatalf("%d mismatches counted, want 2", bad)
	}
}

// tcpPair is a connected pair of loopback TCP connections, which can
// half-close (net.Pipe cannot).
func tcpPair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-acc
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a.(*net.TCPConn), b.(*net.TCPConn)
}

// A timed baseline (total 0) sends whole messages until told to stop and
// half-closes; the receiver verifies up to the FIN. A FIN in the middle of
// a message is an error, not a short count.
func TestRawBaselineTimed(t *testing.T) {
	a, b := tcpPair(t)
	const size = 3000
	type verdict struct {
		v, msgs, bad int64
		err          error
	}
	done := make(chan verdict, 1)
	go func() {
		v, m, bad, err := rawReceive(context.Background(), b, newPattern(5, size), size, 0, nil)
		done <- verdict{v, m, bad, err}
	}()
	batches := 0
	stop := func() bool { batches++; return batches > 3 }
	n, m, err := rawSend(context.Background(), a, newPattern(5, size), size, 0, stop, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.CloseWrite()
	r := <-done
	if r.err != nil || r.v != n || r.msgs != m || n != m*size || r.bad != 0 || m < 3*rawBatch/size {
		t.Fatalf("sent %d octets in %d messages, verified %d in %d, %d mismatches, %v", n, m, r.v, r.msgs, r.bad, r.err)
	}

	c, d := tcpPair(t)
	go func() {
		c.Write(newPattern(5, size).msg(0)[:size-1])
		c.CloseWrite()
	}()
	if v, _, _, err := rawReceive(context.Background(), d, newPattern(5, size), size, 0, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a FIN inside a message: verified %d, error %v; want io.ErrUnexpectedEOF", v, err)
	}
}
