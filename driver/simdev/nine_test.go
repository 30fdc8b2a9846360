package simdev

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// nineOutstanding is how many inbound Read Requests or Sends the tests
// below keep outstanding at once: rnic_rq's and rnic_rresp's post limit,
// 2^POST_DEPTH_LOG2 buffers a (QP, queue), which ddp_rx's ring
// (2^RQ_AW a (connection, queue)) must hold (issue 30: rnic_dev built
// rnic_rx with RQ_AW 3, a ring of 8, and the device stalled on the 9th).
const nineOutstanding = 16

// nineRun is one device (sim or model) as the server of the software
// stack: IRD and ORD nineOutstanding on both ends, the device's RQ 32
// deep. With op verbs.OpRead the stack posts nineOutstanding Reads of
// 4 KiB before it takes the first completion; with verbs.OpSend the device
// posts nineOutstanding receive buffers and the stack nineOutstanding
// Sends of 4 KiB, then the completions are taken. It checks every octet
// and returns the device's CQEs in order.
func nineRun(t *testing.T, b driver.Backend, op verbs.Opcode) []hostif.CQE {
	t.Helper()
	const n, size = nineOutstanding, 4096
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPairWith(t, ctx, b, mpa.Config{IRD: n, ORD: n}, 5)
	qp, buf, mr, vqp, vbuf, vmr, relay := sp.qp, sp.buf, sp.mr, sp.vqp, sp.vbuf, sp.vmr, sp.relay
	// The device (MPA's Initiator) sends first (RFC 5044 7.1.2).
	if err := qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 10, ID: 1, LKey: mr.STag,
		LocalTO: mr.TO, RKey: vmr.STag, RemoteTO: vmr.Addr}); err != nil {
		t.Fatal(err)
	}
	cqes := sp.waitCQEs(t, ctx, b, 1)
	// The stack's data: message i at i*(size+64) + 1 of its own buffer
	// (Sends) or of the device's (Reads' sources), sinks at 128 KiB + i*size.
	at := func(i int) uint64 { return uint64(i*(size+64) + 1) }
	sinkAt := func(i int) uint64 { return uint64(128<<10 + i*size) }
	data := func(i int) []byte {
		d := make([]byte, size)
		for k := range d {
			d[k] = byte(k*11 + i*5 + k>>8)
		}
		return d
	}
	switch op {
	case verbs.OpSend:
		for i := 0; i < n; i++ {
			if err := qp.PostRecv(hostif.RQE{ID: uint64(100 + i), LKey: mr.STag, Length: size,
				LocalTO: mr.TO + sinkAt(i)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < n; i++ {
			if err := vqp.PostSend(ctx, verbs.SendWR{ID: uint64(i), Op: verbs.OpSend, Data: data(i)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < n; i++ {
			if c, err := vqp.SendCQ().Poll(ctx); err != nil || c.Err != nil {
				t.Fatalf("Send %d of %d outstanding: %+v %v; relay %v", i, n, c, err, relay.Err())
			}
		}
		got := sp.waitCQEs(t, ctx, b, n)
		for i, c := range got {
			if c.ID != uint64(100+i) || c.Status != hostif.StatusSuccess || c.Length != size {
				t.Fatalf("Send %d of %d outstanding: the device's CQE %+v", i, n, c)
			}
			if !bytes.Equal(buf.Mem[sinkAt(i):sinkAt(i)+size], data(i)) {
				t.Fatalf("Send %d of %d outstanding landed with other octets", i, n)
			}
		}
		cqes = append(cqes, got...)
	case verbs.OpRead:
		for i := 0; i < n; i++ {
			copy(buf.Mem[at(i):], data(i))
		}
		for i := 0; i < n; i++ {
			if err := vqp.PostSend(ctx, verbs.SendWR{ID: uint64(i), Op: verbs.OpRead, RemoteSTag: mr.STag,
				RemoteTO: mr.TO + at(i), Sink: vmr, SinkOffset: sinkAt(i), Len: size}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < n; i++ {
			if c, err := vqp.SendCQ().Poll(ctx); err != nil || c.Err != nil || c.Len != size {
				t.Fatalf("Read %d of %d outstanding: %+v %v; relay %v", i, n, c, err, relay.Err())
			}
		}
		for i := 0; i < n; i++ {
			if !bytes.Equal(vbuf[sinkAt(i):sinkAt(i)+size], data(i)) {
				t.Fatalf("Read %d of %d outstanding brought other octets", i, n)
			}
		}
	default:
		t.Fatalf("nineRun: op %v", op)
	}
	if err := relay.Err(); err != nil {
		t.Fatal(err)
	}
	if evs, err := sp.d.Events(); err != nil || len(evs) != 0 {
		t.Fatalf("events %v, %v", evs, err)
	}
	return cqes
}

// The simulated device keeps 16 inbound Read Requests, and 16 Sends,
// outstanding at once from the software stack and answers them all, as
// the model does (issue 30: the 9th stalled the session, no Terminate, no
// error: ddp_rx's post ring was 8 deep under rnic_rq's and rnic_rresp's
// 16 posts, the posts beyond 8 refused and lost).
func TestSimSixteenOutstanding(t *testing.T) {
	for _, c := range []struct {
		name string
		op   verbs.Opcode
	}{{"read", verbs.OpRead}, {"send", verbs.OpSend}} {
		t.Run(c.name, func(t *testing.T) {
			sim := start(t, Config{MemSize: 4 << 20})
			got := nineRun(t, sim, c.op)
			m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
				SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			want := nineRun(t, m, c.op)
			if len(got) != len(want) {
				t.Fatalf("sim CQEs %v, model %v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("CQE %d: sim %+v, model %+v", i, got[i], want[i])
				}
			}
		})
	}
}
