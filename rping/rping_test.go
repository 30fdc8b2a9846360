package rping

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/verbs"
)

func TestPingData(t *testing.T) {
	// rping's client: "rdma-ping-%d: " then letters from 'A'+ping,
	// wrapping from 'z' (122) back to 'A' (65), NUL last.
	got := PingData(0, 26)
	if want := "rdma-ping-0: ABCDEFGHIJKL\x00"; string(got) != want {
		t.Errorf("PingData(0, 26) = %q, want %q", got, want)
	}
	got = PingData(3, 80)
	want := "rdma-ping-3: DEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyzABCDEFGHIJK\x00"
	if string(got) != want {
		t.Errorf("PingData(3, 80) = %q\nwant %q", got, want)
	}
	// The start letter wraps after 58 rounds ('A' to 'z').
	if g := PingData(58, 64); g[14] != 'A' {
		t.Errorf("round 58's letters start with %q, want 'A'", g[14])
	}
}

func TestAdvRoundTrip(t *testing.T) {
	a := Adv{Addr: 0x0102030405060708, STag: 0xa0b0c0d0, Len: 64}
	b := a.Append(nil)
	if want := "0102030405060708a0b0c0d000000040"; fmt.Sprintf("%x", b) != want {
		t.Fatalf("wire % x, want %s", b, want)
	}
	got, err := ParseAdv(b)
	if err != nil || got != a {
		t.Fatalf("ParseAdv = %+v, %v", got, err)
	}
	if _, err := ParseAdv(b[:15]); err == nil || !strings.Contains(err.Error(), "bogus data") {
		t.Fatalf("15 octets: %v", err)
	}
}

func TestCheckSize(t *testing.T) {
	for _, s := range []int{MinSize, DefaultSize, MaxSize} {
		if err := CheckSize(s); err != nil {
			t.Errorf("%d: %v", s, err)
		}
	}
	for _, s := range []int{-1, 0, MinSize - 1, MaxSize + 1} {
		if err := CheckSize(s); err == nil {
			t.Errorf("%d accepted", s)
		}
	}
}

// pair runs a client and a server of this package against each other over
// loopback TCP.
func pair(t *testing.T, ccfg, scfg Config) (cs, ss *Stats, cerr, serr error) {
	t.Helper()
	return pairOn(t, nil, nil, ccfg, scfg)
}

// pairOn is pair with the client on cp and the server on sp.
func pairOn(t *testing.T, cp, sp Provider, ccfg, scfg Config) (cs, ss *Stats, cerr, serr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			serr = err
			return
		}
		ss, serr = Serve(ctx, sp, c, scfg)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cs, cerr = Client(ctx, cp, c, ccfg)
	<-done
	return
}

func TestClientServer(t *testing.T) {
	for _, tc := range []struct {
		size, count int
		rev         uint8
		noCRC       bool
		markers     bool
	}{
		{size: MinSize, count: 1, rev: 2},
		{size: 64, count: 3, rev: 1, noCRC: true},
		{size: 1000, count: 60, rev: 2, markers: true}, // past the letters' wrap
		{size: MaxSize, count: 4, rev: 2},
		{size: MaxSize, count: 2, rev: 1, noCRC: true, markers: true},
	} {
		t.Run(fmt.Sprintf("S%d_C%d_rev%d_nocrc%v_markers%v", tc.size, tc.count, tc.rev, tc.noCRC, tc.markers), func(t *testing.T) {
			var cout, sout bytes.Buffer
			m := mpa.Config{Rev: tc.rev, NoCRC: tc.noCRC, Markers: tc.markers}
			cs, ss, cerr, serr := pair(t,
				Config{Size: tc.size, Count: tc.count, Validate: true, Verbose: &cout, QP: verbs.QPConfig{MPA: m}},
				Config{Size: tc.size, Validate: true, Verbose: &sout, QP: verbs.QPConfig{MPA: m}})
			if cerr != nil || serr != nil {
				t.Fatalf("client: %v; server: %v", cerr, serr)
			}
			if cs.Rounds != tc.count || ss.Rounds != tc.count {
				t.Fatalf("rounds: client %d, server %d, want %d", cs.Rounds, ss.Rounds, tc.count)
			}
			want := int64(tc.size * tc.count)
			if cs.Verified != want || ss.Verified != want {
				t.Fatalf("verified: client %d, server %d, want %d", cs.Verified, ss.Verified, want)
			}
			if cs.Params.CRC == tc.noCRC || cs.Params.Local.Rev != tc.rev {
				t.Errorf("negotiated CRC %v rev %d", cs.Params.CRC, cs.Params.Local.Rev)
			}
			// rping's -v output, line for line.
			var wc, ws strings.Builder
			for i := range tc.count {
				d := string(PingData(i, tc.size)[:tc.size-1])
				fmt.Fprintf(&wc, "ping data: %s\n", d)
				fmt.Fprintf(&ws, "server ping data: %s\n", d)
			}
			if cout.String() != wc.String() {
				t.Errorf("client output %q, want %q", trunc(cout.String()), trunc(wc.String()))
			}
			if sout.String() != ws.String() {
				t.Errorf("server output %q, want %q", trunc(sout.String()), trunc(ws.String()))
			}
		})
	}
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// Regression: a server with a smaller buffer than the client refused
// before any RDMA operation, so the client saw only the connection close.
// As rdma-core's rping does, it now issues the Read; the Read Response
// fails DDP's bounds check on the server, and the client is sent a
// Terminate that says why. The server's error says what to change, and its
// statistics give the size the client used.
func TestSizeMismatchTellsClient(t *testing.T) {
	_, ss, cerr, serr := pair(t, Config{Size: 128, Count: 1}, Config{Size: 64})
	if serr == nil || !strings.Contains(serr.Error(), "more than this server's 64-octet buffer") {
		t.Fatalf("server: %v", serr)
	}
	if ss.Rounds != 0 || ss.Size != 128 {
		t.Errorf("server stats %+v; want 0 rounds of size 128", ss)
	}
	var qe *verbs.QPError
	if !errors.As(cerr, &qe) || qe.Remote == nil || qe.Remote.Layer != rdmap.LayerDDP ||
		qe.Remote.EType != rdmap.ETypeTaggedBuffer || qe.Remote.Code != rdmap.CodeDDPBaseBounds {
		t.Fatalf("client: %v; want the server's Terminate: DDP Tagged Buffer Error, base or bounds", cerr)
	}
}

// The overrun knobs make the server step outside the client's buffers. The
// client's stack must refuse with a Terminate naming base or bounds, and the
// server must report the Terminate it got.
func TestOverrunTerminates(t *testing.T) {
	for _, tc := range []struct {
		name        string
		read, write int
		layer       rdmap.Layer
		etype, code uint8
	}{
		// RFC 5040 7.1: a Read Request whose source is out of bounds is
		// an RDMAP remote protection error, base or bounds violation.
		{"read", 1, 0, rdmap.LayerRDMAP, rdmap.ETypeRemoteProtection, rdmap.CodeBaseBounds},
		// RFC 5041 7.2: a tagged segment past the buffer is a DDP tagged
		// buffer error, base or bounds violation.
		{"write", 0, 8, rdmap.LayerDDP, rdmap.ETypeTaggedBuffer, rdmap.CodeDDPBaseBounds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _, cerr, serr := pair(t, Config{Size: 64, Count: 2}, Config{Size: 64, ReadOverrun: tc.read, WriteOverrun: tc.write})
			var qe *verbs.QPError
			if !errors.As(serr, &qe) || qe.Remote == nil {
				t.Fatalf("server: %v, want the client's Terminate", serr)
			}
			if r := qe.Remote; r.Layer != tc.layer || r.EType != tc.etype || r.Code != tc.code {
				t.Errorf("server got %v", r)
			}
			if !errors.As(cerr, &qe) || qe.Local == nil {
				t.Fatalf("client: %v, want a local protection error", cerr)
			}
			if cs.Rounds != 0 {
				t.Errorf("client completed %d rounds", cs.Rounds)
			}
		})
	}
}

// A peer that Sends something other than a 16-octet advertisement gets
// rping's "bogus data" refusal.
func TestBogusAdvertisement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		_, err = Serve(ctx, nil, c, Config{})
		errc <- err
	}()
	pd := verbs.NewDevice().AllocPD()
	qp, err := verbs.Dial(ctx, pd, ln.Addr().String(), verbs.QPConfig{MPA: mpa.Config{IRD: 1, ORD: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer qp.Close()
	if err := qp.PostSend(ctx, verbs.SendWR{Op: verbs.OpSend, Data: []byte("12345678")}); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "bogus data: a Send of 8 octets") {
		t.Fatalf("server: %v", err)
	}
}
