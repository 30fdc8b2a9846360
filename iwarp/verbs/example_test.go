package verbs_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// pair connects two queue pairs over loopback TCP: the first Dials, the
// second Accepts.
func pair(ctx context.Context, dev *verbs.Device) (client, server *verbs.QP, spd *verbs.PD) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	spd = dev.AllocPD()
	accepted := make(chan *verbs.QP, 1)
	go func() {
		qp, err := verbs.Accept(ctx, spd, ln, verbs.QPConfig{})
		if err != nil {
			log.Fatal(err)
		}
		accepted <- qp
	}()
	client, err = verbs.Dial(ctx, dev.AllocPD(), ln.Addr().String(), verbs.QPConfig{})
	if err != nil {
		log.Fatal(err)
	}
	return client, <-accepted, spd
}

// An RDMA Write into a region the peer registered, and an RDMA Read of it
// back. The peer's CPU takes no part: its queue pair places the Write and
// answers the Read from the region's STag.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dev := verbs.NewDevice()
	client, server, spd := pair(ctx, dev)
	defer server.Close()
	defer client.Close()

	// The server registers a region; mr.STag and mr.Addr are what it
	// would advertise to the client (in a Send, or MPA private data).
	region := make([]byte, 64)
	mr, err := spd.RegisterMR(region, verbs.RemoteWrite|verbs.RemoteRead)
	if err != nil {
		log.Fatal(err)
	}

	// RDMA Write 13 octets at offset 8.
	msg := []byte("hello, iWARP!")
	if err := client.PostSend(ctx, verbs.SendWR{ID: 1, Op: verbs.OpWrite, Data: msg, RemoteSTag: mr.STag, RemoteTO: mr.Addr + 8}); err != nil {
		log.Fatal(err)
	}
	c, err := client.SendCQ().Poll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ID, c.Op, c.Err)

	// RDMA Read them back into a local sink, which needs remote write
	// access: the Read Response is written into it through its STag.
	back := make([]byte, len(msg))
	sink, err := client.PD().RegisterMR(back, verbs.RemoteWrite)
	if err != nil {
		log.Fatal(err)
	}
	if err := client.PostSend(ctx, verbs.SendWR{ID: 2, Op: verbs.OpRead, Sink: sink, Len: uint32(len(back)), RemoteSTag: mr.STag, RemoteTO: mr.Addr + 8}); err != nil {
		log.Fatal(err)
	}
	c, err = client.SendCQ().Poll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ID, c.Op, c.Len, c.Err)
	fmt.Printf("%s\n", back)
	// Output:
	// 1 RDMA Write <nil>
	// 2 RDMA Read 13 <nil>
	// hello, iWARP!
}

// A Send lands in the receive buffer the peer posted first; an unposted
// receive would fail the stream with a Terminate (DDP: no buffer).
func ExampleQP_PostRecv() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, server, _ := pair(ctx, verbs.NewDevice())
	defer server.Close()
	defer client.Close()

	buf := make([]byte, 32)
	if err := server.PostRecv(7, buf); err != nil {
		log.Fatal(err)
	}
	if err := client.PostSend(ctx, verbs.SendWR{Op: verbs.OpSendSE, Data: []byte("ping"), Unsignaled: true}); err != nil {
		log.Fatal(err)
	}
	c, err := server.RecvCQ().Poll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ID, c.Op, c.Len, c.Solicited, string(buf[:c.Len]))
	// Output:
	// 7 Receive 4 true ping
}

// A protocol error ends both queue pairs: the peer that found it reports
// it in a Terminate, and errors.As finds that Terminate in the other's
// error.
func ExampleQPError() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, server, _ := pair(ctx, verbs.NewDevice())
	defer server.Close()
	defer client.Close()

	// An RDMA Write to an STag the server never registered.
	client.PostSend(ctx, verbs.SendWR{Op: verbs.OpWrite, Data: []byte("x"), RemoteSTag: 0xdead01})
	<-client.Dead()
	var qe *verbs.QPError
	if errors.As(client.Err(), &qe) && qe.Remote != nil {
		fmt.Println("terminated by the peer:", qe.Remote.Layer, rdmap.ErrorName(qe.Remote.Layer, qe.Remote.EType, qe.Remote.Code))
	}
	// Output:
	// terminated by the peer: DDP Tagged Buffer Error: Invalid STag
}
