package verbs

import (
	"context"
	"testing"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// Stats count what crossed the connection: FPDUs by the EMSS the queue
// pairs frame for, whole messages by opcode, and the octets each side
// wrote, which the other read.
func TestStatsCount(t *testing.T) {
	p := connect(t, QPConfig{EMSS: 1460}, QPConfig{EMSS: 1460})
	ctx := context.Background()
	mr, _ := p.spd.RegisterMR(make([]byte, 10000), RemoteWrite|RemoteRead)
	sink, _ := p.cpd.RegisterMR(make([]byte, 10000), RemoteWrite)
	p.server.PostRecv(1, make([]byte, 64))
	p.client.PostSend(ctx, SendWR{ID: 1, Op: OpWrite, Data: make([]byte, 10000), RemoteSTag: mr.STag, RemoteTO: mr.Addr})
	p.client.PostSend(ctx, SendWR{ID: 2, Op: OpRead, Sink: sink, Len: 10000, RemoteSTag: mr.STag, RemoteTO: mr.Addr})
	p.client.PostSend(ctx, SendWR{ID: 3, Op: OpSend, Data: []byte("done")})
	for i := 0; i < 3; i++ {
		if c := poll(t, p.client.SendCQ()); c.Err != nil {
			t.Fatal(c.Err)
		}
	}
	poll(t, p.server.RecvCQ())
	// Closed, so that every write has been counted on both sides.
	go p.server.Close()
	p.client.Close()
	p.server.Close()
	cs, ss := p.client.Stats(), p.server.Stats()
	mulpdu := p.client.MULPDU()
	perMsg := int64((10000 + mulpdu - 1) / mulpdu)
	// Client: the Write's FPDUs, one Read Request, one Send.
	if want := perMsg + 2; cs.TxFPDUs != want {
		t.Errorf("client sent %d FPDUs, want %d (MULPDU %d)", cs.TxFPDUs, want, mulpdu)
	}
	if cs.TxMessages[rdmap.OpWrite] != 1 || cs.TxMessages[rdmap.OpReadRequest] != 1 || cs.TxMessages[rdmap.OpSend] != 1 {
		t.Errorf("client messages sent %v", cs.TxMessages)
	}
	if ss.RxMessages[rdmap.OpWrite] != 1 || ss.RxMessages[rdmap.OpReadRequest] != 1 || ss.RxMessages[rdmap.OpSend] != 1 || ss.RxFPDUs != cs.TxFPDUs {
		t.Errorf("server received %v in %d FPDUs", ss.RxMessages, ss.RxFPDUs)
	}
	if ss.TxMessages[rdmap.OpReadResponse] != 1 || ss.TxFPDUs != perMsg || cs.RxMessages[rdmap.OpReadResponse] != 1 || cs.RxFPDUs != perMsg {
		t.Errorf("Read Response: server sent %d FPDUs %v, client received %d %v", ss.TxFPDUs, ss.TxMessages, cs.RxFPDUs, cs.RxMessages)
	}
	if cs.TxOctets != ss.RxOctets || ss.TxOctets != cs.RxOctets || cs.TxOctets <= 10000 {
		t.Errorf("octets: client %d/%d, server %d/%d", cs.TxOctets, cs.RxOctets, ss.TxOctets, ss.RxOctets)
	}
	if cs.CRCErrors+cs.MarkerErrors+ss.CRCErrors+ss.MarkerErrors != 0 || cs.TerminateSent != nil || ss.TerminateReceived != nil {
		t.Errorf("errors counted on a clean run: %+v %+v", cs, ss)
	}
}

// A CRC error is counted, and the Terminate it causes is in both sides'
// Stats.
func TestStatsErrors(t *testing.T) {
	peer, qp, _ := dialRaw(t, QPConfig{}, mpa.Config{})
	qp.PostRecv(1, make([]byte, 16))
	good := peer.fpdus(rdmap.NewSend(1, []byte("hello")), 1<<14)
	bad := peer.fpdus(rdmap.NewSend(2, []byte("again")), 1<<14)
	bad[len(bad)-1] ^= 0xff
	peer.write(append(good, bad...))
	peer.terminate()
	waitDead(t, qp)
	qp.Close()
	st := qp.Stats()
	if st.CRCErrors != 1 || st.TerminateSent == nil || st.TerminateSent.Code != rdmap.CodeMPACRC || st.RxMessages[rdmap.OpSend] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// With NotifyWrites, each RDMA Write placed whole completes once on the
// Data Sink's receive CQ, after its last octet landed; without it, none.
func TestNotifyWrites(t *testing.T) {
	p := connect(t, QPConfig{EMSS: 1460}, QPConfig{EMSS: 1460, NotifyWrites: true})
	ctx := context.Background()
	data := make([]byte, 9000)
	for i := range data {
		data[i] = byte(i) | 1
	}
	for i := 0; i < 3; i++ {
		// A region each: the race detector cannot see that the next
		// Write, which crosses TCP, comes after this check.
		buf := make([]byte, 10000)
		mr, _ := p.spd.RegisterMR(buf, RemoteWrite)
		if err := p.client.PostSend(ctx, SendWR{Op: OpWrite, Data: data, RemoteSTag: mr.STag, RemoteTO: mr.Addr + 100, Unsignaled: true}); err != nil {
			t.Fatal(err)
		}
		c := poll(t, p.server.RecvCQ())
		if c.Op != OpRemoteWrite || c.STag != mr.STag || c.End != mr.Addr+100+9000 || c.Err != nil {
			t.Fatalf("completion %+v", c)
		}
		if buf[100+8999] != data[8999] {
			t.Fatal("notified before the last octet landed")
		}
		if c, ok := p.server.RecvCQ().TryPoll(); ok {
			t.Fatalf("second completion %+v for one Write", c)
		}
	}
	// The other direction has no NotifyWrites: nothing on its CQ.
	cbuf := make([]byte, 16)
	cmr, _ := p.cpd.RegisterMR(cbuf, RemoteWrite)
	p.server.PostSend(ctx, SendWR{ID: 9, Op: OpWrite, Data: []byte("x"), RemoteSTag: cmr.STag, RemoteTO: cmr.Addr})
	poll(t, p.server.SendCQ())
	if c, ok := p.client.RecvCQ().TryPoll(); ok {
		t.Fatalf("client got %+v without NotifyWrites", c)
	}
}
