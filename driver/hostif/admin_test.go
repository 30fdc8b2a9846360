package hostif

import (
	"errors"
	"strings"
	"testing"
	"testing/quick"
)

// Golden argument words, written from docs/device.md's "Argument words"
// table (not from Args).
var goldenCommands = []struct {
	cmd  Command
	args Args
}{
	{CreateCQ{CQN: 7, Ring: 0x0000_0001_2345_6000, Log2: 10, Vector: 3},
		Args{7, 0x23456000, 0x1, 10, 3, 0, 0, 0}},
	{DestroyCQ{CQN: 4095}, Args{4095}},
	{CreateQP{QPN: 0x3ff, PD: 9, SQRing: 0x8000_0000_1000, RQRing: 0x2000, SQLog2: 8, RQLog2: 12, SendCQ: 1, RecvCQ: 0x201},
		Args{0x3ff, 9, 0x1000, 0x8000, 0x2000, 0, 0x0c08, 0x0201_0001}},
	{QPRTS{QPN: 5, IRD: 16, ORD: 8, MULPDU: 1460, Flags: RTSMarkersRx | RTSCRCTx | RTSCRCRx,
		TxMarkerBase: 0x1000, RxMarkerBase: 0xfffffff0, TxSeq: 0x1010, RxSeq: 0x20, RxMSNSend: 2, RxMSNReadRq: 1},
		Args{0x0810_0005, 0x000e_05b4, 0x1000, 0xfffffff0, 0x1010, 0x20, 2, 1}},
	{QPDrain{QPN: 12}, Args{12}},
	{DestroyQP{QPN: 12}, Args{12}},
	{MRWrite{Index: 0x123, Key: 0xab, Access: AccessLocalWrite | AccessRemoteWrite, PD: 9, BoundQPN: NotBound,
		BaseTO: 0x7fff_0000_1000, Length: 0x1_0000_0000, Addr: 0x4000_2000},
		Args{0x0aab_0123, 0xffff_0009, 0x1000, 0x7fff, 0, 1, 0x4000_2000, 0}},
	{MRInvalidate{Index: 0x123}, Args{0x123}},
	{EventRing{Ring: 0x10000, Log2: 6, ExcRing: 0x1_0002_0000, ExcLog2: 4, ExcBufLog2: 11},
		Args{0x10000, 0, 0x0b_04_06, 0x20000, 1}},
	{DMAWindow{Slot: 2, Addr: 0x1_0000_0000, Length: 0x4000_0000}, Args{2, 0, 1, 0x4000_0000, 0}},
}

func TestGoldenCommands(t *testing.T) {
	seen := map[AdminOpcode]bool{}
	for _, g := range goldenCommands {
		seen[g.cmd.Opcode()] = true
		a, err := g.cmd.Args()
		if err != nil || a != g.args {
			t.Errorf("%v: Args = %#x, %v; want %#x", g.cmd, a, err, g.args)
		}
		c, err := DecodeCommand(g.cmd.Opcode(), g.args)
		if err != nil || c != g.cmd {
			t.Errorf("%v: DecodeCommand = %v, %v", g.cmd, c, err)
		}
	}
	if len(seen) != len(adminNames) {
		t.Errorf("goldens cover %d of the %d commands", len(seen), len(adminNames))
	}
}

func TestDrainResult(t *testing.T) {
	r, err := DecodeDrainResult(Args{0xfffe, 3})
	if err != nil || r != (DrainResult{SQIndex: 0xfffe, RQIndex: 3}) || r.Args() != (Args{0xfffe, 3}) {
		t.Fatalf("%+v, %v", r, err)
	}
	_, err = DecodeDrainResult(Args{0x10000})
	argRefusal(t, err, 0, "ring index")
}

func argRefusal(t *testing.T, err error, word int, field string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) || !fe.Word {
		t.Fatalf("err = %v, want a *FieldError about ARG%d", err, word)
	}
	if fe.Offset != word || !strings.Contains(fe.Field, field) {
		t.Fatalf("refused %q in ARG%d, want %q in ARG%d (%v)", fe.Field, fe.Offset, field, word, err)
	}
	if !strings.Contains(err.Error(), "ARG") || !strings.Contains(err.Error(), "arguments") {
		t.Fatalf("message %q does not say which command's which word", err)
	}
}

func TestDecodeCommandRefuses(t *testing.T) {
	for _, op := range []AdminOpcode{0, 0x0b, 0x80, 0xff} {
		_, err := DecodeCommand(op, Args{})
		var u *UnknownOpcodeError
		if !errors.As(err, &u) || u.Op != op {
			t.Errorf("opcode %#x: %v, want an UnknownOpcodeError", op, err)
		}
	}
	// Every unused word of every command, one at a time.
	firstUnused := map[AdminOpcode]int{OpCreateCQ: 5, OpDestroyCQ: 1, OpQPDrain: 1, OpDestroyQP: 1,
		OpMRInvalidate: 1, OpEventRing: 5, OpDMAWindow: 5}
	for op, from := range firstUnused {
		for w := from; w < 8; w++ {
			var a Args
			a[w] = 1 << (w * 3)
			_, err := DecodeCommand(op, a)
			argRefusal(t, err, w, "unused word")
		}
	}
	// Unused bits inside a word, and unknown access bits.
	for _, c := range []struct {
		op    AdminOpcode
		word  int
		v     uint32
		field string
	}{
		{OpCreateQP, 6, 1 << 16, "bits outside"}, {OpCreateQP, 6, 1 << 31, "bits outside"},
		{OpQPRTS, 1, 1 << 20, "bits outside"}, {OpQPRTS, 1, 1 << 31, "bits outside"},
		{OpEventRing, 2, 1 << 24, "bits outside"},
		{OpMRWrite, 0, 0x10 << 24, "access"}, {OpMRWrite, 0, 0x80 << 24, "access"},
	} {
		var a Args
		a[c.word] = c.v
		_, err := DecodeCommand(c.op, a)
		argRefusal(t, err, c.word, c.field)
	}
	// The encoders refuse what the decoder would.
	_, err := MRWrite{Access: 0x10}.Args()
	argRefusal(t, err, 0, "access")
	_, err = QPRTS{Flags: 0x10}.Args()
	argRefusal(t, err, 1, "flags")
}

// Every command survives Args then DecodeCommand, whatever its values.
func TestCommandRoundTrips(t *testing.T) {
	cfg := &quick.Config{MaxCount: 500}
	check := func(c Command) bool {
		a, err := c.Args()
		if err != nil {
			return false
		}
		got, err := DecodeCommand(c.Opcode(), a)
		return err == nil && got == c
	}
	for name, f := range map[string]any{
		"CREATE_CQ":  func(c CreateCQ) bool { return check(c) },
		"DESTROY_CQ": func(c DestroyCQ) bool { return check(c) },
		"CREATE_QP":  func(c CreateQP) bool { return check(c) },
		"QP_RTS": func(c QPRTS) bool {
			c.Flags &= 0xf
			return check(c)
		},
		"QP_DRAIN":   func(c QPDrain) bool { return check(c) },
		"DESTROY_QP": func(c DestroyQP) bool { return check(c) },
		"MR_WRITE": func(c MRWrite) bool {
			c.Access &= accessKnown
			return check(c)
		},
		"MR_INVALIDATE": func(c MRInvalidate) bool { return check(c) },
		"EVENT_RING":    func(c EventRing) bool { return check(c) },
		"DMA_WINDOW":    func(c DMAWindow) bool { return check(c) },
	} {
		if err := quick.Check(f, cfg); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzCommand: an opcode and eight words either decode to a command whose
// words are exactly those, or are refused.
func FuzzCommand(f *testing.F) {
	for _, g := range goldenCommands {
		a := g.args
		f.Add(uint8(g.cmd.Opcode()), a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
	}
	f.Fuzz(func(t *testing.T, op uint8, a0, a1, a2, a3, a4, a5, a6, a7 uint32) {
		a := Args{a0, a1, a2, a3, a4, a5, a6, a7}
		c, err := DecodeCommand(AdminOpcode(op), a)
		if err != nil {
			return
		}
		got, err := c.Args()
		if err != nil || got != a || c.Opcode() != AdminOpcode(op) {
			t.Fatalf("%#x %#x decoded as %v, packed back as %#x, %v", op, a, c, got, err)
		}
	})
}

func TestAdminStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{OpQPRTS.String(), "QP_RTS"}, {AdminOpcode(0x42).String(), "admin opcode 0x42 (unknown)"},
		{AdminOutOfWindow.String(), "OUT_OF_WINDOW"}, {AdminStatus(6).String(), "admin status 6 (unknown)"},
		{goldenCommands[6].cmd.String(), "MR_WRITE stag 0x123ab (index 291 key 0xab) access 0xa pd 9 unbound " +
			"to 0x7fff00001000 len 4294967296 addr 0x40002000"},
		{DMAWindow{Slot: 1}.String(), "DMA_WINDOW slot 1 cleared"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
