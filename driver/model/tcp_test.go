package model_test

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// waitCQEs takes n CQEs, sleeping on the CQ's interrupt between looks:
// the relay's goroutines drive the device, and the interrupt orders its
// CQE writes before this goroutine's reads.
func (h *host) waitCQEs(ctx context.Context, n int) []hostif.CQE {
	h.t.Helper()
	irq, err := h.m.Vector(0)
	if err != nil {
		h.t.Fatal(err)
	}
	var got []hostif.CQE
	for {
		got = append(got, h.poll()...)
		if len(got) >= n {
			return got
		}
		// Armed with the consumer index, then looked at again: an
		// entry written in between is seen now, a later one raises
		// the vector.
		if got = append(got, h.pollArm(driver.CQArm)...); len(got) >= n {
			return got
		}
		select {
		case <-irq:
		case <-ctx.Done():
			h.t.Fatalf("%d of %d CQEs before the deadline: %v; events %v; QP %+v", len(got), n, got, h.events(), h.m.Tables().QPs[h.qpn])
		}
	}
}

// A model device and the software stack (iwarp/verbs) over a loopback TCP
// socket, the model's side relayed by the driver: the MPA startup in host
// software, QP_RTS with its outcome, then octets between the socket and
// the seam. A Write, a Send and a Read each way, every octet checked: the
// verbs side's MPA receiver checks the model's CRCs and markers, and the
// model's the stack's.
func TestModelAgainstVerbs(t *testing.T) {
	for _, c := range []struct {
		name     string
		role     mpa.Role // the model's
		markers  bool     // each side asks for markers
		noCRC    bool
		modelEMS int
	}{
		{name: "model initiates, markers and CRCs", role: mpa.Initiator, markers: true, modelEMS: 1460},
		{name: "model responds, no markers", role: mpa.Responder, modelEMS: 9000},
		{name: "model responds, markers, no CRCs", role: mpa.Responder, markers: true, noCRC: true, modelEMS: 600},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			h := newHost(t, 5)
			vec := h.d.Map.VectorsBase() + regs.VectorsVec - regs.VectorsBase
			h.m.Write32(vec+regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask)

			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			dev := verbs.NewDevice()
			pd := dev.AllocPD()
			vcfg := verbs.QPConfig{MPA: mpa.Config{Markers: c.markers, NoCRC: c.noCRC, IRD: 4, ORD: 4}, EMSS: 1460}
			mcfg := mpa.Config{Markers: c.markers, NoCRC: c.noCRC, IRD: 4, ORD: 4}
			vqpc := make(chan *verbs.QP, 1)
			verr := make(chan error, 1)
			var mconn net.Conn
			if c.role == mpa.Initiator {
				go func() {
					qp, err := verbs.Accept(ctx, pd, ln, vcfg)
					verr <- err
					vqpc <- qp
				}()
				if mconn, err = net.Dial("tcp", ln.Addr().String()); err != nil {
					t.Fatal(err)
				}
			} else {
				go func() {
					qp, err := verbs.Dial(ctx, pd, ln.Addr().String(), vcfg)
					verr <- err
					vqpc <- qp
				}()
				if mconn, err = ln.Accept(); err != nil {
					t.Fatal(err)
				}
			}
			rts, params, err := driver.StartMPA(ctx, mconn, c.role, mcfg, 5, c.modelEMS)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-verr; err != nil {
				t.Fatal(err)
			}
			vqp := <-vqpc
			defer vqp.Close()
			relay := driver.NewRelay(h.m.Network())
			relay.Add(mconn, rts, params)
			defer relay.Close()
			h.ok(rts)
			if err := relay.Start(rts.QPN); err != nil {
				t.Fatal(err)
			}

			vbuf := make([]byte, 64<<10)
			vmr, err := pd.RegisterMR(vbuf, verbs.RemoteWrite|verbs.RemoteRead)
			if err != nil {
				t.Fatal(err)
			}
			lk := stag(1, fullKey)
			fill(h.data[:8192], 0x21)
			fill(vbuf[32<<10:40<<10], 0x42)
			vrecv := make([]byte, 200)
			if err := vqp.PostRecv(0xa1, vrecv); err != nil {
				t.Fatal(err)
			}
			h.recv(hostif.RQE{ID: 0xb1, LKey: lk, Length: 300, LocalTO: dataTO + 256<<10})

			// The initiator speaks first (RFC 5044 7.1.3 rule 4):
			// when the model responds, the verbs side goes first.
			modelToVerbs := func() {
				// model → verbs: a Write of 3000, then a Send of 100
				// (its completion says the Write was placed).
				h.post(hostif.SQE{Op: hostif.OpWrite, Length: 3000, ID: 1, LKey: lk, LocalTO: dataTO, RKey: vmr.STag, RemoteTO: vmr.Addr + 1000})
				h.post(hostif.SQE{Op: hostif.OpSend, Signaled: true, Length: 100, ID: 2, LKey: lk, LocalTO: dataTO + 5000})
				rc, err := vqp.RecvCQ().Poll(ctx)
				if err != nil || rc.Err != nil || rc.ID != 0xa1 || rc.Len != 100 {
					t.Fatalf("verbs receive %+v, %v", rc, err)
				}
				if !bytes.Equal(vbuf[1000:4000], h.data[:3000]) || !bytes.Equal(vrecv[:100], h.data[5000:5100]) ||
					vbuf[999] != 0 || vbuf[4000] != 0 {
					t.Fatal("the model's Write or Send arrived wrong")
				}
				// model ← verbs: a Read of 5000 octets.
				h.post(hostif.SQE{Op: hostif.OpRead, Signaled: true, Length: 5000, ID: 3, LKey: lk, LocalTO: dataTO + 128<<10,
					RKey: vmr.STag, RemoteTO: vmr.Addr + 32<<10})
				got := h.waitCQEs(ctx, 2)
				want := []hostif.CQE{{ID: 2, Length: 100, QPN: 5, Op: hostif.OpSend, Phase: true},
					{ID: 3, Length: 5000, QPN: 5, Op: hostif.OpRead, Phase: true}}
				if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
					t.Fatalf("model CQEs %v, want %v", got, want)
				}
				if !bytes.Equal(h.data[128<<10:128<<10+5000], vbuf[32<<10:32<<10+5000]) {
					t.Fatal("the model's Read brought other octets")
				}
			}
			verbsToModel := func() {
				// verbs → model: a Write of 2000, then a Send of 50.
				src := make([]byte, 2000)
				fill(src, 0x63)
				if err := vqp.PostSend(ctx, verbs.SendWR{ID: 11, Op: verbs.OpWrite, Data: src, RemoteSTag: lk, RemoteTO: dataTO + 64<<10, Unsignaled: true}); err != nil {
					t.Fatal(err)
				}
				if err := vqp.PostSend(ctx, verbs.SendWR{ID: 12, Op: verbs.OpSend, Data: src[:50]}); err != nil {
					t.Fatal(err)
				}
				got := h.waitCQEs(ctx, 1)
				if len(got) != 1 || got[0] != (hostif.CQE{ID: 0xb1, Length: 50, QPN: 5, Op: hostif.OpRecv, Phase: got[0].Phase}) {
					t.Fatalf("model CQEs %v", got)
				}
				if !bytes.Equal(h.data[64<<10:64<<10+2000], src) || !bytes.Equal(h.data[256<<10:256<<10+50], src[:50]) ||
					h.data[64<<10+2000] != 0 || h.data[256<<10+50] != 0 {
					t.Fatal("the stack's Write or Send arrived wrong")
				}
				// verbs ← model: a Read of 3000 octets.
				if err := vqp.PostSend(ctx, verbs.SendWR{ID: 13, Op: verbs.OpRead, Sink: vmr, SinkOffset: 16 << 10, Len: 3000,
					RemoteSTag: lk, RemoteTO: dataTO + 2000}); err != nil {
					t.Fatal(err)
				}
				for _, id := range []uint64{12, 13} {
					sc, err := vqp.SendCQ().Poll(ctx)
					if err != nil || sc.Err != nil || sc.ID != id {
						t.Fatalf("verbs send completion %+v, %v; want %d", sc, err, id)
					}
				}
				if !bytes.Equal(vbuf[16<<10:16<<10+3000], h.data[2000:5000]) {
					t.Fatal("the stack's Read of the model brought other octets")
				}
			}
			if c.role == mpa.Initiator {
				modelToVerbs()
				verbsToModel()
			} else {
				verbsToModel()
				modelToVerbs()
			}
			if err := relay.Err(); err != nil {
				t.Fatal(err)
			}
			if ev := h.events(); len(ev) != 0 {
				t.Fatalf("model events %v", ev)
			}
			if q := h.m.Tables().QPs[5]; q.State.String() != "RTS" {
				t.Fatalf("model QP %v", q.State)
			}
		})
	}
}
