package verbs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/mpa"
)

// opaqueConn hides a *net.TCPConn behind net.Conn (keeping CloseWrite), so
// that the queue pair cannot gather, and records what each Write carries
// once recording is switched on.
type opaqueConn struct {
	net.Conn
	mu     sync.Mutex
	on     bool
	writes [][]byte
}

func (c *opaqueConn) CloseWrite() error { return c.Conn.(*net.TCPConn).CloseWrite() }

func (c *opaqueConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.on {
		c.writes = append(c.writes, bytes.Clone(b))
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *opaqueConn) record() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = true
	return c.writes
}

// TestTxNonTCPConn runs Writes and Sends over a connection that does not
// take writev: the transmit side copies, each Write carries whole FPDUs
// (one each with WritePerFPDU), and everything arrives.
func TestTxNonTCPConn(t *testing.T) {
	for _, markers := range []bool{false, true} {
		for _, perFPDU := range []bool{false, true} {
			t.Run(fmt.Sprintf("markers=%v,perFPDU=%v", markers, perFPDU), func(t *testing.T) {
				testTxNonTCPConn(t, markers, perFPDU)
			})
		}
	}
}

func testTxNonTCPConn(t *testing.T, markers, perFPDU bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dev := NewDevice()
	cpd, spd := dev.AllocPD(), dev.AllocPD()
	mcfg := mpa.Config{Markers: markers}
	srv := make(chan *QP, 1)
	go func() {
		qp, err := Accept(ctx, spd, ln, QPConfig{MPA: mcfg})
		if err != nil {
			t.Error(err)
		}
		srv <- qp
	}()
	tc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	oc := &opaqueConn{Conn: tc}
	client := CreateQP(cpd, QPConfig{MPA: mcfg, WritePerFPDU: perFPDU, EMSS: 4096})
	if err := client.Establish(ctx, oc, mpa.Initiator); err != nil {
		t.Fatal(err)
	}
	oc.record() // Full Operation from here on; the Initiator sends first
	server := <-srv
	if server == nil {
		t.FailNow()
	}
	defer server.Close()

	r := rand.New(rand.NewPCG(7, 8))
	dst := make([]byte, 1<<20)
	mr, err := spd.RegisterMR(dst, RemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	rbuf := make([]byte, 64<<10)
	server.PostRecv(1, rbuf)
	var want []byte
	off := 0
	for i := 0; i < 40; i++ {
		n := r.IntN(20000)
		if i%3 == 0 {
			n = r.IntN(100)
		}
		src := randBytes(r, n)
		want = append(want, src...)
		if err := client.PostSend(ctx, SendWR{Op: OpWrite, Data: src, RemoteSTag: mr.STag, RemoteTO: mr.Addr + uint64(off), Unsignaled: true}); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	msg := randBytes(r, 30000)
	if err := client.PostSend(ctx, SendWR{ID: 9, Op: OpSend, Data: msg}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, client.SendCQ()); c.Err != nil || c.ID != 9 {
		t.Fatalf("send completion %+v", c)
	}
	if c := poll(t, server.RecvCQ()); c.Err != nil || c.Len != len(msg) || !bytes.Equal(rbuf[:c.Len], msg) {
		t.Fatalf("receive completion %+v, data equal %v", c, bytes.Equal(rbuf[:c.Len], msg))
	}
	if !bytes.Equal(dst[:off], want) {
		t.Fatal("written data differs")
	}

	// Every Write the queue pair made ends on an FPDU boundary, which a
	// Framer replaying the ULPDUs received confirms; with WritePerFPDU
	// each holds exactly one FPDU.
	writes := oc.record()
	rx := mpa.NewReceiver(client.Params().TxMarkers, client.Params().CRC, 0)
	replay := mpa.NewFramer(client.Params().TxMarkers, client.Params().CRC, 0)
	fed, fpdus := 0, 0
	for i, w := range writes {
		got := 0
		err := rx.Feed(w, func(_ uint32, u []byte) error {
			got++
			_, err := replay.AppendFPDU(nil, u, nil)
			return err
		})
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		fed += len(w)
		fpdus += got
		if replay.Seq() != uint32(fed) {
			t.Fatalf("write %d ends at stream offset %d, inside an FPDU (the last whole one ends at %d)", i, fed, replay.Seq())
		}
		if perFPDU && got != 1 {
			t.Fatalf("write %d carries %d FPDUs, want 1 with WritePerFPDU", i, got)
		}
	}
	t.Logf("%d FPDUs in %d writes", fpdus, len(writes))
	if fpdus < 40 {
		t.Fatalf("only %d FPDUs recorded", fpdus)
	}
	if !perFPDU && len(writes) >= fpdus {
		t.Fatalf("%d writes for %d FPDUs: not batched", len(writes), fpdus)
	}
	client.Close()
}

// TestTxGatherChoice: the transmit side gathers on a TCP connection
// without markers only.
func TestTxGatherChoice(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	tc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	for _, c := range []struct {
		conn    net.Conn
		markers bool
		want    bool
	}{
		{tc, false, true},
		{tc, true, false},
		{&opaqueConn{Conn: tc}, false, false},
		{&opaqueConn{Conn: tc}, true, false},
	} {
		l := newMPALayer(c.conn, &mpa.Params{TxMarkers: c.markers}, 1460, nil, nil)
		if got := l.gather; got != c.want {
			t.Errorf("%T, markers %v: gather %v, want %v", c.conn, c.markers, got, c.want)
		}
	}
}
