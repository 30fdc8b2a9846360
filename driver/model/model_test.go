package model_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/regs"
)

// rig is a model device opened by the driver, with one DMA buffer declared
// as window 0 and the event ring configured at its start.
type rig struct {
	t   testing.TB
	m   *model.Device
	d   *driver.Device
	buf *driver.Buffer
	// Free space in buf for rings, 64 KiB aligned.
	next uint64
}

const bufSize = 4 << 20

func newRig(t testing.TB, cfg model.Config) *rig {
	t.Helper()
	m, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	d, err := driver.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := m.Alloc(bufSize)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, m: m, d: d, buf: buf, next: buf.Addr + 64<<10}
	r.ok(hostif.DMAWindow{Slot: 0, Addr: buf.Addr, Length: bufSize})
	r.ok(hostif.EventRing{Ring: buf.Addr, Log2: 4, ExcRing: buf.Addr + 32<<10, ExcLog2: 2, ExcBufLog2: 11})
	return r
}

// ring returns an aligned ring address inside the window.
func (r *rig) ring() uint64 {
	a := r.next
	r.next += 64 << 10
	return a
}

func (r *rig) ok(c hostif.Command) hostif.Args {
	r.t.Helper()
	out, err := r.d.Exec(c)
	if err != nil {
		r.t.Fatalf("%v: %v", c, err)
	}
	return out
}

func (r *rig) cq(cqn uint32) {
	r.t.Helper()
	r.ok(hostif.CreateCQ{CQN: cqn, Ring: r.ring(), Log2: 6, Vector: 0})
}

func (r *rig) qp(qpn uint32, cqn uint16) {
	r.t.Helper()
	r.ok(hostif.CreateQP{QPN: qpn, PD: 3, SQRing: r.ring(), SQLog2: 4, RQRing: r.ring(), RQLog2: 4, SendCQ: cqn, RecvCQ: cqn})
}

// events decodes the event ring's entries the device wrote (phase 1 on the
// first pass).
func (r *rig) events() []hostif.Event {
	r.t.Helper()
	var out []hostif.Event
	for i := range 16 {
		e, err := hostif.DecodeEvent(r.buf.Mem[16*i:])
		if err != nil {
			if r.buf.Mem[16*i] == 0 {
				break // never written
			}
			r.t.Fatalf("event %d: %v", i, err)
		}
		if !e.Phase {
			break
		}
		out = append(out, e)
	}
	return out
}

func TestWalkModelBAR(t *testing.T) {
	cfg := model.DefaultConfig
	r := newRig(t, cfg)
	mp := r.d.Map
	// The model has every block of the map but the optional flash block.
	var want []regs.Block
	for _, b := range regs.Blocks {
		if !regmap.Optional(b.Type) {
			want = append(want, b)
		}
	}
	if len(mp.Blocks) != len(want) {
		t.Fatalf("walked %d blocks, the map has %d the model implements", len(mp.Blocks), len(want))
	}
	for i, b := range mp.Blocks {
		if !b.Known || b.Base != want[i].Base {
			t.Errorf("block %d: %+v", i, b)
		}
	}
	if mp.Conns != cfg.QPs || mp.CQs != cfg.CQs || mp.STags != cfg.STags || mp.Vectors != cfg.Vectors ||
		mp.Windows != cfg.Windows || mp.SQLog2 != uint32(cfg.SQLog2) || mp.CQLog2 != uint32(cfg.CQLog2) ||
		mp.DataWidth != cfg.DataWidth || mp.BuildHash != cfg.BuildHash {
		t.Errorf("capabilities %+v, configured %+v", mp, cfg)
	}
	cs, err := mp.Counters(r.m)
	if err != nil || len(cs) != len(regs.Counters) {
		t.Fatalf("counters: %v, %v", cs, err)
	}
	// Doorbells read 0 (a read must never hang or return garbage).
	if err := r.d.RingSQ(0, 0); err != nil { // a write there is a doorbell (DOORBELL_BAD: no QP 0)
		t.Fatal(err)
	}
	if v, err := r.m.Read32(regs.DoorbellsQPDB); err != nil || v != 0 {
		t.Errorf("doorbell read: %#x, %v", v, err)
	}
	if _, err := r.m.Read32(model.BARSize); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("read past the BAR: %v", err)
	}
}

// A model configured beyond the map's room is refused, and so the driver
// never meets it.
func TestModelConfigRefused(t *testing.T) {
	for _, edit := range []func(*model.Config){
		func(c *model.Config) { c.QPs = 4097 },
		func(c *model.Config) { c.CQs = 0 },
		func(c *model.Config) { c.Vectors = 17 },
		func(c *model.Config) { c.Windows = 0 },
		func(c *model.Config) { c.SQLog2 = 17 },
	} {
		c := model.DefaultConfig
		edit(&c)
		if _, err := model.New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func TestAdminCommands(t *testing.T) {
	r := newRig(t, model.DefaultConfig)
	tb := r.m.Tables()
	if w := tb.Windows[0]; w != [2]uint64{r.buf.Addr, bufSize} {
		t.Errorf("window 0 = %#x", w)
	}
	if e := tb.Events; !e.Valid || e.Ring != r.buf.Addr || e.Log2 != 4 || e.ExcBufLog2 != 11 {
		t.Errorf("event rings %+v", e)
	}

	cqRing := r.next
	r.ok(hostif.CreateCQ{CQN: 5, Ring: cqRing, Log2: 8, Vector: 2})
	r.next += 64 << 10
	if c := r.m.Tables().CQs[5]; !c.Valid || c.Ring != cqRing || c.Log2 != 8 || c.Vector != 2 {
		t.Errorf("CQ 5: %+v", c)
	}
	r.qp(9, 5)
	q := r.m.Tables().QPs[9]
	if q.State != model.QPCreated || q.PD != 3 || q.SendCQ != 5 || q.SQLog2 != 4 {
		t.Errorf("QP 9 after CREATE_QP: %+v", q)
	}
	rts := hostif.QPRTS{QPN: 9, IRD: 4, ORD: 4, MULPDU: 1460, Flags: hostif.RTSCRCTx | hostif.RTSCRCRx,
		TxMarkerBase: 100, RxMarkerBase: 200, TxSeq: 100, RxSeq: 200, RxMSNSend: 1, RxMSNReadRq: 1}
	r.ok(rts)
	if q := r.m.Tables().QPs[9]; q.State != model.QPRTS || q.RTS != rts {
		t.Errorf("QP 9 after QP_RTS: %+v", q)
	}
	mr := hostif.MRWrite{Index: 17, Key: 0x5a, Access: hostif.AccessLocalWrite | hostif.AccessRemoteRead, PD: 3,
		BoundQPN: hostif.NotBound, BaseTO: 0x1000, Length: 8192, Addr: r.ring()}
	r.ok(mr)
	if m := r.m.Tables().MRs[17]; !m.Valid || m.Key != 0x5a || m.Addr != mr.Addr || m.Length != 8192 || m.PD != 3 {
		t.Errorf("MR 17: %+v", m)
	}
	// MR_WRITE over a valid entry is allowed (a re-registration).
	mr.Key = 0x5b
	r.ok(mr)
	r.ok(hostif.MRInvalidate{Index: 17})
	if m := r.m.Tables().MRs[17]; m.Valid {
		t.Errorf("MR 17 after MR_INVALIDATE: %+v", m)
	}
	// The producer indices rung reach the QP's context, and QP_DRAIN
	// reports how far the engines consumed them.
	if err := r.d.RingSQ(9, 3); err != nil {
		t.Fatal(err)
	}
	if err := r.d.RingRQ(9, 16); err != nil {
		t.Fatal(err)
	}
	if q := r.m.Tables().QPs[9]; q.SQPI != 3 || q.RQPI != 16 {
		t.Errorf("QP 9 producer indices %d, %d", q.SQPI, q.RQPI)
	}
	out := r.ok(hostif.QPDrain{QPN: 9})
	res, err := hostif.DecodeDrainResult(out)
	// The engines ran at the doorbells: the zeroed SQ entries are legal
	// (unsignalled zero-length Writes), the zeroed RQ entries zero-length
	// receives; the drain reports both rings consumed.
	if err != nil || res != (hostif.DrainResult{SQIndex: 3, RQIndex: 16}) {
		t.Errorf("QP_DRAIN outputs %v, %v", res, err)
	}
	if q := r.m.Tables().QPs[9]; q.State != model.QPDrained {
		t.Errorf("QP 9 after QP_DRAIN: %v", q.State)
	}
	r.ok(hostif.DestroyQP{QPN: 9})
	if q := r.m.Tables().QPs[9]; q != (model.QP{}) {
		t.Errorf("QP 9 after DESTROY_QP: %+v", q)
	}
	// The number is free for CREATE_QP again.
	r.qp(9, 5)
	if err := r.d.RingCQ(5, 7, driver.CQArm); err != nil {
		t.Fatal(err)
	}
	if c := r.m.Tables().CQs[5]; c.CI != 7 || !c.Arm || c.ArmSolic {
		t.Errorf("CQ 5 after CQ_CI: %+v", c)
	}
	r.ok(hostif.QPDrain{QPN: 9})
	r.ok(hostif.DestroyQP{QPN: 9})
	r.ok(hostif.DestroyCQ{CQN: 5})
	if c := r.m.Tables().CQs[5]; c.Valid {
		t.Errorf("CQ 5 after DESTROY_CQ: %+v", c)
	}
	r.ok(hostif.DMAWindow{Slot: 3, Addr: 0x10_0000_0000, Length: 1 << 20})
	r.ok(hostif.DMAWindow{Slot: 3})
	if w := r.m.Tables().Windows[3]; w != [2]uint64{} {
		t.Errorf("window 3 after clearing: %#x", w)
	}
	if got := r.events(); len(got) != 0 {
		t.Errorf("events after correct commands and doorbells: %v", got)
	}
}

// raw writes the argument words and CMD directly, for what Exec's typed
// commands cannot express (an unknown opcode, a non-zero unused word), and
// returns STATUS.CODE.
func raw(t *testing.T, r *rig, op uint32, a hostif.Args) hostif.AdminStatus {
	t.Helper()
	base := r.d.Map.AdminBase()
	for i, v := range a {
		if err := r.m.Write32(base+regs.AdminArg0-regs.AdminBase+4*uint32(i), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.m.Write32(base+regs.AdminCmd-regs.AdminBase, op); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		v, err := r.m.Read32(base + regs.AdminStatus - regs.AdminBase)
		if err != nil {
			t.Fatal(err)
		}
		if v&regs.AdminStatusBusyMask == 0 {
			return hostif.AdminStatus(v >> regs.AdminStatusCodeShift)
		}
	}
	t.Fatal("the model stayed BUSY")
	return 0
}

// Every refusal answers its status and leaves every table unchanged.
func TestAdminRefusals(t *testing.T) {
	cfg := model.DefaultConfig
	r := newRig(t, cfg)
	r.cq(1)
	r.cq(2)
	r.qp(4, 1) // created
	r.qp(5, 1) // in RTS
	r.ok(hostif.QPRTS{QPN: 5, MULPDU: 1000})
	r.ok(hostif.MRWrite{Index: 1, Access: hostif.AccessLocalRead, PD: 3, BoundQPN: hostif.NotBound, Length: 4096, Addr: r.ring()})
	in := r.ring()              // inside window 0
	out := r.buf.Addr + bufSize // just past it
	misaligned := in + 0x800

	type cmd = hostif.Command
	for _, c := range []struct {
		name string
		cmd  cmd // nil: use op/args
		op   uint32
		args hostif.Args
		want hostif.AdminStatus
	}{
		{name: "unknown opcode 0x0b", op: 0x0b, want: hostif.AdminBadOpcode},
		{name: "opcode 0", op: 0, want: hostif.AdminBadOpcode},
		{name: "DESTROY_CQ with ARG1 set", op: uint32(hostif.OpDestroyCQ), args: hostif.Args{2, 1}, want: hostif.AdminBadArg},
		{name: "MR_WRITE with an unknown access bit", op: uint32(hostif.OpMRWrite), args: hostif.Args{0x10<<24 | 2}, want: hostif.AdminBadArg},

		{name: "CREATE_CQ beyond the CQs", cmd: hostif.CreateCQ{CQN: cfg.CQs, Ring: in, Log2: 4}, want: hostif.AdminBadIndex},
		{name: "CREATE_CQ on a vector beyond", cmd: hostif.CreateCQ{CQN: 3, Ring: in, Log2: 4, Vector: cfg.Vectors}, want: hostif.AdminBadIndex},
		{name: "CREATE_CQ twice", cmd: hostif.CreateCQ{CQN: 1, Ring: in, Log2: 4}, want: hostif.AdminBadState},
		{name: "CREATE_CQ of 2^0 entries", cmd: hostif.CreateCQ{CQN: 3, Ring: in, Log2: 0}, want: hostif.AdminBadArg},
		{name: "CREATE_CQ above the largest", cmd: hostif.CreateCQ{CQN: 3, Ring: in, Log2: uint32(cfg.CQLog2) + 1}, want: hostif.AdminBadArg},
		{name: "CREATE_CQ misaligned", cmd: hostif.CreateCQ{CQN: 3, Ring: misaligned, Log2: 4}, want: hostif.AdminBadArg},
		{name: "CREATE_CQ outside the windows", cmd: hostif.CreateCQ{CQN: 3, Ring: out, Log2: 4}, want: hostif.AdminOutOfWindow},

		{name: "DESTROY_CQ beyond", cmd: hostif.DestroyCQ{CQN: cfg.CQs}, want: hostif.AdminBadIndex},
		{name: "DESTROY_CQ not created", cmd: hostif.DestroyCQ{CQN: 9}, want: hostif.AdminBadState},
		{name: "DESTROY_CQ a QP completes into", cmd: hostif.DestroyCQ{CQN: 1}, want: hostif.AdminBadState},

		{name: "CREATE_QP beyond the QPs", cmd: hostif.CreateQP{QPN: cfg.QPs, SQRing: in, SQLog2: 2, RQRing: in + 4096, RQLog2: 2, SendCQ: 1, RecvCQ: 1}, want: hostif.AdminBadIndex},
		{name: "CREATE_QP with a CQ beyond", cmd: hostif.CreateQP{QPN: 7, SQRing: in, SQLog2: 2, RQRing: in + 4096, RQLog2: 2, SendCQ: 1, RecvCQ: uint16(cfg.CQs)}, want: hostif.AdminBadIndex},
		{name: "CREATE_QP that exists", cmd: hostif.CreateQP{QPN: 4, SQRing: in, SQLog2: 2, RQRing: in + 4096, RQLog2: 2, SendCQ: 1, RecvCQ: 1}, want: hostif.AdminBadState},
		{name: "CREATE_QP with a CQ not created", cmd: hostif.CreateQP{QPN: 7, SQRing: in, SQLog2: 2, RQRing: in + 4096, RQLog2: 2, SendCQ: 1, RecvCQ: 8}, want: hostif.AdminBadState},
		{name: "CREATE_QP with a PD over 16 bits", cmd: hostif.CreateQP{QPN: 7, PD: 0x10000, SQRing: in, SQLog2: 2, RQRing: in + 4096, RQLog2: 2, SendCQ: 1, RecvCQ: 1}, want: hostif.AdminBadArg},
		{name: "CREATE_QP with an SQ too large", cmd: hostif.CreateQP{QPN: 7, SQRing: in, SQLog2: cfg.SQLog2 + 1, RQRing: in + 4096, RQLog2: 2, SendCQ: 1, RecvCQ: 1}, want: hostif.AdminBadArg},
		{name: "CREATE_QP with a misaligned RQ", cmd: hostif.CreateQP{QPN: 7, SQRing: in, SQLog2: 2, RQRing: misaligned, RQLog2: 2, SendCQ: 1, RecvCQ: 1}, want: hostif.AdminBadArg},
		{name: "CREATE_QP with the RQ outside", cmd: hostif.CreateQP{QPN: 7, SQRing: in, SQLog2: 2, RQRing: out, RQLog2: 2, SendCQ: 1, RecvCQ: 1}, want: hostif.AdminOutOfWindow},

		{name: "QP_RTS beyond", cmd: hostif.QPRTS{QPN: uint16(cfg.QPs), MULPDU: 1000}, want: hostif.AdminBadIndex},
		{name: "QP_RTS not created", cmd: hostif.QPRTS{QPN: 7, MULPDU: 1000}, want: hostif.AdminBadState},
		{name: "QP_RTS twice", cmd: hostif.QPRTS{QPN: 5, MULPDU: 1000}, want: hostif.AdminBadState},
		{name: "QP_RTS with MULPDU 0", cmd: hostif.QPRTS{QPN: 4}, want: hostif.AdminBadArg},

		{name: "QP_DRAIN beyond", cmd: hostif.QPDrain{QPN: cfg.QPs}, want: hostif.AdminBadIndex},
		{name: "QP_DRAIN not created", cmd: hostif.QPDrain{QPN: 7}, want: hostif.AdminBadState},
		{name: "DESTROY_QP beyond", cmd: hostif.DestroyQP{QPN: cfg.QPs}, want: hostif.AdminBadIndex},
		{name: "DESTROY_QP not drained", cmd: hostif.DestroyQP{QPN: 5}, want: hostif.AdminBadState},
		{name: "DESTROY_QP not created", cmd: hostif.DestroyQP{QPN: 7}, want: hostif.AdminBadState},

		{name: "MR_WRITE beyond", cmd: hostif.MRWrite{Index: uint16(cfg.STags), BoundQPN: hostif.NotBound, Addr: in, Length: 4096}, want: hostif.AdminBadIndex},
		{name: "MR_WRITE bound to a QP beyond", cmd: hostif.MRWrite{Index: 2, BoundQPN: uint16(cfg.QPs), Addr: in, Length: 4096}, want: hostif.AdminBadIndex},
		{name: "MR_WRITE whose TO range wraps", cmd: hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, BaseTO: 1 << 63, Length: 1 << 63, Addr: in}, want: hostif.AdminBadArg},
		{name: "MR_WRITE straddling the window's end", cmd: hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, Addr: out - 100, Length: 4096}, want: hostif.AdminOutOfWindow},
		{name: "MR_INVALIDATE beyond", cmd: hostif.MRInvalidate{Index: cfg.STags}, want: hostif.AdminBadIndex},
		{name: "MR_INVALIDATE an invalid entry", cmd: hostif.MRInvalidate{Index: 2}, want: hostif.AdminBadState},

		{name: "EVENT_RING of 2^0 events", cmd: hostif.EventRing{Ring: in, Log2: 0, ExcRing: in, ExcLog2: 2, ExcBufLog2: 11}, want: hostif.AdminBadArg},
		{name: "EVENT_RING with 32-octet exception buffers", cmd: hostif.EventRing{Ring: in, Log2: 4, ExcRing: in, ExcLog2: 2, ExcBufLog2: 5}, want: hostif.AdminBadArg},
		{name: "EVENT_RING misaligned", cmd: hostif.EventRing{Ring: misaligned, Log2: 4, ExcRing: in, ExcLog2: 2, ExcBufLog2: 11}, want: hostif.AdminBadArg},
		{name: "EVENT_RING outside", cmd: hostif.EventRing{Ring: in, Log2: 4, ExcRing: out, ExcLog2: 2, ExcBufLog2: 11}, want: hostif.AdminOutOfWindow},

		{name: "DMA_WINDOW beyond the slots", cmd: hostif.DMAWindow{Slot: cfg.Windows, Addr: 0, Length: 4096}, want: hostif.AdminBadIndex},
		{name: "DMA_WINDOW that wraps", cmd: hostif.DMAWindow{Slot: 1, Addr: 1<<64 - 4096, Length: 8192}, want: hostif.AdminBadArg},
		{name: "DMA_WINDOW not page-aligned", cmd: hostif.DMAWindow{Slot: 1, Addr: 0x1800, Length: 4096}, want: hostif.AdminBadArg},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := r.m.Tables()
			var got hostif.AdminStatus
			if c.cmd == nil {
				got = raw(t, r, c.op, c.args)
			} else {
				_, err := r.d.Exec(c.cmd)
				var ae *driver.AdminError
				if !errors.As(err, &ae) {
					t.Fatalf("%v: err = %v, want an AdminError", c.cmd, err)
				}
				if !strings.Contains(err.Error(), c.want.String()) || !strings.Contains(err.Error(), ";") {
					t.Errorf("message %q does not name %v and what to do", err, c.want)
				}
				got = ae.Status
			}
			if got != c.want {
				t.Fatalf("status %v, want %v", got, c.want)
			}
			if after := r.m.Tables(); !reflect.DeepEqual(before, after) {
				t.Fatalf("a refused command changed the tables:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// A write to CMD while BUSY is ignored and counted; the running command
// completes as written.
func TestCMDWhileBusy(t *testing.T) {
	cfg := model.DefaultConfig
	cfg.AdminLatency = 3
	r := newRig(t, cfg)
	base := r.d.Map.AdminBase()
	rel := func(abs uint32) uint32 { return base + abs - regs.AdminBase }
	ring := r.ring()
	args, _ := hostif.CreateCQ{CQN: 6, Ring: ring, Log2: 4}.Args()
	for i, v := range args {
		r.m.Write32(rel(regs.AdminArg0)+4*uint32(i), v)
	}
	r.m.Write32(rel(regs.AdminCmd), uint32(hostif.OpCreateCQ))
	st, _ := r.m.Read32(rel(regs.AdminStatus))
	if st&regs.AdminStatusBusyMask == 0 {
		t.Fatalf("STATUS %#x right after CMD with a latency of 3 polls: not BUSY", st)
	}
	// A second command while BUSY: DESTROY_CQ of the CQ being created.
	r.m.Write32(rel(regs.AdminCmd), uint32(hostif.OpDestroyCQ))
	// The driver refuses to start a command on a BUSY mailbox.
	if _, err := r.d.Exec(hostif.DestroyCQ{CQN: 6}); err == nil || !strings.Contains(err.Error(), "BUSY") {
		t.Fatalf("Exec on a BUSY mailbox: %v", err)
	}
	// Two reads of STATUS so far: the one above and Exec's check.
	reads := 2
	for st&regs.AdminStatusBusyMask != 0 {
		st, _ = r.m.Read32(rel(regs.AdminStatus))
		reads++
	}
	if code := hostif.AdminStatus(st >> regs.AdminStatusCodeShift); code != hostif.AdminOK || reads != 3 {
		t.Fatalf("not BUSY at read %d with %v, want OK at the third read", reads, code)
	}
	if c := r.m.Tables().CQs[6]; !c.Valid || c.Ring != ring {
		t.Fatalf("CQ 6 %+v: the first command did not run as written", c)
	}
	if op, _ := r.m.Read32(rel(regs.AdminCmd)); op != uint32(hostif.OpCreateCQ) {
		t.Errorf("CMD reads %#x, want the accepted CREATE_CQ", op)
	}
	cs, err := r.d.Map.Counters(r.m)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == "admin_overrun" && c.Value != 1 {
			t.Errorf("admin_overrun = %d, want 1", c.Value)
		}
	}
	// Exec with the latency: it polls through BUSY.
	if _, err := r.d.Exec(hostif.DestroyCQ{CQN: 6}); err != nil {
		t.Fatal(err)
	}
}

func TestDoorbellEvents(t *testing.T) {
	cfg := model.DefaultConfig
	r := newRig(t, cfg)
	irq, err := r.m.Vector(0)
	if err != nil {
		t.Fatal(err)
	}
	vec := r.d.Map.VectorsBase() + regs.VectorsVec - regs.VectorsBase
	r.m.Write32(vec+regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask)
	r.cq(1)
	r.qp(2, 1)
	before := r.m.Tables()

	if err := r.d.RingSQ(3, 1); err != nil { // QP 3 not created
		t.Fatal(err)
	}
	r.d.RingRQ(uint16(cfg.QPs), 2)           // beyond the QPs, inside the doorbell page
	r.d.RingCQ(9, 4, driver.CQArm)           // CQ 9 not created
	r.m.Write32(regs.DoorbellsCQDB+4, 1<<20) // CQ 1 with bits 29:16 set
	want := []hostif.Event{
		{Type: hostif.EventDoorbellBad, Detail: hostif.DoorbellSQ, Index: 3, Value: 1, Phase: true},
		{Type: hostif.EventDoorbellBad, Detail: hostif.DoorbellRQ, Index: uint16(cfg.QPs), Value: 2, Phase: true},
		{Type: hostif.EventDoorbellBad, Detail: hostif.DoorbellCQ, Index: 9, Value: 4 | driver.CQArm, Phase: true},
		{Type: hostif.EventDoorbellBad, Detail: hostif.DoorbellCQ, Index: 1, Value: 1 << 20, Phase: true},
	}
	if got := r.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	if after := r.m.Tables(); !reflect.DeepEqual(before.QPs, after.QPs) || !reflect.DeepEqual(before.CQs, after.CQs) {
		t.Error("a dropped doorbell changed a QP or CQ")
	}
	select {
	case <-irq:
	default:
		t.Error("vector 0 did not fire for the events")
	}
	if p, _ := r.m.Read32(vec + regs.VectorsVecPending); p != 1 {
		t.Errorf("vector 0 PENDING = %d", p)
	}
	r.m.Write32(vec+regs.VectorsVecPending, 1)
	if p, _ := r.m.Read32(vec + regs.VectorsVecPending); p != 0 {
		t.Errorf("vector 0 PENDING after write 1 to clear = %d", p)
	}

	// RING_OVERRUN: QP 2's SQ holds 2^4 entries; a producer index 17
	// ahead of the consumer (0) overruns it and fails the QP.
	r.d.RingSQ(2, 16)
	if q := r.m.Tables().QPs[2]; q.State != model.QPCreated || q.SQPI != 16 {
		t.Fatalf("QP 2 after a full SQ: %v, PI %d", q.State, q.SQPI)
	}
	r.d.RingSQ(2, 17)
	got := r.events()
	if len(got) != 5 || got[4] != (hostif.Event{Type: hostif.EventRingOverrun, Detail: hostif.DoorbellSQ, Index: 2, Value: 17, Phase: true}) {
		t.Fatalf("events after the overrun: %v", got)
	}
	if q := r.m.Tables().QPs[2]; q.State != model.QPError || q.SQPI != 16 {
		t.Fatalf("QP 2 after the overrun: %v, PI %d", q.State, q.SQPI)
	}
	if n := r.m.LostEvents(); n != 0 {
		t.Errorf("%d events lost", n)
	}
}

// Before EVENT_RING the device has nowhere to report: the event is lost and
// counted, and nothing else changes.
func TestEventWithoutRing(t *testing.T) {
	m, err := model.New(model.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := driver.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	d.RingSQ(1, 1)
	if n := m.LostEvents(); n != 1 {
		t.Errorf("LostEvents = %d, want 1", n)
	}
}

func TestSeamAndMemory(t *testing.T) {
	m, _ := model.New(model.DefaultConfig)
	defer m.Close()
	n := m.Network()
	if err := n.SegIn(driver.Segment{QPN: uint16(model.DefaultConfig.QPs), Seq: 1, Octets: []byte{1}}); err == nil ||
		!strings.Contains(err.Error(), "cap_conns") {
		t.Errorf("SegIn beyond the QPs: %v", err)
	}
	if n.SegOut() == nil {
		t.Error("SegOut delivers no channel")
	}
	if _, err := m.Vector(int(model.DefaultConfig.Vectors)); err == nil {
		t.Error("a vector beyond cap_vectors")
	}
	b, err := m.Alloc(1)
	if err != nil || len(b.Mem) != 4096 || b.Addr%4096 != 0 {
		t.Fatalf("Alloc(1): %v, %v", b, err)
	}
	if err := m.Free(b); err != nil {
		t.Fatal(err)
	}
	if err := m.Free(b); err == nil {
		t.Error("a buffer freed twice")
	}
}

var _ regmap.MMIO = (*model.Device)(nil)

// A command that stays BUSY past driver.MaxAdminPolls reads is reported as
// a stuck device, not waited on forever.
func TestAdminStuck(t *testing.T) {
	cfg := model.DefaultConfig
	cfg.AdminLatency = driver.MaxAdminPolls + 2
	m, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := driver.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(hostif.DMAWindow{Slot: 0}); !errors.Is(err, driver.ErrAdminStuck) {
		t.Fatalf("Exec: %v, want ErrAdminStuck", err)
	}
}
