package simdev

// The admin cross-check: the same command sequences on the simulated
// device (rnic-sim: hw/rtl/rnic_admin.v inside rnic_dev, verilated) and on
// the Go model (driver/model, the oracle, sized from the device's own ID
// block), comparing after every command STATUS.CODE, the eight ARG words,
// CMD's read-back and the admin_overrun counter. A difference fails with
// the command, its index in the sequence, both answers and the seed.
//
// Sequences: a directed list (each command's success and each refusal
// reason, the model's own refusal list replayed on the device) and seeded
// random sequences biased to hit the interesting states: few indices, so
// that create/destroy reuse them and CQs are in use; windows declared and
// cleared over a few regions; MR writes over valid entries; rings
// misaligned, too large, straddling a window; non-zero unused words;
// unknown opcodes; a second CMD write while BUSY (an overrun).
//
// `go test` runs fixed seeds (xcheckSeeds, xcheckLen commands each). The
// longer run: RNIC_XCHECK_SEEDS=N (N seeds from RNIC_XCHECK_SEED, default
// a clock-drawn one, printed) and RNIC_XCHECK_LEN=L; `make xcheck-admin`
// runs 20 seeds of 5000 commands. RNIC_XCHECK_SIM runs another rnic-sim
// (`make xcheck-admin-mutation`: one with a check changed, which must fail).

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/regs"
)

// A step is one command as the driver writes it: the ARG words, then CMD.
// With twice set, a second CMD write (opcode op2) follows at once, while the
// first is BUSY: it must be ignored and counted.
type step struct {
	op    uint8
	args  hostif.Args
	twice bool
	op2   uint8
}

func (s step) String() string {
	var b strings.Builder
	if c, err := hostif.DecodeCommand(hostif.AdminOpcode(s.op), s.args); err == nil {
		b.WriteString(c.String())
	} else {
		fmt.Fprintf(&b, "%v (%v)", hostif.AdminOpcode(s.op), err)
	}
	fmt.Fprintf(&b, " op %#02x args %08x", s.op, s.args)
	if s.twice {
		fmt.Fprintf(&b, ", then CMD %#02x while BUSY", s.op2)
	}
	return b.String()
}

func cmdStep(t testing.TB, c hostif.Command) step {
	t.Helper()
	a, err := c.Args()
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	return step{op: uint8(c.Opcode()), args: a}
}

// answer is what the driver reads back after a step.
type answer struct {
	code    hostif.AdminStatus
	out     hostif.Args
	cmd     uint32 // CMD's read-back: the last accepted opcode
	overrun uint64 // admin_overrun
}

func (a answer) String() string {
	return fmt.Sprintf("status %v, ARG %08x, CMD %#x, admin_overrun %d", a.code, a.out, a.cmd, a.overrun)
}

// mailbox runs steps on one backend through the BAR, as a driver does.
type mailbox struct {
	name string
	b    driver.Backend
	m    *regmap.Device
}

func (x mailbox) rel(abs uint32) uint32 { return x.m.AdminBase() + abs - regs.AdminBase }

func (x mailbox) run(s step) (answer, error) {
	var a answer
	for i, v := range s.args {
		if err := x.b.Write32(x.rel(regs.AdminArg0)+4*uint32(i), v); err != nil {
			return a, err
		}
	}
	if err := x.b.Write32(x.rel(regs.AdminCmd), uint32(s.op)); err != nil {
		return a, err
	}
	if s.twice {
		if err := x.b.Write32(x.rel(regs.AdminCmd), uint32(s.op2)); err != nil {
			return a, err
		}
	}
	busy := true
	for range 1000 {
		v, err := x.b.Read32(x.rel(regs.AdminStatus))
		if err != nil {
			return a, err
		}
		if v&regs.AdminStatusBusyMask == 0 {
			a.code = hostif.AdminStatus((v & regs.AdminStatusCodeMask) >> regs.AdminStatusCodeShift)
			busy = false
			break
		}
	}
	if busy {
		return a, fmt.Errorf("%s: the mailbox stayed BUSY for 1000 reads of STATUS", x.name)
	}
	for i := range a.out {
		v, err := x.b.Read32(x.rel(regs.AdminArg0) + 4*uint32(i))
		if err != nil {
			return a, err
		}
		a.out[i] = v
	}
	v, err := x.b.Read32(x.rel(regs.AdminCmd))
	if err != nil {
		return a, err
	}
	a.cmd = v
	cs, err := x.m.Counters(x.b)
	if err != nil {
		return a, err
	}
	for _, c := range cs {
		if c.Name == "admin_overrun" {
			a.overrun = c.Value
		}
	}
	return a, nil
}

// pair is the simulated device and a model of the same capabilities, both
// fresh from reset.
type pair struct {
	sim, mod mailbox
	caps     *regmap.Device
}

func newPair(t *testing.T) pair {
	t.Helper()
	// RNIC_XCHECK_SIM: another rnic-sim (make xcheck-admin-mutation's mutant).
	// Lockstep: "CMD while BUSY" must meet a device still busy on every run.
	d := start(t, Config{MemSize: 1 << 16, Binary: os.Getenv("RNIC_XCHECK_SIM"), Lockstep: true})
	sm, err := regmap.Walk(d, d.BARSize())
	if err != nil {
		t.Fatal(err)
	}
	// The model sized from the device's ID block. One STATUS read of
	// latency, so that a CMD written right after CMD finds it BUSY, as the
	// device (every command takes tens of clocks, an AXI4-Lite write a few).
	cfg := model.Config{QPs: sm.Conns, CQs: sm.CQs, STags: sm.STags, Vectors: sm.Vectors, Windows: sm.Windows,
		SQLog2: uint8(sm.SQLog2), RQLog2: uint8(sm.RQLog2), CQLog2: uint8(sm.CQLog2),
		DataWidth: sm.DataWidth, BuildHash: sm.BuildHash, AdminLatency: 1}
	m, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	mm, err := regmap.Walk(m, m.BARSize())
	if err != nil {
		t.Fatal(err)
	}
	return pair{sim: mailbox{"rnic-sim", d, sm}, mod: mailbox{"model", m, mm}, caps: sm}
}

// check runs the steps on both and fails at the first difference.
func (p pair) check(t *testing.T, what string, seed int64, steps []step) {
	t.Helper()
	p.checkGen(t, what, seed, len(steps), func(i int) step { return steps[i] })
}

// checkGen is check with the steps drawn one at a time (a generator may look
// at the model's tables to aim at the states it wants).
func (p pair) checkGen(t *testing.T, what string, seed int64, n int, next func(int) step) {
	t.Helper()
	counts := map[hostif.AdminStatus]int{}
	oks := map[hostif.AdminOpcode]int{}
	for i := range n {
		s := next(i)
		want, err := p.mod.run(s)
		if err != nil {
			t.Fatalf("%s, seed %d, command %d (%v): model: %v", what, seed, i, s, err)
		}
		got, err := p.sim.run(s)
		if err != nil {
			t.Fatalf("%s, seed %d, command %d (%v): %v", what, seed, i, s, err)
		}
		if got != want {
			t.Fatalf("%s, seed %d: the device and the model differ at command %d, %v:\n  device: %v\n  model:  %v",
				what, seed, i, s, got, want)
		}
		counts[want.code]++
		if want.code == hostif.AdminOK {
			oks[hostif.AdminOpcode(s.op)]++
		}
	}
	t.Logf("%s, seed %d: %d commands agree; statuses %v; accepted %v", what, seed, n, counts, oks)
}

// The directed list: every command's success and every refusal reason.
func directed(t *testing.T, caps *regmap.Device) []step {
	const base = 0x2_0000_0000 // window 0: 16 MiB
	in := uint64(base + 0x10_0000)
	out := uint64(base + 16<<20) // just past window 0
	mis := in + 0x800
	nQP, nCQ, nMR := caps.Conns, caps.CQs, caps.STags
	nv, nw := caps.Vectors, caps.Windows
	c := func(x hostif.Command) step { return cmdStep(t, x) }
	raw := func(op uint8, a hostif.Args) step { return step{op: op, args: a} }
	qp := func(qpn uint32, sq, rq uint64, sql, rql uint8, s, r uint16) step {
		return c(hostif.CreateQP{QPN: qpn, PD: 3, SQRing: sq, SQLog2: sql, RQRing: rq, RQLog2: rql, SendCQ: s, RecvCQ: r})
	}
	return []step{
		// Before any window: everything that needs one is refused.
		c(hostif.CreateCQ{CQN: 1, Ring: in, Log2: 4}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: in + 0x10000, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.MRWrite{Index: 1, BoundQPN: hostif.NotBound, Addr: in, Length: 4096}),
		c(hostif.MRWrite{Index: 1, BoundQPN: hostif.NotBound, Addr: in, Length: 0}), // empty: no window needed
		c(hostif.MRInvalidate{Index: 1}),
		c(hostif.DMAWindow{Slot: 0, Addr: base, Length: 16 << 20}),
		c(hostif.DMAWindow{Slot: nw - 1, Addr: 0x4_0000_0000, Length: 1 << 20}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: in + 0x10000, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.CreateCQ{CQN: 1, Ring: in, Log2: 6, Vector: nv - 1}),
		c(hostif.CreateCQ{CQN: 2, Ring: 0x4_0000_0000, Log2: uint32(caps.CQLog2)}),
		qp(4, in+0x20000, in+0x30000, 4, 4, 1, 1),
		qp(5, in+0x40000, in+0x50000, uint8(caps.SQLog2), uint8(caps.RQLog2), 1, 2),
		c(hostif.QPRTS{QPN: 5, IRD: 4, ORD: 8, MULPDU: 1460, Flags: 0xf, TxMarkerBase: 1, RxMarkerBase: 2,
			TxSeq: 3, RxSeq: 4, RxMSNSend: 5, RxMSNReadRq: 6}),
		c(hostif.MRWrite{Index: 1, Key: 7, Access: 0xf, PD: 3, BoundQPN: 5, BaseTO: 0x1000, Length: 4096, Addr: in}),

		// Decode.
		raw(0x0b, hostif.Args{}),
		raw(0, hostif.Args{}),
		raw(0xff, hostif.Args{1, 2, 3}),
		raw(uint8(hostif.OpDestroyCQ), hostif.Args{2, 1}),
		raw(uint8(hostif.OpMRWrite), hostif.Args{0x10<<24 | 2}),
		raw(uint8(hostif.OpCreateCQ), hostif.Args{3, uint32(in), uint32(in >> 32), 4, 0, 0, 0, 1}),
		raw(uint8(hostif.OpCreateQP), hostif.Args{7, 3, uint32(in), 2, 0, 2, 0x10000 | 0x202, 0x10001}),
		raw(uint8(hostif.OpQPRTS), hostif.Args{4, 1<<20 | 100}),
		raw(uint8(hostif.OpQPDrain), hostif.Args{4, 0, 0, 0, 0, 0, 0, 9}),
		raw(uint8(hostif.OpDestroyQP), hostif.Args{4, 0, 5}),
		raw(uint8(hostif.OpMRInvalidate), hostif.Args{1, 0, 0, 1}),
		raw(uint8(hostif.OpEventRing), hostif.Args{uint32(in), 2, 0x01_0b_02_04}),
		raw(uint8(hostif.OpDMAWindow), hostif.Args{1, 0, 1, 0x1000, 0, 0, 1}),
		// A refusal's ARG words read as written, wide values included.
		raw(uint8(hostif.OpDMAWindow), hostif.Args{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}),

		// CREATE_CQ.
		c(hostif.CreateCQ{CQN: nCQ, Ring: in, Log2: 4}),
		raw(uint8(hostif.OpCreateCQ), hostif.Args{0x8000_0003, uint32(in), uint32(in >> 32), 4}),
		c(hostif.CreateCQ{CQN: 3, Ring: in, Log2: 4, Vector: nv}),
		c(hostif.CreateCQ{CQN: 1, Ring: in, Log2: 4}),
		c(hostif.CreateCQ{CQN: 3, Ring: in, Log2: 0}),
		c(hostif.CreateCQ{CQN: 3, Ring: in, Log2: uint32(caps.CQLog2) + 1}),
		c(hostif.CreateCQ{CQN: 3, Ring: in, Log2: 0x100_0004}),
		c(hostif.CreateCQ{CQN: 3, Ring: mis, Log2: 4}),
		c(hostif.CreateCQ{CQN: 3, Ring: in + 0x1000, Log2: 8}), // 8 KiB ring on a 4 KiB boundary
		c(hostif.CreateCQ{CQN: 3, Ring: out, Log2: 4}),
		c(hostif.CreateCQ{CQN: 3, Ring: out - 0x1000, Log2: 8}), // straddles the end
		c(hostif.CreateCQ{CQN: 3, Ring: 1<<64 - 0x1000, Log2: 4}),
		c(hostif.CreateCQ{CQN: 3, Ring: out - 0x1000, Log2: 7}), // the window's last page
		// DESTROY_CQ.
		c(hostif.DestroyCQ{CQN: nCQ}),
		c(hostif.DestroyCQ{CQN: 9}),
		c(hostif.DestroyCQ{CQN: 1}),
		c(hostif.DestroyCQ{CQN: 2}),
		c(hostif.DestroyCQ{CQN: 3}),
		c(hostif.DestroyCQ{CQN: 3}),

		// CREATE_QP.
		qp(nQP, in, in+4096, 2, 2, 1, 1),
		qp(7, in, in+4096, 2, 2, 1, uint16(nCQ)),
		qp(7, in, in+4096, 2, 2, uint16(nCQ), 1),
		qp(7, in, in+4096, 2, 2, 0xffff, 1),
		qp(4, in, in+4096, 2, 2, 1, 1),
		qp(7, in, in+4096, 2, 2, 1, 8),
		c(hostif.CreateQP{QPN: 7, PD: 0x10000, SQRing: in, SQLog2: 2, RQRing: in + 4096, RQLog2: 2, SendCQ: 1, RecvCQ: 1}),
		qp(7, in, in+4096, uint8(caps.SQLog2)+1, 2, 1, 1),
		qp(7, in, in+4096, 0, 2, 1, 1),
		qp(7, in, in+4096, 2, uint8(caps.RQLog2)+1, 1, 1),
		qp(7, in, mis, 2, 2, 1, 1),
		qp(7, in+0x1000, in+0x2000, 7, 2, 1, 1), // an 8 KiB SQ on a 4 KiB boundary
		qp(7, in, out, 2, 2, 1, 1),
		qp(7, out, in, 2, 2, 1, 1),
		qp(7, in, in+0x1000, 6, 7, 1, 1),
		// QP_RTS.
		c(hostif.QPRTS{QPN: uint16(nQP), MULPDU: 1000}),
		raw(uint8(hostif.OpQPRTS), hostif.Args{0xffff_0000 | 7, 1000}), // IRD/ORD are not part of the qpn
		c(hostif.QPRTS{QPN: 9, MULPDU: 1000}),
		c(hostif.QPRTS{QPN: 5, MULPDU: 1000}),
		c(hostif.QPRTS{QPN: 4}),
		c(hostif.QPRTS{QPN: 4, MULPDU: 1}),
		// QP_DRAIN, DESTROY_QP, and the CQs they release.
		c(hostif.QPDrain{QPN: nQP}),
		c(hostif.QPDrain{QPN: 9}),
		c(hostif.DestroyQP{QPN: nQP}),
		c(hostif.DestroyQP{QPN: 5}),
		c(hostif.DestroyQP{QPN: 9}),
		raw(uint8(hostif.OpQPDrain), hostif.Args{0x1_0000_0000 >> 1}),
		c(hostif.QPDrain{QPN: 5}),
		c(hostif.QPDrain{QPN: 5}), // again: answers at once
		c(hostif.DestroyQP{QPN: 5}),
		c(hostif.DestroyQP{QPN: 5}),
		c(hostif.DestroyCQ{CQN: 2}), // QP 5 was its only user
		c(hostif.DestroyCQ{CQN: 1}), // QPs 4 and 7 still complete into it
		c(hostif.QPDrain{QPN: 4}),
		c(hostif.DestroyQP{QPN: 4}),
		c(hostif.DestroyCQ{CQN: 1}), // QP 7, twice
		c(hostif.QPDrain{QPN: 7}),
		c(hostif.DestroyQP{QPN: 7}),
		c(hostif.DestroyCQ{CQN: 1}),
		c(hostif.DestroyCQ{CQN: 1}),
		qp(7, in, in+0x1000, 6, 7, 1, 1), // its CQ is gone

		// MR_WRITE, MR_INVALIDATE.
		c(hostif.MRWrite{Index: uint16(min(nMR, 0xffff)), BoundQPN: hostif.NotBound, Addr: in, Length: 4096}),
		c(hostif.MRWrite{Index: 2, BoundQPN: uint16(nQP), Addr: in, Length: 4096}),
		c(hostif.MRWrite{Index: 2, BoundQPN: 0xfffe, Addr: in, Length: 4096}),
		c(hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, BaseTO: 1 << 63, Length: 1 << 63, Addr: in}),
		c(hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, BaseTO: 1<<63 - 1, Length: 1 << 63, Addr: in}),
		c(hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, Addr: 1<<64 - 4096, Length: 4097}),
		c(hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, Addr: out - 100, Length: 4096}),
		c(hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, Addr: out - 100, Length: 100}),
		c(hostif.MRWrite{Index: 2, BoundQPN: hostif.NotBound, Addr: base - 1, Length: 2}),
		c(hostif.MRWrite{Index: 1, Key: 8, BoundQPN: uint16(nQP - 1), Addr: 0x4_0000_0000, Length: 1 << 20}), // over a valid entry
		c(hostif.MRInvalidate{Index: nMR}),
		c(hostif.MRInvalidate{Index: 3}),
		c(hostif.MRInvalidate{Index: 2}),
		c(hostif.MRInvalidate{Index: 2}),
		c(hostif.MRInvalidate{Index: 1}),
		c(hostif.MRInvalidate{Index: 1}),

		// EVENT_RING.
		c(hostif.EventRing{Ring: in, Log2: 0, ExcRing: in, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in, Log2: 17, ExcRing: in, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: in, ExcLog2: 0, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: in, ExcLog2: 17, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: in, ExcLog2: 2, ExcBufLog2: 5}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: in, ExcLog2: 2, ExcBufLog2: 17}),
		c(hostif.EventRing{Ring: mis, Log2: 4, ExcRing: in, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in + 0x1000, Log2: 9, ExcRing: in, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: in + 0x1000, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in, Log2: 4, ExcRing: out, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: out, Log2: 4, ExcRing: in, ExcLog2: 2, ExcBufLog2: 11}),
		c(hostif.EventRing{Ring: in, Log2: 16, ExcRing: 0, ExcLog2: 16, ExcBufLog2: 16}), // 4 GiB of exceptions
		c(hostif.EventRing{Ring: base, Log2: 16, ExcRing: base + 8<<20, ExcLog2: 7, ExcBufLog2: 16}),

		// DMA_WINDOW.
		c(hostif.DMAWindow{Slot: nw, Addr: 0, Length: 4096}),
		raw(uint8(hostif.OpDMAWindow), hostif.Args{0x1_0000 | 1, 0, 0, 0x1000}),
		c(hostif.DMAWindow{Slot: 1, Addr: 1<<64 - 4096, Length: 8192}),
		c(hostif.DMAWindow{Slot: 1, Addr: 1<<64 - 4096, Length: 4096}),
		c(hostif.DMAWindow{Slot: 1, Addr: 0x1800, Length: 4096}),
		c(hostif.DMAWindow{Slot: 1, Addr: 0x1000, Length: 0x1800}),
		c(hostif.DMAWindow{Slot: 1, Addr: 1<<64 - 8192, Length: 4096}),
		c(hostif.CreateCQ{CQN: 3, Ring: 1<<64 - 8192, Log2: 7}),
		c(hostif.DMAWindow{Slot: 0}), // cleared: rings in it are refused from now on
		c(hostif.CreateCQ{CQN: 4, Ring: in, Log2: 4}),
		c(hostif.DMAWindow{Slot: 0, Addr: 0x1000, Length: 0}), // a cleared slot's address is not a window
		c(hostif.CreateCQ{CQN: 4, Ring: 0x1000, Log2: 4}),
		c(hostif.CreateCQ{CQN: 4, Ring: 0x4_0000_0000 + 1<<20 - 0x1000, Log2: 7}),
	}
}

func TestAdminCrossCheckDirected(t *testing.T) {
	p := newPair(t)
	steps := directed(t, p.caps)
	// BUSY overruns: a second CMD write while the first command runs.
	steps = append(steps,
		step{op: uint8(hostif.OpDMAWindow), args: hostif.Args{2, 0, 8, 0x10000}, twice: true, op2: uint8(hostif.OpDestroyCQ)},
		step{op: 0x33, twice: true, op2: uint8(hostif.OpDMAWindow)},
		step{op: uint8(hostif.OpCreateCQ), args: hostif.Args{5, 0, 8, 4}, twice: true, op2: uint8(hostif.OpCreateCQ)},
		step{op: uint8(hostif.OpCreateCQ), args: hostif.Args{5, 0, 8, 4}},
	)
	p.check(t, "directed", 0, steps)
}

// gen draws random steps biased toward the states where the checks
// interact: a handful of indices (with the first out-of-range one now and
// then), rings in a few windowed regions, windows set and cleared.
type gen struct {
	r    *rand.Rand
	caps *regmap.Device
	tb   model.Tables // the model's tables before the step
}

// aim returns, three times in four, one of the indices the model's tables
// hold in the wanted state (if any), else idx's draw.
func (g *gen) aim(lim uint32, few int, match func(i int) bool, n int) uint32 {
	if g.n(4) != 0 {
		var hit []uint32
		for i := range n {
			if match(i) {
				hit = append(hit, uint32(i))
			}
		}
		if len(hit) > 0 {
			return hit[g.n(len(hit))]
		}
	}
	return g.idx(lim, few)
}

func (g *gen) cqIn(valid bool) uint32 {
	return g.aim(g.caps.CQs, 4, func(i int) bool { return g.tb.CQs[i].Valid == valid }, len(g.tb.CQs))
}

func (g *gen) qpIn(st ...model.QPState) uint32 {
	return g.aim(g.caps.Conns, 6, func(i int) bool {
		for _, s := range st {
			if g.tb.QPs[i].State == s {
				return true
			}
		}
		return false
	}, len(g.tb.QPs))
}

// ringIn draws, three times in four, an address for a ring of 2^k octets
// aligned and inside a declared window (if one has room), else addr's draw.
func (g *gen) ringIn(k uint32) uint64 {
	if g.n(4) != 0 && k < 40 {
		size := uint64(1) << k
		align := max(size, 4096)
		var fits []uint64
		for _, w := range g.tb.Windows {
			if w[1] == 0 {
				continue
			}
			start := (w[0] + align - 1) &^ (align - 1)
			if start+size <= w[0]+w[1] && start >= w[0] {
				fits = append(fits, start+align*uint64(g.n(int((w[0]+w[1]-start-size)/align+1))))
			}
		}
		if len(fits) > 0 {
			return fits[g.n(len(fits))]
		}
	}
	return g.addr()
}

// Regions the windows and rings are drawn in: 1 MiB apart, at 32 GiB.
const xRegion = 0x8_0000_0000

func (g *gen) n(k int) int { return g.r.Intn(k) }

// idx draws an index below lim, mostly among the first few, sometimes the
// first one out of range, rarely anything.
func (g *gen) idx(lim uint32, few int) uint32 {
	switch x := g.n(40); {
	case x == 0:
		return g.r.Uint32()
	case x < 3:
		return lim
	case x < 5:
		return lim - 1
	default:
		return uint32(g.n(few))
	}
}

// addr draws a ring or region address: mostly page-aligned inside one of
// four regions, sometimes misaligned, at the top of the address space or
// anything.
func (g *gen) addr() uint64 {
	reg := uint64(xRegion + g.n(4)<<20)
	switch x := g.n(30); {
	case x == 0:
		return g.r.Uint64()
	case x == 1:
		return -(uint64(1+g.n(4)) << 12)
	case x < 4:
		return reg + uint64(g.n(256))<<4
	default:
		return reg + uint64(g.n(64))<<12 // 64 pages: some beyond a short window
	}
}

func (g *gen) log2(max uint32) uint32 {
	switch x := g.n(20); {
	case x == 0:
		return 0
	case x == 1:
		return max + 1
	case x == 2:
		return max
	default:
		return 1 + uint32(g.n(int(min(max, 8))))
	}
}

func (g *gen) step() step {
	c := g.caps
	var cmd hostif.Command
	switch x := g.n(100); {
	case x < 12:
		l := g.log2(c.CQLog2)
		cmd = hostif.CreateCQ{CQN: g.cqIn(false), Ring: g.ringIn(5 + l), Log2: l, Vector: g.idx(c.Vectors, int(c.Vectors))}
	case x < 18:
		cmd = hostif.DestroyCQ{CQN: g.cqIn(true)}
	case x < 32:
		cq := func() uint16 { return uint16(g.cqIn(true)) }
		sl, rl := g.log2(c.SQLog2), g.log2(c.RQLog2)
		cmd = hostif.CreateQP{QPN: g.qpIn(model.QPFree), PD: uint32(g.n(4)) << (16 * uint(g.n(20)/19)),
			SQRing: g.ringIn(6 + sl), SQLog2: uint8(sl), RQRing: g.ringIn(5 + rl), RQLog2: uint8(rl),
			SendCQ: cq(), RecvCQ: cq()}
	case x < 40:
		cmd = hostif.QPRTS{QPN: uint16(g.qpIn(model.QPCreated)), IRD: uint8(g.r.Uint32()), ORD: uint8(g.r.Uint32()),
			MULPDU: uint16(g.n(3) * g.n(2000)), Flags: uint8(g.n(16)), TxMarkerBase: g.r.Uint32(),
			RxMarkerBase: g.r.Uint32(), TxSeq: g.r.Uint32(), RxSeq: g.r.Uint32(), RxMSNSend: g.r.Uint32(), RxMSNReadRq: g.r.Uint32()}
	case x < 50:
		cmd = hostif.QPDrain{QPN: g.qpIn(model.QPCreated, model.QPRTS, model.QPDrained)}
	case x < 58:
		cmd = hostif.DestroyQP{QPN: g.qpIn(model.QPDrained)}
	case x < 72:
		bound := hostif.NotBound
		if g.n(2) == 0 {
			bound = uint16(g.idx(c.Conns, 6))
		}
		length := uint64(g.n(3)) << (4 * uint(g.n(5)))
		if g.n(20) == 0 {
			length = g.r.Uint64()
		}
		to := uint64(g.n(2)) << 12
		if g.n(10) == 0 {
			to = g.r.Uint64()
		}
		addr := g.addr()
		if g.n(2) == 0 {
			addr = g.ringIn(12) + uint64(g.n(4096)) // a window's page, any octet of it
		}
		mrs := g.tb.MRs
		cmd = hostif.MRWrite{Index: uint16(g.aim(min(c.STags, 0xffff), 6, func(i int) bool { return mrs[i].Valid }, len(mrs))),
			Key: uint8(g.r.Uint32()), Access: uint8(g.n(16)),
			PD: uint16(g.r.Uint32()), BoundQPN: bound, BaseTO: to, Length: length, Addr: addr}
	case x < 80:
		mrs := g.tb.MRs
		cmd = hostif.MRInvalidate{Index: g.aim(c.STags, 6, func(i int) bool { return mrs[i].Valid }, len(mrs))}
	case x < 84:
		el, xl, xb := g.log2(16), g.log2(16), 5+g.n(13)
		cmd = hostif.EventRing{Ring: g.ringIn(4 + el), Log2: uint8(el), ExcRing: g.ringIn(xl + uint32(xb)), ExcLog2: uint8(xl),
			ExcBufLog2: uint8(xb)}
	case x < 96:
		var length uint64
		switch g.n(8) {
		case 0:
			length = 0 // clears the slot
		case 1:
			length = uint64(g.n(1<<16)) << 4 // seldom page-aligned
		case 2, 3:
			length = 1 << 20 // a whole region
		default:
			length = uint64(1+g.n(64)) << 12
		}
		addr := uint64(xRegion+g.n(4)<<20) + uint64(g.n(8))<<12
		if g.n(15) == 0 {
			addr = g.addr()
		}
		cmd = hostif.DMAWindow{Slot: g.idx(c.Windows, 3), Addr: addr, Length: length}
	default:
		return step{op: uint8(11 + g.n(245)), args: hostif.Args{g.r.Uint32()}}
	}
	a, _ := cmd.Args() // the generator keeps every field in range
	s := step{op: uint8(cmd.Opcode()), args: a}
	switch x := g.n(40); {
	case x == 0:
		s.args[g.n(8)] ^= 1 << uint(g.n(32)) // an unused word or bit, or just another value
	case x == 1:
		s.twice, s.op2 = true, uint8(g.n(12))
	}
	return s
}

const (
	xcheckLen = 400
)

var xcheckSeeds = []int64{1, 2, 3}

func envInt(t *testing.T, name string, def int64) int64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func TestAdminCrossCheckRandom(t *testing.T) {
	seeds := xcheckSeeds
	length := int(envInt(t, "RNIC_XCHECK_LEN", xcheckLen))
	if n := envInt(t, "RNIC_XCHECK_SEEDS", 0); n > 0 {
		first := envInt(t, "RNIC_XCHECK_SEED", time.Now().UnixNano()%1_000_000_007)
		seeds = nil
		for i := range n {
			seeds = append(seeds, first+i)
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			fmt.Printf("admin cross-check: seed %d, %d commands (RNIC_XCHECK_SEED=%d RNIC_XCHECK_SEEDS=1 reruns it)\n",
				seed, length, seed)
			p := newPair(t)
			m := p.mod.b.(*model.Device)
			g := &gen{r: rand.New(rand.NewSource(seed)), caps: p.caps}
			p.checkGen(t, "random", seed, length, func(int) step {
				g.tb = m.Tables()
				return g.step()
			})
		})
	}
}
