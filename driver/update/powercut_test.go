package update_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/driver/simdev"
	"github.com/openrnic/rnic/driver/update"
)

// TestPowerCutMatrix cuts the power in every flash operation of an update,
// one case each: every sector erase and page program the updater makes,
// the trial attempt the boot logic records when the update reboots into
// the new slot, and the confirm. After each cut the device is powered on
// again on what the cut left (the flash model's file) and must boot a
// valid image, the new one or the previous one, whose octets in flash are
// that image's; the golden slot must be octet for octet what it was.
func TestPowerCutMatrix(t *testing.T) {
	k := key(1)
	base := tmp(t, "base.bin")
	provision(t, base, image(t, k, 0, 1, 700, 0x11), k)
	// The previous image: slot A, confirmed (as an earlier update leaves it).
	old := image(t, k, 1, 1, 5000, 0x22)
	fl := readFile(t, base)
	if err := flash.WriteSlot(fl, flash.SlotA, old[:flash.HeaderLen], old[flash.HeaderLen:], 1, nil); err != nil {
		t.Fatal(err)
	}
	fl[flash.SlotA.Base()+flash.ConfirmOff] = 0
	writeFile(t, base, fl)
	// The new image: three payload sectors, the last one partly used.
	img := image(t, k, 2, 2, 2*flash.SectorSize+300, 0x33)
	ctx := ctxT(t)

	// The reference run counts the operations.
	ref := tmp(t, "ref.bin")
	copyFile(t, base, ref)
	d := power(t, ref)
	if b := boot(t, d); b.Slot != flash.SlotA || b.Reason != flash.ReasonConfirmed {
		t.Fatalf("the base state boots %+v, want A confirmed", b)
	}
	s0 := stats(t, d.sim)
	if _, err := update.Flash(ctx, d.c, img, update.Options{Trust: trust(t, k)}); err != nil {
		t.Fatal(err)
	}
	s1 := stats(t, d.sim)
	if _, err := update.Confirm(ctx, d.c); err != nil {
		t.Fatal(err)
	}
	s2 := stats(t, d.sim)
	d.off(t)
	updateOps, confirmOps := int(s1.Ops-s0.Ops), int(s2.Ops-s1.Ops)
	// 1 header sector + 3 payload sectors erased, 34 payload pages, 2 header
	// pages, the marker: the updater's; 1 trial attempt: the boot logic's.
	if want := 4 + 34 + 2 + 1 + 1; updateOps != want || confirmOps != 1 {
		t.Fatalf("the update made %d flash operations and the confirm %d, want %d and 1", updateOps, confirmOps, want)
	}
	golden := fl[:flash.SlotSize]
	outcomes := map[string]int{}
	for n := 1; n <= updateOps+confirmOps; n++ {
		permille := uint32(1 + (n*397)%998)
		t.Run(fmt.Sprintf("op%02d", n), func(t *testing.T) {
			path := tmp(t, "flash.bin")
			copyFile(t, base, path)
			d := power(t, path)
			if err := d.sim.FlashCut(uint32(n), permille, uint32(n)); err != nil {
				t.Fatal(err)
			}
			_, err := update.Flash(ctx, d.c, img, update.Options{Trust: trust(t, k)})
			if err == nil {
				_, err = update.Confirm(ctx, d.c)
			}
			if !errors.Is(err, simdev.ErrPowerCut) {
				t.Fatalf("cut at operation %d: the update ended with %v, want the power cut", n, err)
			}
			d.sim.Close()
			after := readFile(t, path)
			if !bytes.Equal(after[:flash.SlotSize], golden) {
				t.Fatal("the golden slot changed")
			}
			// Power on: a valid image boots, the new or the previous.
			d = power(t, path)
			defer d.off(t)
			b := boot(t, d)
			var want []byte
			switch {
			case b.Slot == flash.SlotA && b.Build == 0x22:
				want = old
			case b.Slot == flash.SlotB && b.Build == 0x33:
				want = img
			default:
				t.Fatalf("cut at operation %d (%d/1000): booted %s (%s, build %#x), want A (previous) or B (new)",
					n, permille, b.Slot, b.Reason, b.Build)
			}
			sb := b.Slot.Base()
			if !bytes.Equal(after[sb:sb+flash.HeaderLen], want[:flash.HeaderLen]) ||
				!bytes.Equal(after[sb+flash.PayloadOff:sb+flash.PayloadOff+uint32(len(want)-flash.HeaderLen)], want[flash.HeaderLen:]) {
				t.Fatalf("cut at operation %d: slot %s booted, but its octets are not the image's", n, b.Slot)
			}
			outcomes[fmt.Sprintf("%s %s", b.Slot, b.Reason)]++
			// Every eighth case: the update run again succeeds (recovery).
			if n%8 == 0 && b.Reason != flash.ReasonTrial {
				r, err := update.Flash(ctx, d.c, img, update.Options{Trust: trust(t, k)})
				if err != nil || r.Boot.Build != 0x33 {
					t.Fatalf("update after the cut: %+v, %v", r, err)
				}
			}
		})
	}
	t.Logf("%d cuts (%d update operations, %d confirm): outcomes %v", updateOps+confirmOps, updateOps, confirmOps, outcomes)
}

func stats(t testing.TB, d *simdev.Device) simdev.FlashStats {
	t.Helper()
	s, err := d.FlashStats()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := osWriteFile(path, b); err != nil {
		t.Fatal(err)
	}
}
