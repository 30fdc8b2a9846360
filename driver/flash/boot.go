package flash

import (
	"context"
	"fmt"

	"github.com/openrnic/rnic/driver/regs"
)

// Slot names a slot of the flash layout.
type Slot uint8

// The slots (BOOT_STATUS.SLOT's values).
const (
	Golden Slot = 0
	SlotA  Slot = 1
	SlotB  Slot = 2
	NoSlot Slot = 3
)

func (s Slot) String() string {
	switch s {
	case Golden:
		return "golden"
	case SlotA:
		return "A"
	case SlotB:
		return "B"
	}
	return "none"
}

// Reason is why the boot logic chose its slot (BOOT_STATUS.REASON).
type Reason uint8

// The reasons (hw/rtl/flash_defs.vh, FWHY_*).
const (
	ReasonNone        Reason = 0 // the boot logic has not run
	ReasonConfirmed   Reason = 1 // the newest valid slot, confirmed
	ReasonTrial       Reason = 2 // the newest valid slot's trial boot: confirm it, or the next boot falls back
	ReasonUnconfirmed Reason = 3 // fallback: the newest slot's trial was not confirmed
	ReasonInvalid     Reason = 4 // fallback: the other update slot holds an invalid (torn) image
	ReasonGolden      Reason = 5 // golden: no update slot holds a valid image
	ReasonNothing     Reason = 6 // no valid image at all, golden included
)

var reasonNames = map[Reason]string{
	ReasonNone: "none", ReasonConfirmed: "confirmed", ReasonTrial: "trial", ReasonUnconfirmed: "fallback-unconfirmed",
	ReasonInvalid: "fallback-invalid", ReasonGolden: "golden", ReasonNothing: "nothing-valid",
}

var reasonText = map[Reason]string{
	ReasonNone:        "the boot logic has not run",
	ReasonConfirmed:   "the newest valid image, confirmed",
	ReasonTrial:       "first boot of a new image on trial: confirm it (rnic-loader confirm) or the next boot falls back",
	ReasonUnconfirmed: "fallback: the newer image's trial boot was not confirmed",
	ReasonInvalid:     "fallback: the other update slot holds an invalid image (an update that did not finish)",
	ReasonGolden:      "no update slot holds a valid image",
	ReasonNothing:     "no valid image at all, not even the golden one",
}

// String is the reason's short name ("trial", "fallback-unconfirmed", ...).
func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// Text says what the reason means, for a person.
func (r Reason) Text() string { return reasonText[r] }

// BootStatus is the boot logic's report of its last run.
type BootStatus struct {
	Slot            Slot
	Reason          Reason
	Version         uint32 // major [7:0], minor [15:8], patch [31:16]
	SecurityCounter uint32
	Build           uint32
	Seq             uint32 // the slot's commit sequence number
	StartAddr       uint32 // flash address of the booted payload
	Valid           [3]bool
	Present         [3]bool
	Confirmed       [3]bool // as read at boot: a confirm since then shows at the next boot
	Tried           [3]bool // trial attempts used up, as read at boot
}

// VersionString is the booted image's version as major.minor.patch.
func (b BootStatus) VersionString() string {
	return fmt.Sprintf("%d.%d.%d", b.Version&0xff, b.Version>>8&0xff, b.Version>>16)
}

func bits3(v uint32) [3]bool { return [3]bool{v&1 != 0, v&2 != 0, v&4 != 0} }

// Boot waits for the boot logic to finish (it runs at reset and after
// Reboot; the host is locked out meanwhile) and returns its report.
func (c *Controller) Boot(ctx context.Context) (BootStatus, error) {
	if _, err := c.wait(ctx); err != nil {
		return BootStatus{}, err
	}
	var w [6]uint32
	for i, off := range []uint32{regs.FlashBootStatus, regs.FlashBootVersion, regs.FlashBootSecurity, regs.FlashBootBuild,
		regs.FlashBootSeq, regs.FlashBootAddr} {
		v, err := c.read(off)
		if err != nil {
			return BootStatus{}, err
		}
		w[i] = v
	}
	st := w[0]
	if st&regs.FlashBootStatusDoneMask == 0 {
		return BootStatus{}, fmt.Errorf("flash: the boot logic has not run since reset (BOOT_STATUS %#08x)", st)
	}
	return BootStatus{
		Slot: Slot(st & regs.FlashBootStatusSlotMask), Reason: Reason((st & regs.FlashBootStatusReasonMask) >> regs.FlashBootStatusReasonShift),
		Version: w[1], SecurityCounter: w[2], Build: w[3], Seq: w[4], StartAddr: w[5],
		Valid:     bits3((st & regs.FlashBootStatusValidMask) >> regs.FlashBootStatusValidShift),
		Present:   bits3((st & regs.FlashBootStatusPresentMask) >> regs.FlashBootStatusPresentShift),
		Confirmed: bits3((st & regs.FlashBootStatusConfirmedMask) >> regs.FlashBootStatusConfirmedShift),
		Tried:     bits3((st & regs.FlashBootStatusTriedMask) >> regs.FlashBootStatusTriedShift),
	}, nil
}

// Reboot runs the boot logic again (a warm reboot: on a board, what would
// reload the FPGA from the chosen slot; in simulation the decision and its
// report, the trial attempt it records included) and returns its report.
func (c *Controller) Reboot(ctx context.Context) (BootStatus, error) {
	if _, err := c.wait(ctx); err != nil {
		return BootStatus{}, err
	}
	if err := c.write(regs.FlashBootCtrl, bootKey); err != nil {
		return BootStatus{}, err
	}
	return c.Boot(ctx)
}
