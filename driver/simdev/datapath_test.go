package simdev

import (
	"bytes"
	"context"
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
// local access and remote write, and the stack's QP and 256 KiB buffer
// (remote read and write).
type stackPair struct {
	d     *driver.Device
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
	qp, err := pd.CreateQP(6, 2, cq, cq)
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
		hostif.AccessLocalRead|hostif.AccessLocalWrite|hostif.AccessRemoteWrite)
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
	cfg := mpa.Config{Markers: markers, IRD: 1, ORD: 1}
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
	return &stackPair{d: d, qp: qp, cq: cq, buf: buf, mr: mr, vqp: vqp, vbuf: vbuf, vmr: vmr, relay: relay}
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

// BenchmarkSimWrite64K measures the simulated device's send side: 64 KiB
// RDMA Writes from host memory to the software stack over loopback TCP,
// 16 posted back to back, every 16th signalled, b.N of them. Figures:
// goodput as a fraction of DATA_W/8 octets a clock (the datapath's
// clock-limited rate; the FPDUs' headers, CRCs and markers take the rest),
// from the device's own clock count; simulated clocks a second of wall
// time (the process runs the clock only while the device has work).
//
//	go test -run XXX -bench SimWrite64K -benchtime 64x ./driver/simdev
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
