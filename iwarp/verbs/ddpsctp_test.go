package verbs

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/sctp"
)

// sctpConns returns the adaptation layer on both ends of an in-memory
// association that reorders.
func sctpConns(t *testing.T, reorder int) (*ddpsctp.Conn, *ddpsctp.Conn) {
	t.Helper()
	ind := ddpsctp.AdaptationDDP
	ea, eb := ddpsctp.Pipe(ddpsctp.PipeConfig{Adaptation: [2]*uint32{&ind, &ind}, Reorder: reorder, Seed: 7})
	a, err := ddpsctp.New(ea, ddpsctp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ddpsctp.New(eb, ddpsctp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// connectSCTP returns two queue pairs over one DDP Stream Session on
// stream of a (active) and b (passive).
func connectSCTP(t *testing.T, a, b *ddpsctp.Conn, stream uint16, ccfg, scfg QPConfig) *pair {
	t.Helper()
	p := &pair{dev: NewDevice()}
	p.cpd, p.spd = p.dev.AllocPD(), p.dev.AllocPD()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan error, 1)
	go func() {
		r, err := b.Listen(ctx)
		if err == nil {
			p.server, err = AcceptSession(ctx, p.spd, r, scfg)
		}
		ch <- err
	}()
	var err error
	p.client, err = InitiateSession(ctx, p.cpd, a, stream, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.client.Close(); p.server.Close() })
	return p
}

// TestSCTPWriteReadSend: RDMA Write, Read and Send over DDP/SCTP, with
// segments delivered out of order by SCTP, place and complete as over MPA.
func TestSCTPWriteReadSend(t *testing.T) {
	a, b := sctpConns(t, 8)
	p := connectSCTP(t, a, b, 1,
		QPConfig{MPA: mpa.Config{IRD: 4, ORD: 8, PrivateData: []byte("client")}},
		QPConfig{MPA: mpa.Config{IRD: 6, ORD: 2, PrivateData: []byte("server")}})
	cp, sp := p.client.Params(), p.server.Params()
	if cp.ORD != 6 || sp.ORD != 2 || cp.IRD != 4 || sp.IRD != 6 {
		t.Fatalf("IRD/ORD: client %d/%d, server %d/%d", cp.IRD, cp.ORD, sp.IRD, sp.ORD)
	}
	if string(cp.Peer.PrivateData) != "server" || string(sp.Peer.PrivateData) != "client" {
		t.Fatalf("private data %q / %q", cp.Peer.PrivateData, sp.Peer.PrivateData)
	}
	if p.client.Session() == nil || p.client.Conn() != nil || p.client.MULPDU() != 1434 {
		t.Fatalf("session %v conn %v MULPDU %d", p.client.Session(), p.client.Conn(), p.client.MULPDU())
	}
	ctx := context.Background()
	// RDMA Write of 64 KiB: many segments, placed by STag and TO.
	dst := make([]byte, 64<<10)
	mr, err := p.spd.RegisterMR(dst, RemoteWrite|RemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, len(dst))
	for i := range src {
		src[i] = byte(i * 7)
	}
	if err := p.client.PostSend(ctx, SendWR{ID: 1, Op: OpWrite, Data: src, RemoteSTag: mr.STag, RemoteTO: mr.Addr}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, p.client.SendCQ()); c.Err != nil || c.ID != 1 || c.Op != OpWrite {
		t.Fatalf("write completion %+v", c)
	}
	// A Send after the Write: delivered after it (RFC 5040 5.5), so the
	// Write is placed when the receive completes.
	rbuf := make([]byte, 100)
	p.server.PostRecv(9, rbuf)
	if err := p.client.PostSend(ctx, SendWR{ID: 2, Op: OpSend, Data: []byte("done")}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, p.server.RecvCQ()); c.Err != nil || c.ID != 9 || c.Len != 4 || string(rbuf[:4]) != "done" {
		t.Fatalf("receive completion %+v", c)
	}
	if !bytes.Equal(dst, src) {
		t.Fatal("RDMA Write placed wrong data")
	}
	poll(t, p.client.SendCQ())
	// RDMA Read of it back into a client region.
	back := make([]byte, len(dst))
	sink, err := p.cpd.RegisterMR(back, RemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.client.PostSend(ctx, SendWR{ID: 3, Op: OpRead, Sink: sink, Len: uint32(len(back)), RemoteSTag: mr.STag, RemoteTO: mr.Addr}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, p.client.SendCQ()); c.Err != nil || c.ID != 3 || c.Len != len(back) {
		t.Fatalf("read completion %+v", c)
	}
	if !bytes.Equal(back, src) {
		t.Fatal("RDMA Read returned wrong data")
	}
	st := p.server.Stats()
	if st.RxMessages[rdmap.OpWrite] != 1 || st.RxMessages[rdmap.OpReadRequest] != 1 || st.TxMessages[rdmap.OpReadResponse] != 1 {
		t.Fatalf("server stats %+v", st)
	}
	// A graceful end: Close sends the session's Terminate and waits
	// for the peer's.
	done := make(chan error, 1)
	go func() { done <- p.server.Close() }()
	if err := p.client.Close(); err != nil {
		t.Fatalf("client Close: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server Close: %v", err)
	}
}

// TestSCTPTerminate: a DDP error found over SCTP is reported to the peer in
// an RDMAP Terminate, as over MPA: a Write to an STag that does not exist.
func TestSCTPTerminate(t *testing.T) {
	a, b := sctpConns(t, 0)
	p := connectSCTP(t, a, b, 2, QPConfig{}, QPConfig{})
	ctx := context.Background()
	if err := p.client.PostSend(ctx, SendWR{ID: 1, Op: OpWrite, Data: make([]byte, 10), RemoteSTag: 0x00ffff01, RemoteTO: 0}); err != nil {
		t.Fatal(err)
	}
	poll(t, p.client.SendCQ())
	select {
	case <-p.client.Dead():
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not fail")
	}
	var term *rdmap.Terminate
	if !errors.As(p.client.Err(), &term) || term.Layer != rdmap.LayerDDP {
		t.Fatalf("client error %v, want the server's DDP Terminate", p.client.Err())
	}
	var local *rdmap.Error
	if !errors.As(p.server.Err(), &local) {
		t.Fatalf("server error %v", p.server.Err())
	}
	// The server records its Terminate once its transmit side has flushed
	// it, which may be after the client has read it and failed.
	for deadline := time.Now().Add(10 * time.Second); p.server.Stats().TerminateSent == nil; {
		if time.Now().After(deadline) {
			t.Fatal("no Terminate recorded as sent")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSCTPReject: the passive side's ULP rejects through QPConfig.MPA.Accept;
// the active side gets the session Reject with the reply.
func TestSCTPReject(t *testing.T) {
	a, b := sctpConns(t, 0)
	dev := NewDevice()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan error, 1)
	go func() {
		r, err := b.Listen(ctx)
		if err == nil {
			_, err = AcceptSession(ctx, dev.AllocPD(), r, QPConfig{MPA: mpa.Config{Accept: func(req *mpa.StartupFrame) ([]byte, bool) {
				return []byte("not " + string(req.PrivateData)), true
			}}})
		}
		ch <- err
	}()
	_, err := InitiateSession(ctx, dev.AllocPD(), a, 3, QPConfig{MPA: mpa.Config{PrivateData: []byte("you")}})
	var re *ddpsctp.RejectError
	if !errors.As(err, &re) || string(re.PrivateData) != "not you" {
		t.Fatalf("InitiateSession: %v, want a Reject with \"not you\"", err)
	}
	var mre *mpa.RejectError
	if err := <-ch; !errors.As(err, &mre) {
		t.Fatalf("AcceptSession: %v", err)
	}
}

// TestSCTPSeveralQPs: queue pairs on several DDP Streams of one association
// run independently.
func TestSCTPSeveralQPs(t *testing.T) {
	a, b := sctpConns(t, 4)
	ctx := context.Background()
	var pairs []*pair
	for st := uint16(1); st <= 3; st++ {
		pairs = append(pairs, connectSCTP(t, a, b, st, QPConfig{}, QPConfig{}))
	}
	bufs := make([][]byte, len(pairs))
	for i, p := range pairs {
		bufs[i] = make([]byte, 64)
		p.server.PostRecv(uint64(i), bufs[i])
	}
	for i, p := range pairs {
		if err := p.client.PostSend(ctx, SendWR{ID: uint64(i), Op: OpSend, Data: []byte{byte(i), 1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range pairs {
		if c := poll(t, p.server.RecvCQ()); c.Err != nil || c.Len != 3 || bufs[i][0] != byte(i) {
			t.Fatalf("qp %d: %+v % x", i, c, bufs[i][:3])
		}
	}
	// Closing one leaves the others running.
	pairs[0].client.Close()
	if err := pairs[1].client.PostSend(ctx, SendWR{ID: 9, Op: OpSend, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	bufs[1] = make([]byte, 8)
	pairs[1].server.PostRecv(9, bufs[1])
	if c := poll(t, pairs[1].server.RecvCQ()); c.Err != nil || c.Len != 1 {
		t.Fatalf("after closing another: %+v", c)
	}
}

// udpConns returns the adaptation layer on both ends of a userspace SCTP
// association on loopback UDP.
func udpConns(t *testing.T, scfg sctp.Config) (*ddpsctp.Conn, *ddpsctp.Conn) {
	t.Helper()
	ln, err := ddpsctp.Listen("127.0.0.1:0", scfg, ddpsctp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch := make(chan *ddpsctp.Conn, 1)
	go func() { c, _ := ln.Accept(ctx); ch <- c }()
	a, err := ddpsctp.Dial(ctx, ln.Addr().String(), scfg, ddpsctp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b := <-ch
	if b == nil {
		t.Fatal("no association accepted")
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

// TestSCTPOverUDP: RDMA Writes of 64 KiB and a Read over the userspace
// SCTP association on loopback UDP.
func TestSCTPOverUDP(t *testing.T) {
	a, b := udpConns(t, sctp.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := connectSCTP(t, a, b, 0, QPConfig{}, QPConfig{})
	dst := make([]byte, 64<<10)
	mr, _ := p.spd.RegisterMR(dst, RemoteWrite|RemoteRead)
	src := make([]byte, len(dst))
	for i := range 16 {
		for j := range src {
			src[j] = byte(i + j)
		}
		if err := p.client.PostSend(ctx, SendWR{ID: uint64(i), Op: OpWrite, Data: src, RemoteSTag: mr.STag, RemoteTO: mr.Addr}); err != nil {
			t.Fatal(err)
		}
		if c := poll(t, p.client.SendCQ()); c.Err != nil {
			t.Fatal(c.Err)
		}
	}
	back := make([]byte, len(dst))
	sink, _ := p.cpd.RegisterMR(back, RemoteWrite)
	if err := p.client.PostSend(ctx, SendWR{ID: 99, Op: OpRead, Sink: sink, Len: uint32(len(back)), RemoteSTag: mr.STag, RemoteTO: mr.Addr}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, p.client.SendCQ()); c.Err != nil || c.ID != 99 {
		t.Fatalf("read: %+v", c)
	}
	// The Read Response follows the Writes on the stream, so it returns
	// what the last Write placed.
	if !bytes.Equal(back, src) {
		t.Fatal("the Read did not return the last Write's data")
	}
}

// TestSCTPClosedQPFreesWindow: the queue pairs over one association share
// its receive window (docs/ddp-sctp.md, flow control). One whose receive
// side nobody drives (ManualProgress, never polled) fills it with Writes
// the peer keeps posting, and the other queue pair's Send waits behind
// them; closing the idle queue pair gives its unread segments' octets back
// (its close drains the session, then Session.CloseRead drops whatever
// comes after), and the Send arrives.
func TestSCTPClosedQPFreesWindow(t *testing.T) {
	const window = 64 << 10
	a, b := udpConns(t, sctp.Config{ReceiveBuffer: window, SendBuffer: 2 * window,
		RTOInitial: 100 * time.Millisecond, RTOMin: 20 * time.Millisecond, RTOMax: 400 * time.Millisecond})
	idle := connectSCTP(t, a, b, 1, QPConfig{}, QPConfig{ManualProgress: true})
	busy := connectSCTP(t, a, b, 2, QPConfig{}, QPConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	src, dst := make([]byte, 16<<10), make([]byte, 16<<10)
	mr, _ := idle.spd.RegisterMR(dst, RemoteWrite)
	go func() {
		for i := range 64 { // 1 MiB against a 64 KiB window
			if idle.client.PostSend(ctx, SendWR{ID: uint64(i), Op: OpWrite, Data: src, RemoteSTag: mr.STag, RemoteTO: mr.Addr}) != nil {
				return
			}
		}
	}()
	// Full: what is left of the window is less than a segment.
	for b.Queued() < window-2*b.MULPDU() {
		select {
		case <-ctx.Done():
			t.Fatalf("the idle queue pair's unread segments reached %d octets only", b.Queued())
		case <-time.After(time.Millisecond):
		}
	}
	// More than a segment, so that it cannot slip into what is left.
	behind := bytes.Repeat([]byte("behind"), 4<<10)
	buf := make([]byte, len(behind))
	busy.server.PostRecv(1, buf)
	sent := make(chan error, 1)
	go func() { sent <- busy.client.PostSend(ctx, SendWR{ID: 1, Op: OpSend, Data: behind}) }()
	closed := make(chan error, 1)
	go func() { closed <- idle.server.Close() }()
	if c := poll(t, busy.server.RecvCQ()); c.Err != nil || !bytes.Equal(buf[:c.Len], behind) {
		t.Fatalf("the Send behind the idle queue pair's segments: %+v, %d octets", c, c.Len)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	<-closed
	if q := b.Queued(); q != 0 {
		t.Errorf("%d octets of the closed queue pair's segments still wait to be read", q)
	}
}

// TestSCTPManualProgress: with ManualProgress the application's Poll drives
// the receive side over DDP/SCTP too, and a cancelled Poll leaves the
// session running (the session's read deadline, as the socket's over TCP).
func TestSCTPManualProgress(t *testing.T) {
	a, b := sctpConns(t, 2)
	p := connectSCTP(t, a, b, 5, QPConfig{}, QPConfig{ManualProgress: true})
	buf := make([]byte, 16)
	p.server.PostRecv(1, buf)
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.server.Poll(short, p.server.RecvCQ()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Poll with nothing sent: %v", err)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if err := p.client.PostSend(ctx, SendWR{ID: 1, Op: OpSend, Data: []byte("manual")}); err != nil {
		t.Fatal(err)
	}
	c, err := p.server.Poll(ctx, p.server.RecvCQ())
	if err != nil || c.Len != 6 || string(buf[:6]) != "manual" {
		t.Fatalf("Poll: %+v, %v", c, err)
	}
	// Both ends close at once, each Terminate answering the other's.
	done := make(chan error, 1)
	go func() { done <- p.server.Close() }()
	if err := p.client.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
