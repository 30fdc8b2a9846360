package simdev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// stackPair is a device (sim or model) connected to the software stack
// over loopback TCP: a QP with one CQ, a 256 KiB buffer registered with
// local access and remote read and write, and the stack's QP and 256 KiB
// buffer (remote read and write).
type stackPair struct {
	d     *driver.Device
	pd    *driver.PD
	qp    *driver.QP
	cq    *driver.CQ
	buf   *driver.Buffer
	mr    *driver.MR
	vqp   *verbs.QP
	vbuf  []byte
	vmr   *verbs.MR
	relay *driver.Relay
}

func newStackPair(t testing.TB, ctx context.Context, b driver.Backend, markers bool) *stackPair {
	t.Helper()
	return newStackPairWith(t, ctx, b, mpa.Config{Markers: markers, IRD: 1, ORD: 1}, 2)
}

// newStackPairWith is newStackPair with the MPA configuration both ends
// use (markers, IRD, ORD) and the device QP's RQ size (log2) given.
func newStackPairWith(t testing.TB, ctx context.Context, b driver.Backend, cfg mpa.Config, rqLog2 uint8) *stackPair {
	t.Helper()
	d, err := driver.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.InitDataPath(1 << 20); err != nil {
		t.Fatal(err)
	}
	if err := d.EnableVector(1); err != nil {
		t.Fatal(err)
	}
	pd := d.AllocPD()
	cq, err := d.CreateCQ(6, 1)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(6, rqLog2, cq, cq)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := d.AllocDMA(256 << 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf.Mem {
		buf.Mem[i] = byte(i*7 + i>>8)
	}
	mr, err := pd.RegisterMR(buf, 0, uint64(len(buf.Mem)),
		hostif.AccessLocalRead|hostif.AccessLocalWrite|hostif.AccessRemoteWrite|hostif.AccessRemoteRead)
	if err != nil {
		t.Fatal(err)
	}

	// The software stack's side.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	vpd := verbs.NewDevice().AllocPD()
	vbuf := make([]byte, 256<<10)
	vmr, err := vpd.RegisterMR(vbuf, verbs.RemoteWrite|verbs.RemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	vqpc := make(chan *verbs.QP, 1)
	go func() {
		q, err := verbs.Accept(ctx, vpd, ln, verbs.QPConfig{MPA: cfg, EMSS: 1460})
		if err != nil {
			t.Error(err)
		}
		vqpc <- q
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rts, p, err := driver.StartMPA(ctx, c, mpa.Initiator, cfg, qp.N, 1460)
	if err != nil {
		t.Fatal(err)
	}
	vqp := <-vqpc
	if vqp == nil {
		t.FailNow()
	}
	t.Cleanup(func() { vqp.Close() })
	relay := driver.NewRelay(b.Network())
	t.Cleanup(func() { relay.Close() })
	relay.Add(c, rts, p)
	if err := qp.RTS(rts); err != nil {
		t.Fatal(err)
	}
	if err := relay.Start(qp.N); err != nil {
		t.Fatal(err)
	}
	return &stackPair{d: d, pd: pd, qp: qp, cq: cq, buf: buf, mr: mr, vqp: vqp, vbuf: vbuf, vmr: vmr, relay: relay}
}

// sendFirst is the device's first FPDU, a signalled 10-octet Write into
// the stack's buffer, and its CQE: the device is the MPA Initiator, and the
// stack (the Responder) sends nothing before it (RFC 5044 7.1.3 rule 4).
func (sp *stackPair) sendFirst(t testing.TB, ctx context.Context, b driver.Backend) {
	t.Helper()
	if err := sp.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 10, ID: 1, LKey: sp.mr.STag,
		LocalTO: sp.mr.TO, RKey: sp.vmr.STag, RemoteTO: sp.vmr.Addr}); err != nil {
		t.Fatal(err)
	}
	sp.waitCQEs(t, ctx, b, 1)
}

// waitCQEs takes n CQEs, sleeping on vector 1 between looks.
func (sp *stackPair) waitCQEs(t testing.TB, ctx context.Context, b driver.Backend, n int) []hostif.CQE {
	t.Helper()
	var got []hostif.CQE
	irq, _ := b.Vector(1)
	for len(got) < n {
		e, ok, err := sp.cq.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, e)
			continue
		}
		if err := sp.cq.Arm(false); err != nil {
			t.Fatal(err)
		}
		select {
		case <-irq:
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("%d of %d CQEs: %v; relay %v", len(got), n, got, sp.relay.Err())
		}
	}
	return got
}

// txRun is one device (sim or model) against the software stack over
// loopback TCP: RDMA Writes and Sends of several sizes, a Read, a Write
// from the stack, with markers as asked and CRC. It returns the CQEs the
// device wrote, in order.
func txRun(t *testing.T, b driver.Backend, markers bool, sizes []int) []hostif.CQE {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPair(t, ctx, b, markers)
	d, qp, buf, mr, vqp, vbuf, vmr, relay := sp.d, sp.qp, sp.buf, sp.mr, sp.vqp, sp.vbuf, sp.vmr, sp.relay
	recvs := make([][]byte, len(sizes))
	for i := range recvs {
		recvs[i] = make([]byte, 70000)
		if err := vqp.PostRecv(uint64(i), recvs[i]); err != nil {
			t.Fatal(err)
		}
	}

	// Each size: a Write at an odd offset on both sides, then a Send of
	// the same octets; every other one signalled.
	off := uint64(0)
	for i, n := range sizes {
		src := uint64(1+i*13) % 4096
		wr := hostif.SQE{Op: hostif.OpWrite, Signaled: i%2 == 0, Length: uint32(n), ID: uint64(2 * i), LKey: mr.STag,
			LocalTO: mr.TO + src, RKey: vmr.STag, RemoteTO: vmr.Addr + off}
		if err := qp.PostSend(wr); err != nil {
			t.Fatal(err)
		}
		sd := hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: uint32(n), ID: uint64(2*i + 1), LKey: mr.STag,
			LocalTO: mr.TO + src}
		if err := qp.PostSend(sd); err != nil {
			t.Fatal(err)
		}
		rc, err := vqp.RecvCQ().Poll(ctx)
		if err != nil || rc.Err != nil || rc.Len != n {
			t.Fatalf("size %d: the stack's receive %+v, %v; relay %v", n, rc, err, relay.Err())
		}
		want := buf.Mem[src : src+uint64(n)]
		if !bytes.Equal(recvs[rc.ID][:n], want) || !bytes.Equal(vbuf[off:off+uint64(n)], want) {
			t.Fatalf("size %d: the Write or the Send arrived with other octets", n)
		}
		off += uint64(n)
	}
	// A Read of what the Writes put in the stack's buffer, into the
	// device's buffer at 128 KiB: the Read Request goes out through the
	// SQ engine, the Read Responses come in through rnic_rx and are
	// placed by DMA; the last completes the Read.
	const readAt, readLen = 128 << 10, 70000
	if err := qp.PostSend(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: readLen, ID: 1000, LKey: mr.STag,
		LocalTO: mr.TO + readAt, RKey: vmr.STag, RemoteTO: vmr.Addr + 5}); err != nil {
		t.Fatal(err)
	}
	// The stack Writes into the device's buffer at 200 KiB + 3: placed
	// by the device's receive side through its STag table.
	pw := make([]byte, 5000)
	for i := range pw {
		pw[i] = byte(i*11 + 5)
	}
	const writeAt = 200<<10 + 3
	if err := vqp.PostSend(ctx, verbs.SendWR{Op: verbs.OpWrite, Data: pw, RemoteSTag: mr.STag, RemoteTO: mr.TO + writeAt,
		Unsignaled: true}); err != nil {
		t.Fatal(err)
	}
	for !bytes.Equal(buf.Mem[writeAt:writeAt+len(pw)], pw) {
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("the stack's Write did not land in the device's memory; relay %v", relay.Err())
		}
	}
	fillAt := func(i int) byte { return byte(i*7 + i>>8) }
	if buf.Mem[writeAt-1] != fillAt(writeAt-1) || buf.Mem[writeAt+len(pw)] != fillAt(writeAt+len(pw)) {
		t.Fatal("the stack's Write touched octets beside its target")
	}

	// The CQEs: every signalled entry, in SQ order.
	want := 1
	for i := range sizes {
		want += 1 + (i+1)%2
	}
	got := sp.waitCQEs(t, ctx, b, want)
	if !bytes.Equal(buf.Mem[readAt:readAt+readLen], vbuf[5:5+readLen]) {
		t.Fatal("the Read brought other octets")
	}
	if err := relay.Err(); err != nil {
		t.Fatal(err)
	}
	if evs, err := d.Events(); err != nil || len(evs) != 0 {
		t.Fatalf("events %v, %v", evs, err)
	}
	return got
}

// rxRun is the receive side of one device (sim or model) against the
// software stack: the device posts receive buffers (RQ entries at odd
// offsets, one of length 0), the stack Sends into them (Send, Send with
// SE, and a Send with Invalidate of a second MR of the device's, every
// size from 0 to 65536 across the MULPDU), then RDMA Reads the device's
// memory (1 to 70000 octets: the Read responder's source reads and Read
// Responses). It checks every octet on both sides and returns the CQEs
// the device wrote, in order.
func rxRun(t *testing.T, b driver.Backend, markers bool) []hostif.CQE {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPair(t, ctx, b, markers)
	d, qp, buf, mr, vqp, vbuf, vmr, relay := sp.d, sp.qp, sp.buf, sp.mr, sp.vqp, sp.vbuf, sp.vmr, sp.relay
	// A second MR over the buffer's last 4 KiB, for the Send with
	// Invalidate (RFC 5040 5.4: the device's MR is invalid after it).
	mr2, err := sp.pd.RegisterMR(buf, 252<<10, 4<<10, hostif.AccessLocalRead|hostif.AccessRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	type send struct {
		op  verbs.Opcode
		n   int
		inv uint32
	}
	sends := []send{{verbs.OpSend, 0, 0}, {verbs.OpSend, 1, 0}, {verbs.OpSendSE, 100, 0}, {verbs.OpSend, 1500, 0},
		{verbs.OpSendInv, 4096, mr2.STag}, {verbs.OpSendSE, 9000, 0}, {verbs.OpSend, 20000, 0}, {verbs.OpSend, 65536, 0}}
	// The device (MPA's Initiator) sends first (RFC 5044 7.1.2: the
	// Responder sends nothing before the Initiator's first FPDU): a Write
	// of 10 octets into the stack's buffer.
	if err := qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 10, ID: 1, LKey: mr.STag,
		LocalTO: mr.TO, RKey: vmr.STag, RemoteTO: vmr.Addr}); err != nil {
		t.Fatal(err)
	}
	cqes := sp.waitCQEs(t, ctx, b, 1)
	// Each receive buffer a little larger than its Send, at an odd offset.
	at := make([]uint64, len(sends))
	off := uint64(3)
	post := func(i int) {
		at[i] = off
		if err := qp.PostRecv(hostif.RQE{ID: uint64(100 + i), LKey: mr.STag, Length: uint32(sends[i].n + 7),
			LocalTO: mr.TO + off}); err != nil {
			t.Fatal(err)
		}
		off += uint64(sends[i].n) + 64 + 1
	}
	// The RQ holds 4: two posted ahead, then one more behind each Send.
	post(0)
	post(1)
	for i, s := range sends {
		if i+2 < len(sends) {
			post(i + 2)
		}
		data := make([]byte, s.n)
		for k := range data {
			data[k] = byte(k*13 + i)
		}
		if err := vqp.PostSend(ctx, verbs.SendWR{ID: uint64(i), Op: s.op, Data: data, InvalidateSTag: s.inv}); err != nil {
			t.Fatal(err)
		}
		if c, err := vqp.SendCQ().Poll(ctx); err != nil || c.Err != nil {
			t.Fatalf("Send %d (%d octets): %+v %v; relay %v", i, s.n, c, err, relay.Err())
		}
		got := sp.waitCQEs(t, ctx, b, 1)[0]
		cqes = append(cqes, got)
		if got.ID != uint64(100+i) || got.Status != hostif.StatusSuccess || got.Length != uint32(s.n) {
			t.Fatalf("Send %d (%d octets): the device's CQE %+v", i, s.n, got)
		}
		if !bytes.Equal(buf.Mem[at[i]:at[i]+uint64(s.n)], data) {
			t.Fatalf("Send %d (%d octets) landed with other octets", i, s.n)
		}
	}
	// The stack Reads the device's memory.
	for i, n := range []int{1, 1000, 70000} {
		src := uint64(100<<10 + 17*i)
		for k := 0; k < n; k++ {
			buf.Mem[src+uint64(k)] = byte(k*3 + i)
		}
		sink := uint64(1000 * (i + 1))
		if err := vqp.PostSend(ctx, verbs.SendWR{ID: uint64(50 + i), Op: verbs.OpRead, RemoteSTag: mr.STag,
			RemoteTO: mr.TO + src, Sink: vmr, SinkOffset: sink, Len: uint32(n)}); err != nil {
			t.Fatal(err)
		}
		if c, err := vqp.SendCQ().Poll(ctx); err != nil || c.Err != nil || c.Len != n {
			t.Fatalf("Read of %d octets: %+v %v; relay %v", n, c, err, relay.Err())
		}
		if !bytes.Equal(vbuf[sink:sink+uint64(n)], buf.Mem[src:src+uint64(n)]) {
			t.Fatalf("the Read of %d octets brought other octets", n)
		}
	}
	if err := relay.Err(); err != nil {
		t.Fatal(err)
	}
	if evs, err := d.Events(); err != nil || len(evs) != 0 {
		t.Fatalf("events %v, %v", evs, err)
	}
	// The Send with Invalidate left the second MR invalid: MR_INVALIDATE
	// of it is refused (BAD_STATE).
	var ae *driver.AdminError
	if _, err := d.Exec(hostif.MRInvalidate{Index: uint32(mr2.Index)}); !errors.As(err, &ae) ||
		ae.Status != hostif.AdminBadState {
		t.Fatalf("MR_INVALIDATE of the MR the peer's Send invalidated: %v, want BAD_STATE", err)
	}
	return cqes
}

// The simulated device against the software stack, end to end: its SQ engine fetches the
// entries and payload by DMA from host memory (the memfd), rnic_tx frames
// them, the relay carries its segments to a kernel TCP socket, and the
// software stack (iwarp/verbs) checks every CRC and marker and places
// them; its CQ writer completes the signalled entries with the phase bit
// and raises the vector. A Read of 70000 octets goes out as a Read Request
// and its Read Responses come back through rnic_rx and are placed by DMA;
// the stack's own RDMA Write is placed in the device's memory through its
// STag table, not an octet beside it. The same run on the model gives the
// same CQEs.
func TestSimAgainstStack(t *testing.T) {
	sizes := []int{1, 63, 1000, 4096, 9000, 65536}
	for _, markers := range []bool{false, true} {
		t.Run(fmt.Sprintf("markers=%v", markers), func(t *testing.T) {
			sim := start(t, Config{MemSize: 4 << 20})
			got := txRun(t, sim, markers, sizes)
			m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
				SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			want := txRun(t, m, markers, sizes)
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

// The simulated device's receive side against the software stack, end to
// end: the RQ engine fetches the RQ entries by DMA and posts them to
// ddp_rx, the stack's Sends are placed into them and complete as receive
// CQEs (with the SE flag and the invalidated STag, whose MR is then
// invalid in the admin table too); the stack's RDMA Reads go through the
// Read responder (the device's own Read Request buffers, the source check
// and read, the Read Responses through rnic_tx). The model gives the same
// CQEs.
func TestSimReceiveAgainstStack(t *testing.T) {
	for _, markers := range []bool{false, true} {
		t.Run(fmt.Sprintf("markers=%v", markers), func(t *testing.T) {
			sim := start(t, Config{MemSize: 4 << 20})
			got := rxRun(t, sim, markers)
			m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
				SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			want := rxRun(t, m, markers)
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

// BenchmarkSimWrite64K measures the simulated device's send side: 64 KiB
// RDMA Writes from host memory to the software stack over loopback TCP,
// 16 posted back to back, every 16th signalled, b.N of them. Figures:
// goodput as a fraction of DATA_W/8 octets a clock (the datapath's
// clock-limited rate; the FPDUs' headers, CRCs and markers take the rest),
// from the device's own clock count; simulated clocks a second of wall
// time (the process runs the clock only while the device has work).
//
//	go test -run '^$' -bench SimWrite64K -benchtime 64x ./driver/simdev
func BenchmarkSimWrite64K(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sim := start(b, Config{MemSize: 8 << 20})
	sp := newStackPair(b, ctx, sim, false)
	const size, batch = 64 << 10, 16
	// The source: the pair's buffer, at offsets 0, 1, 2, 3 (x 64 KiB + 1).
	c0, err := sim.Run(0)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		n := min(batch, b.N-i)
		for k := range n {
			src := uint64(k%3)*size + uint64(k%4)
			e := hostif.SQE{Op: hostif.OpWrite, Signaled: k == n-1, Length: size, ID: uint64(i + k), LKey: sp.mr.STag,
				LocalTO: sp.mr.TO + src, RKey: sp.vmr.STag, RemoteTO: sp.vmr.Addr + uint64(k%3)*size}
			if err := sp.qp.PostSend(e); err != nil {
				b.Fatal(err)
			}
		}
		if got := sp.waitCQEs(b, ctx, sim, 1); got[0].Status != hostif.StatusSuccess {
			b.Fatalf("CQE %v", got[0])
		}
	}
	b.StopTimer()
	wall := time.Since(t0)
	c1, err := sim.Run(0)
	if err != nil {
		b.Fatal(err)
	}
	clocks := float64(c1 - c0)
	b.ReportMetric(float64(b.N)*size/(clocks*float64(sp.d.Map.DataWidth/8)), "goodput/clock-rate")
	b.ReportMetric(clocks/wall.Seconds(), "clocks/s")
	b.ReportMetric(clocks/float64(b.N), "clocks/op")
	b.SetBytes(size)
}

// excRun gives one device (sim or model) segments its data path does not
// take, through its network seam: for QPs never created (reason
// not enabled: 100 octets, then 5000 octets over three buffers of the
// exception ring, then an empty one: the QP's state comes first). It
// returns the exception ring's buffers and the events, once all have come.
func excRun(t *testing.T, b driver.Backend) ([]driver.Exception, []hostif.Event) {
	t.Helper()
	d, err := driver.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.InitDataPath(1 << 20); err != nil {
		t.Fatal(err)
	}
	big := excBig()
	for _, s := range []driver.Segment{{QPN: 5, Seq: 1000, Octets: big[:100]}, {QPN: 7, Seq: 0xfffff000, Octets: big},
		{QPN: 2, Seq: 77}} {
		if err := b.Network().SegIn(s); err != nil {
			t.Fatal(err)
		}
	}
	var exc []driver.Exception
	var evs []hostif.Event
	for deadline := time.Now().Add(30 * time.Second); len(exc) < 5 || len(evs) < 5; {
		if time.Now().After(deadline) {
			t.Fatalf("exceptions %v, events %v after 30 s", exc, evs)
		}
		// Events first: the EXCEPTION events announce the buffers.
		e, err := d.Events()
		if err != nil {
			t.Fatal(err)
		}
		x, err := d.Exceptions()
		if err != nil {
			t.Fatal(err)
		}
		exc, evs = append(exc, x...), append(evs, e...)
		time.Sleep(5 * time.Millisecond)
	}
	return exc, evs
}

// excBig is excRun's 5000-octet segment.
func excBig() []byte {
	big := make([]byte, 5000)
	for i := range big {
		big[i] = byte(i*5 + 1)
	}
	return big
}

// The simulated device's exception ring writer (rnic_exc) against the
// model: the same buffers (headers and octets, a 5000-octet segment cut
// over three 2 KiB buffers) and the same EXCEPTION events, for segments
// of QPs not enabled (an empty one too); the input goes on after them.
func TestSimExceptionRing(t *testing.T) {
	sim := start(t, Config{MemSize: 4 << 20})
	gotX, gotE := excRun(t, sim)
	m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
		SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	wantX, wantE := excRun(t, m)
	if fmt.Sprintf("%v %x", gotX, gotX) != fmt.Sprintf("%v %x", wantX, wantX) {
		t.Fatalf("exception buffers:\nsim   %v\nmodel %v", gotX, wantX)
	}
	if fmt.Sprint(gotE) != fmt.Sprint(wantE) {
		t.Fatalf("events:\nsim   %v\nmodel %v", gotE, wantE)
	}
	// The 5000-octet segment, whole across its three buffers.
	var all []byte
	for _, x := range gotX[1:min(4, len(gotX))] {
		all = append(all, x.Octets...)
	}
	if len(gotX) != 5 || gotX[0].Reason != hostif.ExcNotEnabled || gotX[4].Reason != hostif.ExcNotEnabled ||
		gotX[4].Length != 0 || !bytes.Equal(all, excBig()) {
		t.Fatalf("exception buffers %v", gotX)
	}
}
