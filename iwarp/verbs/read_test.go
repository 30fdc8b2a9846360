package verbs

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// Regression: a Read Response whose last segment (L=1) came before the
// requested length completed the Read as a success with the shorter
// length, leaving the rest of the sink buffer as it was. A Read completes
// successfully only when every requested octet landed; a short one fails
// the queue pair with a Remote Protection Error (base or bounds: the
// response does not cover the buffer the request named), which the peer is
// told in a Terminate.
func TestShortReadResponseFails(t *testing.T) {
	peer, qp, pd := acceptRaw(t, QPConfig{}, mpa.Config{IRD: 4, ORD: 4})
	sinkBuf := bytes.Repeat([]byte{0xee}, 100)
	sink, err := pd.RegisterMR(sinkBuf, RemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := qp.PostSend(ctx, SendWR{ID: 5, Op: OpRead, Sink: sink, Len: 100, RemoteSTag: 0x1234, RemoteTO: 0}); err != nil {
		t.Fatal(err)
	}
	seg, err := rdmap.Classify(peer.next())
	if err != nil || seg.Opcode != rdmap.OpReadRequest {
		t.Fatalf("want the Read Request, got %v %v", seg.Opcode, err)
	}
	rr, err := rdmap.ParseReadRequest(seg.Payload)
	if err != nil {
		t.Fatal(err)
	}
	// 60 of the 100 octets, in one segment with L=1.
	peer.write(peer.fpdus(rdmap.NewReadResponse(rr.SinkSTag, rr.SinkTO, bytes.Repeat([]byte{1}, 60)), 1<<14))
	c := poll(t, qp.SendCQ())
	if c.ID != 5 || c.Op != OpRead || c.Err == nil {
		t.Fatalf("short Read completed as %+v; want an error", c)
	}
	var qe *QPError
	if !errors.As(c.Err, &qe) || qe.Local == nil || qe.Local.Layer != rdmap.LayerRDMAP ||
		qe.Local.Type != rdmap.ETypeRemoteProtection || qe.Local.Code != rdmap.CodeBaseBounds {
		t.Fatalf("completion error %v; want the local RDMAP base-or-bounds error", c.Err)
	}
	term := peer.terminate()
	if term.Layer != rdmap.LayerRDMAP || term.EType != rdmap.ETypeRemoteProtection || term.Code != rdmap.CodeBaseBounds {
		t.Fatalf("peer got %v; want RDMAP Remote Protection Error, base or bounds", &term)
	}
	if !bytes.Equal(sinkBuf, bytes.Repeat([]byte{0xee}, 100)) {
		t.Fatal("the refused Read Response was placed")
	}
}

// A Read Response that covers the request in several segments completes
// only with the last, with the whole length.
func TestReadResponseInPiecesCompletes(t *testing.T) {
	peer, qp, pd := acceptRaw(t, QPConfig{}, mpa.Config{IRD: 4, ORD: 4})
	sinkBuf := make([]byte, 3000)
	sink, _ := pd.RegisterMR(sinkBuf, RemoteWrite)
	if err := qp.PostSend(context.Background(), SendWR{ID: 6, Op: OpRead, Sink: sink, Len: 3000, RemoteSTag: 0x1234}); err != nil {
		t.Fatal(err)
	}
	seg, _ := rdmap.Classify(peer.next())
	rr, err := rdmap.ParseReadRequest(seg.Payload)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789"), 300)
	peer.write(peer.fpdus(rdmap.NewReadResponse(rr.SinkSTag, rr.SinkTO, data), 1000))
	if c := poll(t, qp.SendCQ()); c.Err != nil || c.ID != 6 || c.Len != 3000 {
		t.Fatalf("completion %+v", c)
	}
	if !bytes.Equal(sinkBuf, data) {
		t.Fatal("sink differs")
	}
}

// Regression: a Read whose sink region lacked remote write access was
// accepted; its Read Response, a tagged message written into the sink
// (RFC 5040 4.4: the Data Sink's STag must allow remote write), then
// failed here and the innocent peer was sent an access-rights Terminate.
// PostSend refuses it, and the queue pair stays usable.
func TestReadSinkWithoutRemoteWriteRefused(t *testing.T) {
	p := connect(t, QPConfig{}, QPConfig{})
	src, _ := p.spd.RegisterMR(make([]byte, 64), RemoteRead)
	sink, _ := p.cpd.RegisterMR(make([]byte, 64), RemoteRead)
	err := p.client.PostSend(context.Background(), SendWR{Op: OpRead, Sink: sink, Len: 64, RemoteSTag: src.STag, RemoteTO: src.Addr})
	if err == nil || !strings.Contains(err.Error(), "remote write") {
		t.Fatalf("PostSend: %v; want a refusal naming remote write access", err)
	}
	// Still usable: a Read into a properly registered sink works.
	good, _ := p.cpd.RegisterMR(make([]byte, 64), RemoteWrite)
	if err := p.client.PostSend(context.Background(), SendWR{ID: 2, Op: OpRead, Sink: good, Len: 64, RemoteSTag: src.STag, RemoteTO: src.Addr}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, p.client.SendCQ()); c.Err != nil || c.ID != 2 {
		t.Fatalf("completion %+v", c)
	}
}

// Regression: a peer that advertised IRD 0 (it takes no RDMA Read
// Requests, RFC 6581 3) was still sent a Read. PostSend refuses it with a
// message naming the peer's IRD, and nothing reaches the peer.
func TestNoReadToPeerWithIRDZero(t *testing.T) {
	peer, qp, pd := acceptRaw(t, QPConfig{MPA: mpa.Config{ORD: 8}}, mpa.Config{IRD: 0, ORD: 4})
	if ord := qp.Params().ORD; ord != 0 {
		t.Fatalf("negotiated ORD %d against a peer with IRD 0", ord)
	}
	sink, _ := pd.RegisterMR(make([]byte, 64), RemoteWrite)
	err := qp.PostSend(context.Background(), SendWR{Op: OpRead, Sink: sink, Len: 64, RemoteSTag: 0x1234})
	if err == nil || !strings.Contains(err.Error(), "IRD 0") {
		t.Fatalf("PostSend: %v; want a refusal naming the peer's IRD 0", err)
	}
	// What the queue pair sends next is this Send, not a Read Request.
	if err := qp.PostSend(context.Background(), SendWR{Op: OpSend, Data: []byte("x"), Unsignaled: true}); err != nil {
		t.Fatal(err)
	}
	seg, err := rdmap.Classify(peer.next())
	if err != nil || seg.Opcode != rdmap.OpSend {
		t.Fatalf("peer received %v (%v); want the Send", seg.Opcode, err)
	}
}

// A Read posted before the connection is established is checked against
// the peer's IRD once it is known: with IRD 0 it completes with an error
// and is never sent.
func TestReadPostedEarlyToPeerWithIRDZero(t *testing.T) {
	peer, qp := establishLate(t, QPConfig{}, mpa.Config{IRD: 0, ORD: 4}, func(qp *QP, pd *PD) {
		sink, _ := pd.RegisterMR(make([]byte, 64), RemoteWrite)
		if err := qp.PostSend(context.Background(), SendWR{ID: 9, Op: OpRead, Sink: sink, Len: 64, RemoteSTag: 0x1234}); err != nil {
			t.Fatal(err)
		}
		if err := qp.PostSend(context.Background(), SendWR{ID: 10, Op: OpSend, Data: []byte("y")}); err != nil {
			t.Fatal(err)
		}
	})
	c := poll(t, qp.SendCQ())
	if c.ID != 9 || c.Err == nil || !strings.Contains(c.Err.Error(), "IRD 0") {
		t.Fatalf("completion %+v; want the Read refused for the peer's IRD 0", c)
	}
	if c := poll(t, qp.SendCQ()); c.ID != 10 || c.Err != nil {
		t.Fatalf("completion %+v; want the Send", c)
	}
	seg, err := rdmap.Classify(peer.next())
	if err != nil || seg.Opcode != rdmap.OpSend {
		t.Fatalf("peer received %v (%v); want the Send", seg.Opcode, err)
	}
}

// Regression: send queue completions come in the order the work requests
// were posted, as verbs promise. A Write posted after a Read completed as
// soon as it was on the wire, before the Read it followed; and a Read
// whose response arrived while an earlier Write's completion was still
// being made could complete first.
func TestSendCompletionsInPostingOrder(t *testing.T) {
	peer, qp, pd := acceptRaw(t, QPConfig{}, mpa.Config{IRD: 4, ORD: 4})
	sink, _ := pd.RegisterMR(make([]byte, 64), RemoteWrite)
	ctx := context.Background()
	if err := qp.PostSend(ctx, SendWR{ID: 1, Op: OpRead, Sink: sink, Len: 64, RemoteSTag: 0x1234}); err != nil {
		t.Fatal(err)
	}
	if err := qp.PostSend(ctx, SendWR{ID: 2, Op: OpWrite, Data: []byte("after the Read"), RemoteSTag: 0x5678}); err != nil {
		t.Fatal(err)
	}
	seg, err := rdmap.Classify(peer.next())
	if err != nil || seg.Opcode != rdmap.OpReadRequest {
		t.Fatalf("%v %v", seg.Opcode, err)
	}
	rr, _ := rdmap.ParseReadRequest(seg.Payload)
	// The Write is on the wire, the Read unanswered: nothing completes.
	if seg, err := rdmap.Classify(peer.next()); err != nil || seg.Opcode != rdmap.OpWrite {
		t.Fatalf("%v %v", seg.Opcode, err)
	}
	if c, ok := qp.SendCQ().TryPoll(); ok {
		t.Fatalf("completion %+v before the Read posted ahead of it completed", c)
	}
	peer.write(peer.fpdus(rdmap.NewReadResponse(rr.SinkSTag, rr.SinkTO, make([]byte, 64)), 1<<14))
	for _, id := range []uint64{1, 2} {
		if c := poll(t, qp.SendCQ()); c.ID != id || c.Err != nil {
			t.Fatalf("completion %+v, want ID %d", c, id)
		}
	}
}
