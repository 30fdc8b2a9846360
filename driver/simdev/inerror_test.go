package simdev

import (
	"fmt"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// inErrOutcome is what inErrRun saw on one device: the events (in ring
// order), the exception ring's buffers, the counters block by name.
type inErrOutcome struct {
	events   []hostif.Event
	exc      []driver.Exception
	counters map[string]uint64
}

// inErrRun puts one device's QP in RTS (markers and CRC on, the peer's
// stream from sequence number rxBase), fails it with an RDMA Write
// through an STag whose key is wrong (RFC 5041 7.2: DDP Tagged Buffer,
// invalid STag), waits for QP_ERROR, and then gives it more segments of
// the same stream: the next Write's FPDUs, in order (3000 octets: two
// buffers of the exception ring), a retransmission of the first
// segment (a duplicate had the QP been up), and an empty segment. The
// model's segIn (driver/model/rx.go) hands each to the exception ring with
// reason in error, the QP's state coming before every other reason. It
// returns once wantExc exception buffers (or, for the model, whatever
// the model wrote) are announced.
func inErrRun(t *testing.T, b driver.Backend, wantExc int) inErrOutcome {
	t.Helper()
	const rxBase = 0x7fff_f000 // a stream crossing 2^31
	d, err := driver.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.InitDataPath(1 << 20); err != nil {
		t.Fatal(err)
	}
	pd := d.AllocPD()
	cq, err := d.CreateCQ(6, 0)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(4, 2, cq, cq)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := d.AllocDMA(64 << 10)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := pd.RegisterMR(buf, 0, uint64(len(buf.Mem)), hostif.AccessLocalRead|hostif.AccessLocalWrite|hostif.AccessRemoteWrite)
	if err != nil {
		t.Fatal(err)
	}
	flags := hostif.RTSMarkersTx | hostif.RTSMarkersRx | hostif.RTSCRCTx | hostif.RTSCRCRx
	if err := qp.RTS(hostif.QPRTS{IRD: 1, ORD: 1, MULPDU: uint16(mpa.MULPDU(1460, true)), Flags: flags,
		TxMarkerBase: 1000, RxMarkerBase: rxBase, TxSeq: 1000, RxSeq: rxBase, RxMSNSend: 1, RxMSNReadRq: 1}); err != nil {
		t.Fatal(err)
	}
	// The device's Terminate goes out on the seam; nobody reads it here.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-b.Network().SegOut():
			case <-stop:
				return
			}
		}
	}()
	// The peer's stream: each message's DDP segments framed into FPDUs,
	// one TCP segment per message.
	f := mpa.NewFramer(true, true, rxBase)
	seq := uint32(rxBase)
	message := func(m rdmap.Message) driver.Segment {
		ddps, err := m.AppendSegments(nil, mpa.MULPDU(1460, true))
		if err != nil {
			t.Fatal(err)
		}
		s := driver.Segment{QPN: qp.N, Seq: seq}
		for _, u := range ddps {
			if s.Octets, err = f.AppendFPDU(s.Octets, u, nil); err != nil {
				t.Fatal(err)
			}
		}
		seq += uint32(len(s.Octets))
		return s
	}
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i*13 + 7)
	}
	bad := message(rdmap.NewWrite(mr.STag^0x5a, mr.TO, data[:100]))
	if err := b.Network().SegIn(bad); err != nil {
		t.Fatal(err)
	}
	var out inErrOutcome
	deadline := time.Now().Add(30 * time.Second)
	poll := func() {
		evs, err := d.Events()
		if err != nil {
			t.Fatal(err)
		}
		x, err := d.Exceptions()
		if err != nil {
			t.Fatal(err)
		}
		out.events, out.exc = append(out.events, evs...), append(out.exc, x...)
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: events %v, exceptions %v", out.events, out.exc)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for len(out.events) == 0 {
		poll()
	}
	if out.events[0].Type != hostif.EventQPError {
		t.Fatalf("the Write through a bad STag raised %v, not QP_ERROR", out.events)
	}
	for _, s := range []driver.Segment{
		message(rdmap.NewWrite(mr.STag, mr.TO, data)),
		message(rdmap.NewWrite(mr.STag, mr.TO+4096, data[:40])),
		bad,
		{QPN: qp.N, Seq: seq},
	} {
		if err := b.Network().SegIn(s); err != nil {
			t.Fatal(err)
		}
	}
	if wantExc < 0 {
		// The model: every segment is handled by now.
		poll()
	}
	for len(out.exc) < wantExc {
		poll()
	}
	// Nothing more comes.
	time.Sleep(100 * time.Millisecond)
	poll()
	out.counters = counters(t, b)
	return out
}

// After a QP fails, the peer's segments on it go to the exception ring
// with reason in error, as the model's (driver/model/rx.go segIn: a QP in
// the error state), the QP's state coming before every other reason (an
// old segment and an empty one are in error, not duplicate or empty):
// the simulated device's exception buffers (headers and octets), events
// and counters (rx_exc_in_error: one per buffer) are the model's. The
// device marks the connection in rnic_rx's MPA when the QP enters the
// error state (rnic_dev: the qerr record, rnic_rx's fail_*).
func TestSimInErrorSegmentsAgainstModel(t *testing.T) {
	m, err := model.New(model.Config{QPs: 64, CQs: 64, STags: 1024, Vectors: 4, Windows: 16,
		SQLog2: 10, RQLog2: 10, CQLog2: 12, DataWidth: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := inErrRun(t, m, -1)
	inErr := 0
	for _, x := range want.exc {
		if x.Reason == hostif.ExcInError {
			inErr++
		}
	}
	// The model's own account: 3000 octets over two buffers, then one
	// each for the short Write, the old segment and the empty one.
	if len(want.exc) != 5 || inErr != 5 || want.counters["rx_exc_in_error"] != 5 {
		t.Fatalf("model: exceptions %v, counters %v: not five buffers in error", want.exc, want.counters)
	}
	sim := start(t, Config{MemSize: 4 << 20})
	got := inErrRun(t, sim, len(want.exc))
	if fmt.Sprintf("%v %x", got.exc, got.exc) != fmt.Sprintf("%v %x", want.exc, want.exc) {
		t.Errorf("exception buffers:\nsim   %v\nmodel %v", got.exc, want.exc)
	}
	if fmt.Sprint(got.events) != fmt.Sprint(want.events) {
		t.Errorf("events:\nsim   %v\nmodel %v", got.events, want.events)
	}
	// Every counter but one whose difference has nothing to do with the
	// segments after the failure: dma_writes (the device counts the
	// failing Write's ULPDU as it enters ddp_rx, the model only a
	// placement done).
	for name, v := range want.counters {
		if name == "dma_writes" {
			continue
		}
		if got.counters[name] != v {
			t.Errorf("counter %s: sim %d, model %d", name, got.counters[name], v)
		}
	}
}
