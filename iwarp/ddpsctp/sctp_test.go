package ddpsctp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/sctp"
)

// loopback returns both ends' layers over a real SCTP association on
// loopback UDP.
func loopback(t *testing.T, scfg sctp.Config) (*Conn, *Conn) {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", scfg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan *Conn, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			t.Error(err)
		}
		ch <- c
	}()
	a, err := Dial(ctx, ln.Addr().String(), scfg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := <-ch
	if b == nil {
		t.FailNow()
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestOverSCTP: sessions accepted and rejected, and segments of several
// sizes both ways, over the userspace SCTP association on loopback UDP.
func TestOverSCTP(t *testing.T) {
	a, b := loopback(t, sctp.Config{})
	if a.MULPDU() != MULPDU(a.Association().MaxUnfragmented()) || a.MULPDU() < MinMULPDU {
		t.Fatalf("MULPDU %d for %d-octet chunks", a.MULPDU(), a.Association().MaxUnfragmented())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for {
			r, err := b.Listen(ctx)
			if err != nil {
				return
			}
			if string(r.PrivateData()) == "reject me" {
				r.Reject(ctx, []byte("rejected"))
				continue
			}
			s, err := r.Accept(ctx, r.PrivateData())
			if err != nil {
				t.Error(err)
				return
			}
			go func() { // echo every segment, then end as the peer did
				for {
					seg, err := s.Receive(ctx)
					if err != nil {
						s.Close(ctx)
						return
					}
					s.Send(ctx, seg)
				}
			}()
		}
	}()
	var re *RejectError
	if _, err := a.Initiate(ctx, 1, []byte("reject me")); !errors.As(err, &re) || string(re.PrivateData) != "rejected" {
		t.Fatalf("Initiate: %v, want a Reject", err)
	}
	s, err := a.Initiate(ctx, 2, []byte("echo"))
	if err != nil {
		t.Fatal(err)
	}
	if string(s.PeerPrivateData()) != "echo" {
		t.Fatalf("accept private data %q", s.PeerPrivateData())
	}
	sizes := []int{1, 16, 515, 516, 1000, a.MULPDU()}
	for _, n := range sizes {
		seg := bytes.Repeat([]byte{byte(n)}, n)
		if err := s.Send(ctx, seg); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range sizes {
		seg, err := s.Receive(ctx)
		if err != nil || len(seg) != n || seg[0] != byte(n) {
			t.Fatalf("echo of %d octets: %d octets, %v", n, len(seg), err)
		}
	}
	s.Close(ctx)
	if _, err := s.Receive(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after both Terminates: %v", err)
	}
}

// TestSCTPWithoutIndication: an association whose peer sends no
// Adaptation Layer Indication is refused and aborted (section 11.1).
func TestSCTPWithoutIndication(t *testing.T) {
	ln, err := Listen("127.0.0.1:0", sctp.Config{}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan error, 1)
	go func() { _, err := ln.Accept(ctx); ch <- err }()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain, dialErr := sctp.Dial(ctx, pc, ln.Addr(), sctp.Config{})
	var ae *AdaptationError
	if err := <-ch; !errors.As(err, &ae) || ae.Present {
		t.Fatalf("Accept: %v, want an AdaptationError (none sent)", err)
	}
	// The plain peer sees the ABORT, with its reason: at once, or once
	// its Dial returned.
	if dialErr == nil {
		select {
		case <-plain.Done():
		case <-ctx.Done():
			t.Fatal("the association was not aborted")
		}
		dialErr = plain.Err()
	}
	var abort *sctp.AbortError
	if !errors.As(dialErr, &abort) || !strings.Contains(dialErr.Error(), "Adaptation Layer Indication") {
		t.Fatalf("the plain peer got %v, want the ABORT naming the indication", dialErr)
	}
}
