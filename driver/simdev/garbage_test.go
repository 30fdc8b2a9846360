package simdev

import (
	"context"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// A peer that sends garbage after the MPA startup: its first "FPDU" has a
// plausible length (64 octets) and random octets, so the CRC check fails
// (RFC 5044 8: the stream is broken). The simulated device, mirrored on
// the model, fails that QP as the model does (a QP_ERROR event naming the
// LLP error, a Terminate to the peer, the posted receives flushed, the
// CRC error counted) and nothing of the garbage is placed; its other QP
// goes on working, and the mirror finds no difference.
func TestSimPeerGarbage(t *testing.T) {
	m := mirrored(t, Config{MemSize: 4 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The other QP: the software stack over loopback TCP, used after the
	// garbage to show the device still works.
	sp := newStackPair(t, ctx, m, false)
	d := sp.d

	cq, err := d.CreateCQ(6, 1)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := sp.pd.CreateQP(4, 2, cq, cq)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := qp.PostRecv(hostif.RQE{ID: uint64(50 + i), LKey: sp.mr.STag, Length: 1000,
			LocalTO: sp.mr.TO + 100<<10 + uint64(i)*1000}); err != nil {
			t.Fatal(err)
		}
	}
	before := append([]byte(nil), sp.buf.Mem[100<<10:100<<10+2000]...)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := mpa.Config{IRD: 1, ORD: 1}
	peer := make(chan net.Conn, 1)
	go func() {
		pc, err := ln.Accept()
		if err != nil {
			t.Error(err)
			close(peer)
			return
		}
		if _, err := mpa.Respond(ctx, pc, cfg); err != nil {
			t.Error(err)
			pc.Close()
			close(peer)
			return
		}
		peer <- pc
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rts, p, err := driver.StartMPA(ctx, c, mpa.Initiator, cfg, qp.N, 1460)
	if err != nil {
		t.Fatal(err)
	}
	pc := <-peer
	if pc == nil {
		t.FailNow()
	}
	defer pc.Close()
	sp.relay.Add(c, rts, p)
	if err := qp.RTS(rts); err != nil {
		t.Fatal(err)
	}
	if err := sp.relay.Start(qp.N); err != nil {
		t.Fatal(err)
	}

	garbage := make([]byte, 300)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range garbage {
		garbage[i] = byte(r.Uint32())
	}
	garbage[0], garbage[1] = 0, 64 // an FPDU of 64 octets, its CRC wrong
	if _, err := pc.Write(garbage); err != nil {
		t.Fatal(err)
	}

	// The QP's failure: one QP_ERROR naming the LLP (MPA) error.
	var evs []hostif.Event
	for len(evs) == 0 {
		e, err := d.Events()
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e...)
		select {
		case <-ctx.Done():
			t.Fatalf("no event after the garbage; relay %v", sp.relay.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if len(evs) != 1 || evs[0].Type != hostif.EventQPError || evs[0].Index != qp.N ||
		evs[0].Detail>>4 != uint8(rdmap.LayerLLP) {
		t.Fatalf("events %+v: want one QP_ERROR of QP %d with layer LLP", evs, qp.N)
	}
	// The posted receives flushed, nothing placed.
	var cqes []hostif.CQE
	for len(cqes) < 2 {
		e, ok, err := cq.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			cqes = append(cqes, e)
			continue
		}
		select {
		case <-ctx.Done():
			t.Fatalf("CQEs %+v of 2", cqes)
		case <-time.After(10 * time.Millisecond):
		}
	}
	for _, e := range cqes {
		if e.Status == hostif.StatusSuccess {
			t.Fatalf("a receive completed successfully after the garbage: %+v", cqes)
		}
	}
	if string(sp.buf.Mem[100<<10:100<<10+2000]) != string(before) {
		t.Fatal("octets of the garbage were placed")
	}
	cs, err := d.Map.Counters(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == "rx_crc_errors" && c.Value != 1 {
			t.Fatalf("rx_crc_errors %d, want 1", c.Value)
		}
	}
	// The peer got a Terminate naming the LLP error (RFC 5040 4.8): the
	// device's first FPDU after the startup.
	if err := pc.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rx := mpa.NewReceiver(false, true, 0)
	var term *rdmap.Terminate
	buf := make([]byte, 4096)
	for term == nil {
		n, err := pc.Read(buf)
		if err != nil {
			t.Fatalf("the peer's read: %v (no Terminate)", err)
		}
		if err := rx.Feed(buf[:n], func(_ uint32, u []byte) error {
			h, pl, err := ddp.ParseHeader(u)
			if err != nil {
				return err
			}
			if _, op := rdmap.ParseControl(h.ULPCtrl); op != rdmap.OpTerminate {
				t.Fatalf("the device sent opcode %v to the peer that sent garbage", op)
			}
			tm, err := rdmap.ParseTerminate(pl)
			term = &tm
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if term.Layer != rdmap.LayerLLP {
		t.Fatalf("the Terminate %+v: want layer LLP", term)
	}
	// The other QP still works.
	if err := sp.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 1000, ID: 9, LKey: sp.mr.STag,
		LocalTO: sp.mr.TO, RKey: sp.vmr.STag, RemoteTO: sp.vmr.Addr}); err != nil {
		t.Fatal(err)
	}
	if got := sp.waitCQEs(t, ctx, m, 1); got[0].Status != hostif.StatusSuccess || got[0].ID != 9 {
		t.Fatalf("the other QP's Write after the garbage: %+v", got)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
}
