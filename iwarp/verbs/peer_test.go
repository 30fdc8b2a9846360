package verbs

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// rawPeer is a hand-driven iWARP endpoint for tests that need a peer which
// misbehaves on purpose (a short Read Response, a bad CRC): the MPA startup
// by package mpa, then FPDUs framed and parsed here, one at a time.
type rawPeer struct {
	t      *testing.T
	conn   net.Conn
	params *mpa.Params
	framer *mpa.Framer
	rx     *mpa.Receiver
	got    [][]byte // ULPDUs received and not yet taken
	msn    [3]uint32
}

// dialRaw connects a rawPeer, as MPA Initiator, to a queue pair that
// Accept serves on ln, and returns both.
func dialRaw(t *testing.T, qcfg QPConfig, pcfg mpa.Config) (*rawPeer, *QP, *PD) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pd := NewDevice().AllocPD()
	type res struct {
		qp  *QP
		err error
	}
	ch := make(chan res, 1)
	go func() {
		qp, err := Accept(ctx, pd, ln, qcfg)
		ch <- res{qp, err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := mpa.Initiate(ctx, c, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { c.Close(); r.qp.Close() })
	return newRawPeer(t, c, p), r.qp, pd
}

// acceptRaw serves a rawPeer, as MPA Responder, to a queue pair that Dials
// it, and returns both.
func acceptRaw(t *testing.T, qcfg QPConfig, pcfg mpa.Config) (*rawPeer, *QP, *PD) {
	t.Helper()
	var pd *PD
	peer, qp := establishLate(t, qcfg, pcfg, func(_ *QP, p *PD) { pd = p })
	return peer, qp, pd
}

func newRawPeer(t *testing.T, c net.Conn, p *mpa.Params) *rawPeer {
	return &rawPeer{t: t, conn: c, params: p,
		framer: mpa.NewFramer(p.TxMarkers, p.CRC, 0),
		rx:     mpa.NewReceiver(p.RxMarkers, p.CRC, 0),
		msn:    [3]uint32{ddp.FirstMSN, ddp.FirstMSN, ddp.FirstMSN}}
}

// fpdus frames every segment of m, with MULPDU mulpdu.
func (r *rawPeer) fpdus(m rdmap.Message, mulpdu int) []byte {
	r.t.Helper()
	segs, err := m.AppendSegments(nil, mulpdu)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []byte
	for _, s := range segs {
		if out, err = r.framer.AppendFPDU(out, s, nil); err != nil {
			r.t.Fatal(err)
		}
	}
	return out
}

func (r *rawPeer) write(b []byte) {
	r.t.Helper()
	if _, err := r.conn.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// next returns the next ULPDU the queue pair sent, waiting up to 10 s.
func (r *rawPeer) next() []byte {
	r.t.Helper()
	r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	for len(r.got) == 0 {
		n, err := r.conn.Read(buf)
		if n > 0 {
			ferr := r.rx.Feed(buf[:n], func(_ uint32, u []byte) error {
				r.got = append(r.got, append([]byte(nil), u...))
				return nil
			})
			if ferr != nil {
				r.t.Fatalf("raw peer: %v", ferr)
			}
		}
		if err != nil && len(r.got) == 0 {
			r.t.Fatalf("raw peer: waiting for an FPDU: %v", err)
		}
	}
	u := r.got[0]
	r.got = r.got[1:]
	return u
}

// readAll reads until the queue pair closes the connection and returns
// every octet it sent, failing if it does not close within 10 s.
func (r *rawPeer) readAll() []byte {
	r.t.Helper()
	r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(r.conn)
	if err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		r.t.Fatalf("raw peer: waiting for the queue pair to close: %v", err)
	}
	return b
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "read" && !oe.Timeout()
}

// terminate reads ULPDUs until the queue pair's Terminate and returns it.
func (r *rawPeer) terminate() rdmap.Terminate {
	r.t.Helper()
	for {
		seg, err := rdmap.Classify(r.next())
		if err != nil {
			r.t.Fatal(err)
		}
		if seg.Opcode == rdmap.OpTerminate {
			t, err := rdmap.ParseTerminate(seg.Payload)
			if err != nil {
				r.t.Fatal(err)
			}
			return t
		}
	}
}

// establishLate creates a queue pair, lets before post work on it while it
// is not connected, then establishes it as MPA Initiator against a rawPeer
// (the MPA Responder).
func establishLate(t *testing.T, qcfg QPConfig, pcfg mpa.Config, before func(*QP, *PD)) (*rawPeer, *QP) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type res struct {
		c   net.Conn
		p   *mpa.Params
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ch <- res{err: err}
			return
		}
		p, err := mpa.Respond(ctx, c, pcfg)
		ch <- res{c, p, err}
	}()
	pd := NewDevice().AllocPD()
	qp := CreateQP(pd, qcfg)
	before(qp, pd)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := qp.Establish(ctx, c, mpa.Initiator); err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.c.Close(); qp.Close() })
	return newRawPeer(t, r.c, r.p), qp
}
