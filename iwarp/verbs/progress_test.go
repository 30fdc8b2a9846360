package verbs

import (
	"context"
	"errors"
	"testing"
	"time"
)

// With ManualProgress the application's own goroutine runs the receive
// side through Poll: a Send/Recv ping-pong and Reads work, and the peer's
// Read Requests are answered while the serving side polls.
func TestManualProgress(t *testing.T) {
	for _, inline := range []bool{false, true} {
		p := connect(t, QPConfig{ManualProgress: true, InlineSend: inline}, QPConfig{ManualProgress: true, InlineSend: inline})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		src, _ := p.spd.RegisterMR([]byte("the server's region"), RemoteRead)
		back := make([]byte, 19)
		sink, _ := p.cpd.RegisterMR(back, RemoteWrite)
		sbuf, cbuf := make([]byte, 8), make([]byte, 8)
		p.server.PostRecv(1, sbuf)
		p.client.PostRecv(2, cbuf)
		// The server echoes 100 pings, driving its receive side with
		// Poll; the client's Reads are answered meanwhile.
		done := make(chan error, 1)
		go func() {
			for i := 0; i < 100; i++ {
				c, err := p.server.Poll(ctx, p.server.RecvCQ())
				if err != nil {
					done <- err
					return
				}
				p.server.PostRecv(1, sbuf)
				if err := p.server.PostSend(ctx, SendWR{Op: OpSend, Data: append([]byte(nil), sbuf[:c.Len]...), Unsignaled: true}); err != nil {
					done <- err
					return
				}
			}
			// Serve the last Read.
			done <- p.server.Progress(ctx)
		}()
		for i := 0; i < 100; i++ {
			if err := p.client.PostSend(ctx, SendWR{Op: OpSend, Data: []byte{byte(i)}, Unsignaled: true}); err != nil {
				t.Fatal(err)
			}
			c, err := p.client.Poll(ctx, p.client.RecvCQ())
			if err != nil || c.Len != 1 || cbuf[0] != byte(i) {
				t.Fatalf("inline %v: pong %d: %+v %v", inline, i, c, err)
			}
			p.client.PostRecv(2, cbuf)
		}
		if err := p.client.PostSend(ctx, SendWR{ID: 7, Op: OpRead, Sink: sink, Len: 19, RemoteSTag: src.STag, RemoteTO: src.Addr}); err != nil {
			t.Fatal(err)
		}
		c, err := p.client.Poll(ctx, p.client.SendCQ())
		if err != nil || c.ID != 7 || c.Err != nil || string(back) != "the server's region" {
			t.Fatalf("inline %v: Read %+v %v %q", inline, c, err, back)
		}
		if err := <-done; err != nil {
			t.Fatalf("inline %v: server: %v", inline, err)
		}
		cancel()
		// Both at once: neither side's receive is driven until its
		// Close takes it over.
		go p.server.Close()
		if err := p.client.Close(); err != nil {
			t.Fatalf("inline %v: Close: %v", inline, err)
		}
	}
}

// Progress returns when its context ends, and the stream goes on after it;
// without ManualProgress it refuses; Close takes over the receive side.
func TestProgressContextAndClose(t *testing.T) {
	p := connect(t, QPConfig{ManualProgress: true}, QPConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if err := p.client.Progress(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Progress with nothing to read: %v", err)
	}
	cancel()
	if err := p.server.Progress(context.Background()); err == nil {
		t.Fatal("Progress without ManualProgress succeeded")
	}
	buf := make([]byte, 8)
	p.client.PostRecv(1, buf)
	// The client (the Initiator) sends first: the server may not send
	// before it has received an FPDU (RFC 5044 7.1.3 rule 4).
	p.server.PostRecv(1, make([]byte, 8))
	p.client.PostSend(context.Background(), SendWR{Op: OpSend, Data: []byte("hi"), Unsignaled: true})
	p.server.PostSend(context.Background(), SendWR{Op: OpSend, Data: []byte("later")})
	c, err := p.client.Poll(context.Background(), p.client.RecvCQ())
	if err != nil || string(buf[:c.Len]) != "later" {
		t.Fatalf("after a cancelled Progress: %+v %v", c, err)
	}
	// The server closes: the client, which nobody drives, closes too.
	go p.server.Close()
	if err := p.client.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
