package simdev

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/mirror"
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
