package model_test

import (
	"testing"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regs"
)

// The vectors' rule (docs/device.md, RNIV; hw/rtl/rnic_irq.v): moderation
// by count, by time (in the model: at the end of the call), mask holding
// and unmask sending, enable 0 sending nothing while PENDING still sets.
func TestVectorModeration(t *testing.T) {
	r := newRig(t, model.DefaultConfig)
	vec := r.d.Map.VectorsBase() + regs.VectorsVec - regs.VectorsBase
	set := func(fn, v uint32) {
		t.Helper()
		if err := r.m.Write32(vec+fn, v); err != nil {
			t.Fatal(err)
		}
	}
	pending := func() uint32 {
		p, _ := r.m.Read32(vec + regs.VectorsVecPending)
		return p
	}
	ev := hostif.Event{Type: hostif.EventQPError, Index: 1}
	step := func(what string, events int, want uint64) {
		t.Helper()
		for range events {
			r.m.InjectEvent(ev)
		}
		if got := r.m.Messages(0); got != want {
			t.Fatalf("%s: %d messages, want %d", what, got, want)
		}
	}
	set(regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask)
	step("MOD_COUNT 0: every entry", 2, 2)
	set(regs.VectorsVecModCount, 3)
	step("MOD_COUNT 3: two entries", 2, 2)
	step("MOD_COUNT 3: the third", 1, 3)
	step("MOD_COUNT 3: three more", 3, 4)

	// MOD_TIME with the count not reached: due at the end of the call.
	set(regs.VectorsVecModTime, 100)
	step("MOD_TIME: one entry", 1, 5)
	set(regs.VectorsVecModTime, 0)

	// Mask holds (PENDING sets), unmask sends one message for all.
	set(regs.VectorsVecModCount, 0)
	set(regs.VectorsVecPending, 1)
	set(regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask|regs.VectorsVecCtrlMaskMask)
	step("masked", 3, 5)
	if pending() != 1 {
		t.Fatal("masked: PENDING not set")
	}
	set(regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask)
	step("unmasked", 0, 6)

	// Enable 0: no message, PENDING sets; enabling again owes nothing.
	set(regs.VectorsVecPending, 1)
	set(regs.VectorsVecCtrl, 0)
	step("disabled", 2, 6)
	if pending() != 1 {
		t.Fatal("disabled: PENDING not set")
	}
	set(regs.VectorsVecCtrl, regs.VectorsVecCtrlEnableMask)
	step("enabled again", 0, 6)
}
