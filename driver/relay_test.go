package driver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// fakeNet is a network seam whose SegOut the test feeds and whose SegIn
// records.
type fakeNet struct {
	out chan driver.Segment
	in  chan driver.Segment
}

func (f *fakeNet) SegIn(s driver.Segment) error  { f.in <- s; return nil }
func (f *fakeNet) SegOut() <-chan driver.Segment { return f.out }
func (f *fakeNet) Sent() uint64                  { return 0 }

// The relay writes the device's octets to the socket in order, gives the
// socket's octets to SegIn with their stream offsets, holds a Responder's
// octets until the peer's first arrive (RFC 5044 7.1.3 rule 4), and
// reports a device that skips or repeats stream octets, or sends for a QP
// it does not carry.
func TestRelay(t *testing.T) {
	f := &fakeNet{out: make(chan driver.Segment), in: make(chan driver.Segment, 8)}
	r := driver.NewRelay(f)
	defer close(f.out)
	local, peer := net.Pipe()
	defer peer.Close()
	r.Add(local, hostif.QPRTS{QPN: 3, TxSeq: 100, RxSeq: 200}, &mpa.Params{Role: mpa.Responder})
	defer r.Close()
	if err := r.Start(4); err == nil || !strings.Contains(err.Error(), "QP 4, which was not added") {
		t.Fatalf("Start of a QP not added: %v", err)
	}
	if err := r.Start(3); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(3); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("Start twice: %v", err)
	}
	f.out <- driver.Segment{QPN: 3, Seq: 100, Octets: []byte("held")}
	// The peer speaks first; then the held octets go out.
	go peer.Write([]byte("first"))
	got := make([]byte, 4)
	if _, err := peer.Read(got); err != nil || string(got) != "held" {
		t.Fatalf("peer read %q, %v", got, err)
	}
	if s := <-f.in; s.QPN != 3 || s.Seq != 200 || string(s.Octets) != "first" {
		t.Fatalf("SegIn %+v", s)
	}
	f.out <- driver.Segment{QPN: 3, Seq: 104, Octets: []byte("next")}
	if _, err := peer.Read(got); err != nil || string(got) != "next" {
		t.Fatalf("peer read %q, %v", got, err)
	}
	f.out <- driver.Segment{QPN: 3, Seq: 200, Octets: []byte("gap")}
	f.out <- driver.Segment{QPN: 4, Seq: 0, Octets: []byte("x")}
	f.out <- driver.Segment{QPN: 3, Seq: 108, Octets: []byte("sync")} // an unbuffered send: the two before are handled
	if _, err := peer.Read(got); err != nil || string(got) != "sync" {
		t.Fatalf("peer read %q, %v", got, err)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "stream offset 200, the stream is at 108") {
		t.Fatalf("relay error %v", err)
	}
	// The peer's close ends the QP's socket: Ended says so, with io.EOF.
	ended, why := r.Ended(3)
	select {
	case <-ended:
		t.Fatal("Ended before the peer closed")
	default:
	}
	if why() != nil {
		t.Fatalf("reason %v before the end", why())
	}
	peer.Close()
	<-ended
	if !errors.Is(why(), io.EOF) {
		t.Fatalf("reason %v, want io.EOF", why())
	}
	if c, f := r.Ended(9); c != nil || f != nil {
		t.Fatal("Ended of a QP not carried")
	}
}

// The verbs API and the relay against the software stack over loopback
// TCP: what rping on `--device model` needs. The model initiates; a Write,
// a Send and a Read each way.
func TestVerbsAPIAgainstStack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e := newEnd(t, 0)
	vec := e.d.Map.VectorsBase() + regs.VectorsVec - regs.VectorsBase
	e.m.Write32(vec+regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask)
	irq, _ := e.m.Vector(0)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dev := verbs.NewDevice()
	pd := dev.AllocPD()
	cfg := mpa.Config{Markers: true, IRD: 2, ORD: 2}
	vqpc := make(chan *verbs.QP, 1)
	go func() {
		qp, err := verbs.Accept(ctx, pd, ln, verbs.QPConfig{MPA: cfg, EMSS: 1460})
		if err != nil {
			t.Error(err)
		}
		vqpc <- qp
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rts, p, err := driver.StartMPA(ctx, c, mpa.Initiator, cfg, e.qp.N, 1460)
	if err != nil {
		t.Fatal(err)
	}
	vqp := <-vqpc
	if vqp == nil {
		t.FailNow()
	}
	defer vqp.Close()
	relay := driver.NewRelay(e.m.Network())
	relay.Add(c, rts, p)
	defer relay.Close()
	if err := e.qp.RTS(rts); err != nil {
		t.Fatal(err)
	}
	if err := relay.Start(e.qp.N); err != nil {
		t.Fatal(err)
	}
	wait := func() hostif.CQE {
		t.Helper()
		for {
			if x, ok, err := e.cq.Poll(); err != nil || ok {
				if err != nil {
					t.Fatal(err)
				}
				return x
			}
			if err := e.cq.Arm(false); err != nil {
				t.Fatal(err)
			}
			if x, ok, _ := e.cq.Poll(); ok {
				return x
			}
			select {
			case <-irq:
			case <-ctx.Done():
				t.Fatalf("no CQE: %v", relay.Err())
			}
		}
	}

	vbuf := make([]byte, 16<<10)
	vmr, _ := pd.RegisterMR(vbuf, verbs.RemoteWrite|verbs.RemoteRead)
	for i := range e.mr.Buf[:8192] {
		e.mr.Buf[i] = byte(i * 5)
	}
	for i := range vbuf[8192:] {
		vbuf[8192+i] = byte(i * 3)
	}
	vrecv := make([]byte, 64)
	vqp.PostRecv(1, vrecv)
	lk, to := e.mr.STag, e.mr.TO
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.qp.PostRecv(hostif.RQE{ID: 0x10, LKey: lk, Length: 64, LocalTO: to + 40000}))
	must(e.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Length: 4000, ID: 1, LKey: lk, LocalTO: to, RKey: vmr.STag, RemoteTO: vmr.Addr}))
	must(e.qp.PostSend(hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: 64, ID: 2, LKey: lk, LocalTO: to + 100}))
	if rc, err := vqp.RecvCQ().Poll(ctx); err != nil || rc.Err != nil || rc.Len != 64 || !bytes.Equal(vrecv, e.mr.Buf[100:164]) ||
		!bytes.Equal(vbuf[:4000], e.mr.Buf[:4000]) {
		t.Fatalf("the stack's receive %+v, %v", rc, err)
	}
	if x := wait(); x.ID != 2 || x.Status != hostif.StatusSuccess {
		t.Fatalf("CQE %v", x)
	}
	must(e.qp.PostSend(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 5000, ID: 3, LKey: lk, LocalTO: to + 20000, RKey: vmr.STag, RemoteTO: vmr.Addr + 8192}))
	if x := wait(); x.ID != 3 || x.Length != 5000 || !bytes.Equal(e.mr.Buf[20000:25000], vbuf[8192:13192]) {
		t.Fatalf("Read CQE %v", x)
	}
	src := bytes.Repeat([]byte{0xee}, 3000)
	must(vqp.PostSend(ctx, verbs.SendWR{Op: verbs.OpWrite, Data: src, RemoteSTag: lk, RemoteTO: to + 30000, Unsignaled: true}))
	must(vqp.PostSend(ctx, verbs.SendWR{ID: 7, Op: verbs.OpSend, Data: src[:10]}))
	if x := wait(); x.ID != 0x10 || x.Length != 10 || !bytes.Equal(e.mr.Buf[30000:33000], src) {
		t.Fatalf("receive CQE %v", x)
	}
	must(vqp.PostSend(ctx, verbs.SendWR{ID: 8, Op: verbs.OpRead, Sink: vmr, SinkOffset: 0, Len: 6000, RemoteSTag: lk, RemoteTO: to}))
	for _, id := range []uint64{7, 8} {
		if sc, err := vqp.SendCQ().Poll(ctx); err != nil || sc.Err != nil || sc.ID != id {
			t.Fatalf("stack completion %+v, %v", sc, err)
		}
	}
	if !bytes.Equal(vbuf[:6000], e.mr.Buf[:6000]) {
		t.Fatal("the stack's Read brought other octets")
	}
	if err := relay.Err(); err != nil {
		t.Fatal(err)
	}
}
