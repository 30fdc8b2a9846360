package simdev

import (
	"bytes"
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/mirror"
	"github.com/openrnic/rnic/driver/wiretest"
)

// mirrored is the simulated device with the model beside it
// (driver/mirror): every input reaches both, and the test fails at the
// first difference in wire octets or host memory the two write.
func mirrored(t *testing.T, cfg Config) *mirror.Backend {
	t.Helper()
	m, err := mirror.New(start(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// The runs of TestSimAgainstStack and TestSimReceiveAgainstStack with the
// mirror on: Writes, Sends, a Read as requester, the stack's Write and
// Reads and Sends into the device, markers one way. Every octet the device
// sends and every octet its DMA writes (CQEs, placed data, the Read
// Responses' data) is the model's, in the same order, with nothing left
// over on either side.
func TestMirrorAgainstStack(t *testing.T) {
	for _, run := range []struct {
		name string
		f    func(*testing.T, *mirror.Backend)
	}{
		{"tx", func(t *testing.T, m *mirror.Backend) { txRun(t, m, true, []int{1, 63, 4096, 9000, 65536}) }},
		{"rx", func(t *testing.T, m *mirror.Backend) { rxRun(t, m, false) }},
	} {
		t.Run(run.name, func(t *testing.T) {
			m := mirrored(t, Config{MemSize: 4 << 20})
			run.f(t, m)
			if err := m.Check(); err != nil {
				t.Fatal(err)
			}
			s := m.Stats()
			t.Logf("compared: %+v", s)
			// What the run must have compared: the payload sent and
			// the octets placed (the Read's 70000, or the stack's
			// Sends), and the driver's descriptors copied.
			if s.WireOctets < 20000 || s.MemOctets < 5000 || s.DriverBytes == 0 || s.Inputs < 20 {
				t.Fatalf("the mirror compared too little to mean anything: %+v", s)
			}
		})
	}
}

// The mirror finds a difference: the model is made to fail the QP (as a
// local fault of one of its engines would) while the device carries on;
// the next Write goes out from the device as data and from the model not
// at all (its Terminate went instead), and completes successfully on the
// device but flushed on the model. The mirror names where the two part.
func TestMirrorFindsADifference(t *testing.T) {
	m := mirrored(t, Config{MemSize: 4 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := newStackPair(t, ctx, m, false)
	post := func(id uint64) {
		t.Helper()
		if err := sp.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Signaled: true, Length: 1000, ID: id,
			LKey: sp.mr.STag, LocalTO: sp.mr.TO, RKey: sp.vmr.STag, RemoteTO: sp.vmr.Addr}); err != nil {
			t.Fatal(err)
		}
	}
	post(1)
	sp.waitCQEs(t, ctx, m, 1)
	if err := m.Check(); err != nil {
		t.Fatalf("before the fault: %v", err)
	}
	m.Shadow().InjectLocalFault(uint16(sp.qp.N))
	post(2) // the device sends it; the model flushes it
	var err error
	for i := 0; i < 50 && err == nil; i++ {
		time.Sleep(20 * time.Millisecond)
		err = m.Err()
	}
	if err == nil {
		err = m.Check()
	}
	t.Logf("the mirror: %v", err)
	re := regexp.MustCompile(`^mirror: (QP \d+'s wire octets differ: FPDU \d+ of its .* at ULPDU octet \d+|host memory at 0x[0-9a-f]+ .*the device wrote)`)
	if err == nil || !re.MatchString(err.Error()) {
		t.Fatalf("the mirror's error %v: want the first difference named", err)
	}
	// Every later input fails with it: the run stops at the difference.
	if err2 := sp.qp.PostSend(hostif.SQE{Op: hostif.OpWrite, Length: 1, LKey: sp.mr.STag, LocalTO: sp.mr.TO,
		RKey: sp.vmr.STag, RemoteTO: sp.vmr.Addr}); err2 == nil {
		t.Fatal("a post after the difference was taken")
	}
}

// Early placement under the mirror (issue 30): with markers, the device
// places the FPDUs inside an out-of-order segment before the host gives
// the segment back (rnic_rx.v, mpa_rx_ooo), once for each copy it
// searches, and again in order. The model's Write reaches the device with
// its second segment first, twice (a duplicate on the wire), and then the
// first: the device has placed the second segment's payload before the
// hole closed, twice, and the mirror must take those writes for the
// model's (model.PlaceEarly) and find nothing left over at Check.
func TestMirrorEarlyPlacement(t *testing.T) {
	m := mirrored(t, Config{MemSize: 8 << 20})
	peer := newModel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var dev, mod *wiretest.End
	var err error
	if dev, err = wiretest.NewEnd(m, 0); err != nil {
		t.Fatal(err)
	}
	if mod, err = wiretest.NewEnd(peer, 0x5a); err != nil {
		t.Fatal(err)
	}
	// The model is the Initiator: its first FPDU may go at once.
	if err := wiretest.Connect(ctx, mod, dev, true); err != nil {
		t.Fatal(err)
	}
	dev.X.Add(dev.QP.N, dev.RTS.RxSeq)
	sizes := []int{4000}
	if _, err := wiretest.PostRecvs(dev, sizes); err != nil {
		t.Fatal(err)
	}
	if _, err := wiretest.PostSends(mod, dev, sizes, false); err != nil { // a Write and a Send
		t.Fatal(err)
	}
	segs := peer.TakeSegments()
	if len(segs) < 3 {
		t.Fatalf("the model sent %d segments for a 4000-octet Write and Send; want at least 3", len(segs))
	}
	sink := dev.Buf.Mem[wiretest.Region : wiretest.Region+sizes[0]] // the Write's sink (wiretest's wsink)
	feed := func(s driver.Segment) {
		t.Helper()
		if err := dev.X.SegIn(s); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Primary().Run(5000); err != nil { // mpa_rx_ooo searches it meanwhile
			t.Fatal(err)
		}
		if err := dev.X.Service(); err != nil {
			t.Fatal(err)
		}
	}
	feed(segs[1])
	feed(segs[1])
	if bytes.Count(sink, []byte{0}) == len(sink) {
		t.Fatal("the device placed nothing of the out-of-order segment early: the test cannot see what it is about")
	}
	for i, s := range segs {
		if i != 1 {
			feed(s)
		}
	}
	if err := dev.X.Settle(1000); err != nil {
		t.Fatal(err)
	}
	var recv []hostif.CQE
	for len(recv) == 0 {
		_, r, err := wiretest.Poll(dev)
		if err != nil {
			t.Fatal(err)
		}
		recv = r
		select {
		case <-ctx.Done():
			t.Fatal("the device completed no receive for the model's Send")
		case <-time.After(time.Millisecond):
		}
	}
	if err := dev.X.Err(); err != nil {
		t.Fatal(err)
	}
	if st := dev.X.Stats(); st.OutOfOrder != 2 || st.Reoffered != 1 {
		t.Fatalf("the host handled %+v; want the second segment twice out of order and once offered again", st)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sink, mod.Buf.Mem[:sizes[0]]) {
		t.Fatal("the Write's octets in the device's memory are not the model's source")
	}
	if s := m.Stats(); s.EarlyULPDUs == 0 {
		t.Fatalf("the mirror's shadow placed nothing early: %+v", s)
	}
	t.Logf("compared: %+v", m.Stats())
}
