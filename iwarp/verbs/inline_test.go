package verbs

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// With InlineSend, work requests still reach the peer in the order they
// were posted: a Read posted after a Write of the same octets returns
// what the Write wrote, whether either went inline or through the queue,
// and Sends arrive in order.
func TestInlineSendKeepsOrder(t *testing.T) {
	for _, inline := range []bool{false, true} {
		p := connect(t, QPConfig{InlineSend: inline, EMSS: 1460}, QPConfig{InlineSend: inline})
		ctx := context.Background()
		region := make([]byte, 4096)
		mr, _ := p.spd.RegisterMR(region, RemoteWrite|RemoteRead)
		back := make([]byte, 8)
		sink, _ := p.cpd.RegisterMR(back, RemoteWrite)
		const n = 500
		bufs := make([][]byte, 8)
		for i := range bufs {
			bufs[i] = make([]byte, 8)
			p.server.PostRecv(uint64(i), bufs[i])
		}
		for i := 0; i < n; i++ {
			v := make([]byte, 8)
			binary.BigEndian.PutUint64(v, uint64(i))
			// A long Write first, so that the Read behind it is often
			// posted while the Write is still being sent.
			big := make([]byte, 3000)
			copy(big[2992:], v)
			if err := p.client.PostSend(ctx, SendWR{Op: OpWrite, Data: big, RemoteSTag: mr.STag, RemoteTO: mr.Addr, Unsignaled: true}); err != nil {
				t.Fatal(err)
			}
			if err := p.client.PostSend(ctx, SendWR{ID: uint64(i), Op: OpRead, Sink: sink, Len: 8, RemoteSTag: mr.STag, RemoteTO: mr.Addr + 2992}); err != nil {
				t.Fatal(err)
			}
			if err := p.client.PostSend(ctx, SendWR{Op: OpSend, Data: v, Unsignaled: true}); err != nil {
				t.Fatal(err)
			}
			c := poll(t, p.client.SendCQ())
			if c.Err != nil || c.ID != uint64(i) {
				t.Fatalf("inline %v: completion %+v", inline, c)
			}
			if got := binary.BigEndian.Uint64(back); got != uint64(i) {
				t.Fatalf("inline %v: round %d: the Read returned %d: it overtook the Write", inline, i, got)
			}
			r := poll(t, p.server.RecvCQ())
			if got := binary.BigEndian.Uint64(bufs[r.ID][:8]); r.Err != nil || got != uint64(i) {
				t.Fatalf("inline %v: round %d: Send %d arrived (%v)", inline, i, got, r.Err)
			}
			p.server.PostRecv(r.ID, bufs[r.ID])
		}
	}
}

// Every configuration of TestWriteReadSend with InlineSend on both sides.
func TestInlineSendWriteReadSend(t *testing.T) {
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			p := connect(t, QPConfig{MPA: cfg.c, EMSS: cfg.emss, InlineSend: true}, QPConfig{MPA: cfg.s, EMSS: cfg.emss, InlineSend: true})
			ctx := context.Background()
			dst := make([]byte, 200000)
			mr, _ := p.spd.RegisterMR(dst, RemoteWrite|RemoteRead)
			src := make([]byte, 150001)
			for i := range src {
				src[i] = byte(i * 7)
			}
			if err := p.client.PostSend(ctx, SendWR{ID: 1, Op: OpWrite, Data: src, RemoteSTag: mr.STag, RemoteTO: mr.Addr + 7}); err != nil {
				t.Fatal(err)
			}
			back := make([]byte, len(src))
			sink, _ := p.cpd.RegisterMR(back, RemoteWrite)
			if err := p.client.PostSend(ctx, SendWR{ID: 2, Op: OpRead, Sink: sink, Len: uint32(len(src)), RemoteSTag: mr.STag, RemoteTO: mr.Addr + 7}); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 2; i++ {
				if c := poll(t, p.client.SendCQ()); c.Err != nil || c.ID != uint64(i) {
					t.Fatalf("completion %+v", c)
				}
			}
			if string(back) != string(src) {
				t.Fatal("read back differs")
			}
		})
	}
}

// With InlineSend, a Write posted behind a Read that waits for an ORD
// credit is not sent ahead of it: the peer sees the second Read Request
// before the Write.
func TestInlineSendDoesNotOvertakeHeldRead(t *testing.T) {
	peer, qp, pd := acceptRaw(t, QPConfig{InlineSend: true, MPA: mpa.Config{ORD: 1}}, mpa.Config{IRD: 1, ORD: 1})
	ctx := context.Background()
	sink, _ := pd.RegisterMR(make([]byte, 16), RemoteWrite)
	rd := func(id uint64) SendWR {
		return SendWR{ID: id, Op: OpRead, Sink: sink, Len: 8, RemoteSTag: 0x1234, RemoteTO: 0}
	}
	for !qp.txReady.Load() {
		time.Sleep(time.Millisecond) // so that the first Read can go inline
	}
	for _, wr := range []SendWR{rd(1), rd(2), {Op: OpWrite, Data: []byte("written"), RemoteSTag: 0x5678, Unsignaled: true}} {
		if err := qp.PostSend(ctx, wr); err != nil {
			t.Fatal(err)
		}
	}
	// The first Read Request; nothing behind it until it is answered,
	// as the second Read waits for the only ORD credit.
	seg, err := rdmap.Classify(peer.next())
	if err != nil || seg.Opcode != rdmap.OpReadRequest {
		t.Fatalf("first: %v %v", seg.Opcode, err)
	}
	rr, _ := rdmap.ParseReadRequest(seg.Payload)
	peer.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _ := peer.conn.Read(make([]byte, 64)); n > 0 {
		t.Fatalf("%d octets arrived while the second Read waited for its credit: the Write overtook it", n)
	}
	peer.write(peer.fpdus(rdmap.NewReadResponse(rr.SinkSTag, rr.SinkTO, make([]byte, 8)), 1<<14))
	for _, want := range []rdmap.Opcode{rdmap.OpReadRequest, rdmap.OpWrite} {
		seg, err := rdmap.Classify(peer.next())
		if err != nil || seg.Opcode != want {
			t.Fatalf("got %v (%v), want %v", seg.Opcode, err, want)
		}
	}
}
