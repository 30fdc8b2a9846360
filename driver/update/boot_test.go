package update_test

import (
	"errors"
	"os"
	"testing"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/driver/update"
)

// TestTrialConfirmFallback: an update boots on trial; unconfirmed, the
// next boot falls back; confirmed, it stays; the next update goes to the
// other slot and falls back to the confirmed one when not confirmed.
func TestTrialConfirmFallback(t *testing.T) {
	k := key(1)
	path := tmp(t, "flash.bin")
	provision(t, path, image(t, k, 0, 1, 1000, 0x11), k)
	ctx := ctxT(t)

	d := power(t, path)
	if b := boot(t, d); b.Slot != flash.Golden || b.Reason != flash.ReasonGolden || b.Build != 0x11 {
		t.Fatalf("fresh device booted %+v, want golden (nothing else valid)", b)
	}
	img1 := image(t, k, 1, 1, 9000, 0x22)
	r, err := update.Flash(ctx, d.c, img1, update.Options{Trust: trust(t, k)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Slot != flash.SlotA || r.Boot.Slot != flash.SlotA || r.Boot.Reason != flash.ReasonTrial || r.Boot.Build != 0x22 {
		t.Fatalf("first update: %+v, want slot A on trial", r)
	}
	// Not confirmed: the next boot falls back (golden: nothing else is confirmed).
	if b, err := d.c.Reboot(ctx); err != nil || b.Slot != flash.Golden || b.Reason != flash.ReasonUnconfirmed {
		t.Fatalf("reboot without confirm: %+v, %v; want golden, fallback (trial not confirmed)", b, err)
	}
	if _, err := update.Confirm(ctx, d.c); !errors.Is(err, update.ErrNotOnTrial) {
		t.Fatalf("confirm after the fallback: %v, want ErrNotOnTrial", err)
	}
	// Again, and confirmed this time: it stays, over reboots and power
	// cycles. (Running golden, the updater takes the slot without a valid
	// image: B, keeping A's untried-again image until it needs the room.)
	r, err = update.Flash(ctx, d.c, img1, update.Options{Trust: trust(t, k)})
	if err != nil {
		t.Fatal(err)
	}
	good := r.Slot
	if good != flash.SlotB {
		t.Fatalf("second update went to slot %s, want B (A holds a valid image)", good)
	}
	if s, err := update.Confirm(ctx, d.c); err != nil || s != good {
		t.Fatalf("confirm: %v, %v", s, err)
	}
	if b, err := d.c.Reboot(ctx); err != nil || b.Slot != good || b.Reason != flash.ReasonConfirmed {
		t.Fatalf("reboot after confirm: %+v, %v; want %s, confirmed", b, err, good)
	}
	d.off(t)
	d = power(t, path)
	if b := boot(t, d); b.Slot != good || b.Reason != flash.ReasonConfirmed || b.Build != 0x22 || b.SecurityCounter != 1 {
		t.Fatalf("power cycle after confirm: %+v; want %s, confirmed", b, good)
	}
	// The next update goes to the other slot; unconfirmed, the boot after it falls back.
	img2 := image(t, k, 2, 2, 5000, 0x33)
	r, err = update.Flash(ctx, d.c, img2, update.Options{Trust: trust(t, k)})
	if err != nil || r.Slot != flash.SlotA || r.Boot.Reason != flash.ReasonTrial || r.Seq <= 2 {
		t.Fatalf("third update: %+v, %v; want A on trial with a higher sequence", r, err)
	}
	// While A is on trial, another update is refused (it would overwrite B, the last good).
	before := readFile(t, path)
	if _, err := update.Flash(ctx, d.c, img2, update.Options{Trust: trust(t, k)}); !errors.Is(err, update.ErrTrialPending) {
		t.Fatalf("update during a trial: %v, want ErrTrialPending", err)
	}
	if string(before) != string(readFile(t, path)) {
		t.Fatal("a refused update changed the flash")
	}
	d.off(t)
	d = power(t, path)
	if b := boot(t, d); b.Slot != good || b.Reason != flash.ReasonUnconfirmed || b.Build != 0x22 {
		t.Fatalf("power cycle during A's trial: %+v; want %s, fallback (trial not confirmed)", b, good)
	}
	d.off(t)
}

// TestInvalidSlots: a slot with a torn header or payload is not booted;
// with both update slots invalid the golden one boots.
func TestInvalidSlots(t *testing.T) {
	k := key(1)
	path := tmp(t, "flash.bin")
	provision(t, path, image(t, k, 0, 1, 600, 0x11), k)
	fl := readFile(t, path)
	a, b := image(t, k, 1, 1, 3000, 0x22), image(t, k, 2, 1, 3000, 0x33)
	if err := flash.WriteSlot(fl, flash.SlotA, a[:flash.HeaderLen], a[flash.HeaderLen:], 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := flash.WriteSlot(fl, flash.SlotB, b[:flash.HeaderLen], b[flash.HeaderLen:], 2, nil); err != nil {
		t.Fatal(err)
	}
	// Both confirmed: B (newer) boots.
	fl[flash.SlotA.Base()+flash.ConfirmOff] = 0
	fl[flash.SlotB.Base()+flash.ConfirmOff] = 0
	write := func() {
		if err := os.WriteFile(path, fl, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write()
	check := func(slot flash.Slot, why flash.Reason, valid [3]bool) {
		t.Helper()
		d := power(t, path)
		defer d.off(t)
		bs := boot(t, d)
		if bs.Slot != slot || bs.Reason != why || bs.Valid != valid {
			t.Fatalf("booted %s (%s), valid %v; want %s (%s), valid %v", bs.Slot, bs.Reason, bs.Valid, slot, why, valid)
		}
	}
	check(flash.SlotB, flash.ReasonConfirmed, [3]bool{true, true, true})
	// One payload bit of B flipped (bit rot): A boots.
	fl[flash.SlotB.Base()+flash.PayloadOff+1234] ^= 0x01
	write()
	check(flash.SlotA, flash.ReasonInvalid, [3]bool{true, true, false})
	// A's header with one octet erased back to 0xFF: nothing but golden.
	fl[flash.SlotA.Base()+0x20] = 0xff
	write()
	check(flash.Golden, flash.ReasonGolden, [3]bool{true, false, false})
	// The golden slot is never written by the host: check it is the file's.
	d := power(t, path)
	defer d.off(t)
	g, err := d.c.Read(ctxT(t), 0, 320)
	if err != nil || string(g) != string(fl[:320]) {
		t.Fatalf("golden header reads back differently: %v", err)
	}
}
