package rdmap_test

import (
	"fmt"

	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// The receive path of one stream: classify each segment, place it through
// the stream's ddp.Sink, act on delivered messages, and turn the first
// error into the Terminate to send.
func Example() {
	stags := ddp.NewSTagTable()
	mem := make([]byte, 64)
	stags.Register(ddp.Region{STag: ddp.MakeSTag(1, 7), PD: 1, Access: ddp.RemoteWrite, Base: 0x1000, Buf: mem})
	sink := ddp.NewSink(1, 1, stags, rdmap.NumQueues)
	sink.Post(rdmap.QNSend, make([]byte, 32), 42)

	// What the peer sends: a Write, a Send, then a Write out of bounds.
	var wire [][]byte
	for _, m := range []rdmap.Message{
		rdmap.NewWrite(ddp.MakeSTag(1, 7), 0x1000, []byte("hello")),
		rdmap.NewSend(1, []byte("done")),
		rdmap.NewWrite(ddp.MakeSTag(1, 7), 0x1040, []byte("x")),
	} {
		wire, _ = m.AppendSegments(wire, 128)
	}

	for _, seg := range wire {
		s, err := rdmap.Classify(seg)
		if err == nil {
			var d ddp.Delivery
			d, err = sink.Receive(&s.Header, s.Payload, s.Opcode.PlacementAccess())
			if err == nil && d.Delivered && !s.Header.Tagged {
				fmt.Printf("%v delivered: %q into buffer %d\n", s.Opcode, d.Buf[:d.MsgLen], d.ID)
			}
		}
		if err != nil {
			sink.Fail(err)
			t := rdmap.ErrorFrom(err).Terminate()
			payload, _ := t.Append(nil)
			fmt.Printf("%s\nTerminate payload: % x\n", t.String(), payload)
			break
		}
	}
	fmt.Printf("memory: %q\n", mem[:5])
	// Output:
	// Send delivered: "done" into buffer 42
	// Terminate DDP layer 1 type 1 code 0x01: Tagged Buffer Error: Base or bounds violation, segment length 15, DDP header c1 40 00 00 01 07 00 00 00 00 00 00 10 40
	// Terminate payload: 11 01 c0 00 00 0f c1 40 00 00 01 07 00 00 00 00 00 00 10 40
	// memory: "hello"
}
