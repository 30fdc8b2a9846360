package verbs

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/tuf"
)

// tcpConns returns both ends of a loopback TCP connection.
func tcpConns(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// connectTUF returns two queue pairs over DDP over TUF on a loopback TCP
// connection, the client the Initiator.
func connectTUF(t *testing.T, ccfg, scfg QPConfig) *pair {
	t.Helper()
	a, b := tcpConns(t)
	p := &pair{dev: NewDevice()}
	p.cpd, p.spd = p.dev.AllocPD(), p.dev.AllocPD()
	p.client, p.server = CreateQP(p.cpd, ccfg), CreateQP(p.spd, scfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan error, 1)
	go func() { ch <- p.server.EstablishTUF(ctx, b, mpa.Responder) }()
	if err := p.client.EstablishTUF(ctx, a, mpa.Initiator); err != nil {
		t.Fatal(err)
	}
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.client.Close(); p.server.Close() })
	return p
}

// TestTUFQueuePairs: RDMA Writes of several sizes each way, then a Send
// and an RDMA Read, over DDP over TUF: every octet placed, IRD/ORD and
// private data exchanged in the startup, MULPDU = EMSS - 12.
func TestTUFQueuePairs(t *testing.T) {
	const emss = 1460
	p := connectTUF(t,
		QPConfig{EMSS: emss, MPA: mpa.Config{IRD: 3, ORD: 5, PrivateData: []byte("from client")}},
		QPConfig{EMSS: emss, MPA: mpa.Config{IRD: 7, ORD: 1, PrivateData: []byte("from server")}})
	cp, sp := p.client.Params(), p.server.Params()
	if cp.ORD != 5 || sp.ORD != 1 || string(cp.Peer.PrivateData) != "from server" || string(sp.Peer.PrivateData) != "from client" {
		t.Fatalf("startup: client %+v, server %+v", cp, sp)
	}
	if p.client.MULPDU() != tuf.MaxULPDU(emss) || p.client.MULPDU() != emss-12 {
		t.Fatalf("MULPDU %d", p.client.MULPDU())
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(21, 22))
	for i, n := range []int{1, 1433, 1434, 1435, 100000} {
		for _, dir := range []struct {
			from, to     *QP
			fromPD, toPD *PD
		}{{p.client, p.server, p.cpd, p.spd}, {p.server, p.client, p.spd, p.cpd}} {
			dst := make([]byte, n)
			mr, err := dir.toPD.RegisterMR(dst, RemoteWrite|RemoteRead)
			if err != nil {
				t.Fatal(err)
			}
			src := randBytes(r, n)
			if err := dir.from.PostSend(ctx, SendWR{ID: uint64(i), Op: OpWrite, Data: src, RemoteSTag: mr.STag, RemoteTO: mr.Addr}); err != nil {
				t.Fatal(err)
			}
			if c := poll(t, dir.from.SendCQ()); c.Err != nil {
				t.Fatalf("write of %d: %+v", n, c)
			}
			// A Read of the region back is served after the Write
			// (RFC 5040 5.5): what it returns is what was placed.
			back := make([]byte, n)
			sink, err := dir.fromPD.RegisterMR(back, RemoteWrite)
			if err != nil {
				t.Fatal(err)
			}
			if err := dir.from.PostSend(ctx, SendWR{ID: 100 + uint64(i), Op: OpRead, Sink: sink, Len: uint32(n), RemoteSTag: mr.STag, RemoteTO: mr.Addr}); err != nil {
				t.Fatal(err)
			}
			if c := poll(t, dir.from.SendCQ()); c.Err != nil || c.Len != n {
				t.Fatalf("read back of %d: %+v", n, c)
			}
			// (dst itself is the peer's receive goroutine's to read: the
			// Read's answer is what it placed, and reaches this goroutine
			// through the CQ.)
			if !bytes.Equal(back, src) {
				t.Fatalf("write of %d octets: placed data differs", n)
			}
		}
	}
	// Send, then a Read back of a server region.
	rbuf := make([]byte, 64)
	p.server.PostRecv(5, rbuf)
	if err := p.client.PostSend(ctx, SendWR{ID: 6, Op: OpSend, Data: []byte("over TUF")}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, p.server.RecvCQ()); c.Err != nil || string(rbuf[:c.Len]) != "over TUF" {
		t.Fatalf("receive %+v %q", c, rbuf)
	}
	poll(t, p.client.SendCQ())
	src := randBytes(r, 70000)
	region, err := p.spd.RegisterMR(src, RemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	back := make([]byte, len(src))
	sink, err := p.cpd.RegisterMR(back, RemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.client.PostSend(ctx, SendWR{ID: 7, Op: OpRead, Sink: sink, Len: uint32(len(back)), RemoteSTag: region.STag, RemoteTO: region.Addr}); err != nil {
		t.Fatal(err)
	}
	if c := poll(t, p.client.SendCQ()); c.Err != nil || c.Len != len(back) || !bytes.Equal(back, src) {
		t.Fatalf("read %+v, data equal %v", c, bytes.Equal(back, src))
	}
}

// TestTUFCorruptFPDU: DDP draft section 3, requirement 6, over TUF: a raw
// peer sends an FPDU with one octet changed; the queue pair's receive side
// finds the trailer wrong, fails, and sends a Terminate with LLP error 2
// (CRC), as over MPA.
func TestTUFCorruptFPDU(t *testing.T) {
	a, b := tcpConns(t)
	defer a.Close()
	qp := CreateQP(NewDevice().AllocPD(), QPConfig{EMSS: 1460})
	defer qp.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan error, 1)
	go func() { ch <- qp.EstablishTUF(ctx, b, mpa.Responder) }()
	myKey := tuf.Key(0x5a5a5a5a5a5a)
	reply, err := tuf.Initiate(ctx, a, tuf.StartupFrame{Key: myKey, PrivateData: []byte{0, 1, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	seg := rdmap.NewWrite(0x00000101, 0, make([]byte, 64))
	segs, err := seg.AppendSegments(nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fpdu, _ := tuf.AppendFPDU(nil, myKey, segs[0])
	fpdu[30] ^= 0x01
	if _, err := a.Write(fpdu); err != nil {
		t.Fatal(err)
	}
	select {
	case <-qp.Dead():
	case <-time.After(10 * time.Second):
		t.Fatal("the queue pair did not fail on a bad trailer")
	}
	var me *mpa.Error
	if !errors.As(qp.Err(), &me) || me.Code != mpa.ErrCRC {
		t.Fatalf("queue pair error %v, want the LLP CRC error", qp.Err())
	}
	// The Terminate it sent, in a TUF FPDU with its own key.
	a.SetReadDeadline(time.Now().Add(10 * time.Second))
	rx := tuf.NewReceiver(reply.Key)
	var term *rdmap.Terminate
	buf := make([]byte, 4096)
	for term == nil {
		n, err := a.Read(buf)
		if n > 0 {
			if ferr := rx.Feed(buf[:n], func(_ uint64, u []byte) error {
				h, payload, err := ddp.ParseHeader(u)
				if err != nil {
					return err
				}
				if _, op := rdmap.ParseControl(h.ULPCtrl); op == rdmap.OpTerminate {
					tt, err := rdmap.ParseTerminate(payload)
					term = &tt
					return err
				}
				return nil
			}); ferr != nil {
				t.Fatal(ferr)
			}
		}
		if err != nil && term == nil {
			t.Fatalf("no Terminate: %v", err)
		}
	}
	if term.Layer != rdmap.LayerLLP || term.EType != rdmap.ETypeMPA || term.Code != rdmap.CodeMPACRC {
		t.Fatalf("Terminate %+v, want LLP/MPA CRC", term)
	}
}

// TestTUFReject: the Responder's ULP rejects; the Initiator gets the Reply.
func TestTUFReject(t *testing.T) {
	a, b := tcpConns(t)
	defer a.Close()
	defer b.Close()
	dev := NewDevice()
	server := CreateQP(dev.AllocPD(), QPConfig{MPA: mpa.Config{Accept: func(req *mpa.StartupFrame) ([]byte, bool) {
		return []byte("not " + string(req.PrivateData)), true
	}}})
	client := CreateQP(dev.AllocPD(), QPConfig{MPA: mpa.Config{PrivateData: []byte("you")}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := make(chan error, 1)
	go func() { ch <- server.EstablishTUF(ctx, b, mpa.Responder) }()
	err := client.EstablishTUF(ctx, a, mpa.Initiator)
	var re *tuf.RejectError
	if !errors.As(err, &re) || string(re.Reply.PrivateData) != "not you" {
		t.Fatalf("EstablishTUF: %v", err)
	}
	if err := <-ch; !errors.As(err, &re) {
		t.Fatalf("server: %v", err)
	}
}
