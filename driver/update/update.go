// Package update is the safe A/B update of the device's image
// (docs/firmware-update.md): verify before a single octet is erased,
// write the payload, then the header, then the commit marker, read it all
// back, reboot into the new slot on trial, and confirm.
package update

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/firmware"
)

// Progress is told how far an update is: octets done of total (erased
// sectors count their 4096 octets, programs and read-backs their octets),
// and the phase ("erase", "program", "verify").
type Progress func(phase string, done, total int64)

// Options are what an update needs beside the image.
type Options struct {
	// Trust is the host's trust set (keyfile.LoadTrust); the image's key
	// must be in it and in the golden slot's key list.
	Trust    *firmware.TrustSet
	Progress Progress
}

// Refused is an update refused before the flash was touched.
type Refused struct {
	Reason string
	Action string
	Err    error // the firmware package's *firmware.Error, when it refused
}

func (e *Refused) Error() string {
	if e.Action == "" {
		return "update refused: " + e.Reason
	}
	return "update refused: " + e.Reason + "; " + e.Action
}

func (e *Refused) Unwrap() error { return e.Err }

// ErrTrialPending is refused when the running image is on trial: writing
// the other slot would overwrite the last good image.
var ErrTrialPending = errors.New("the running image is on trial")

// Result is what a finished update did.
type Result struct {
	Slot    flash.Slot
	Seq     uint32
	Image   firmware.Header
	Boot    flash.BootStatus // after the reboot into the new slot
	Written int64            // octets programmed
}

// Device is what the golden slot says the device is.
type Device struct {
	Golden *firmware.Header
	Keys   [][32]byte // the key ids an update may be signed with
}

// ReadDevice reads the golden slot's header and key list.
func ReadDevice(ctx context.Context, c *flash.Controller) (*Device, error) {
	hs, err := c.Read(ctx, flash.Golden.Base(), flash.KeyListOff+8+32*flash.MaxKeys+4)
	if err != nil {
		return nil, err
	}
	h, err := firmware.ParseHeader(hs[:flash.HeaderLen])
	if err != nil {
		return nil, fmt.Errorf("the golden slot's header: %w (the device's identity comes from it: provision the golden image)", err)
	}
	keys, err := flash.ParseKeyList(hs[flash.KeyListOff:])
	if err != nil {
		return nil, err
	}
	return &Device{Golden: h, Keys: keys}, nil
}

// SlotInfo is what a slot's header sector says, as the updater reads it.
type SlotInfo struct {
	Marker    flash.Marker
	HasMarker bool
}

func readMarker(ctx context.Context, c *flash.Controller, s flash.Slot) (SlotInfo, error) {
	b, err := c.Read(ctx, s.Base()+flash.MarkerOff, flash.MarkerLen)
	if err != nil {
		return SlotInfo{}, err
	}
	m, err := flash.ParseMarker(b)
	return SlotInfo{Marker: m, HasMarker: err == nil}, nil
}

// Check verifies img for the device without touching the flash: the
// signature against trust, the payload, the target (board, FPGA part, PCI
// IDs of the golden image), the security counter against the running
// image's, the payload size against the slot, the key against the golden
// slot's key list, and that no trial is pending. It returns the verified
// image and the slot it would go to.
func Check(ctx context.Context, c *flash.Controller, img []byte, trust *firmware.TrustSet) (*firmware.Verified, flash.Slot, flash.BootStatus, error) {
	boot, err := c.Boot(ctx)
	if err != nil {
		return nil, 0, boot, err
	}
	dev, err := ReadDevice(ctx, c)
	if err != nil {
		return nil, 0, boot, &Refused{Reason: err.Error(), Action: "the device's golden slot must hold a valid image and its key list"}
	}
	if trust == nil {
		return nil, 0, boot, &Refused{Reason: "no trust set", Action: "give the signers' public keys"}
	}
	t := firmware.Target{Board: dev.Golden.Board, Part: dev.Golden.Part, PCIIDs: dev.Golden.PCI,
		MinSecurityCounter: boot.SecurityCounter, MaxPayload: flash.MaxPayload}
	v, err := firmware.VerifyTarget(img, trust, t)
	if err != nil {
		return nil, 0, boot, &Refused{Reason: err.Error(), Err: err}
	}
	known := false
	for _, k := range dev.Keys {
		known = known || k == v.Header.KeyID
	}
	if !known {
		return nil, 0, boot, &Refused{Reason: fmt.Sprintf("the image's key %s is trusted by this host but not by the device (not in its golden slot's key list)", v.Header.KeyID),
			Action: "sign the image with a key the device's golden image lists"}
	}
	if boot.Reason == flash.ReasonTrial {
		return nil, 0, boot, &Refused{Reason: fmt.Sprintf("slot %s runs on trial (%s)", boot.Slot, ErrTrialPending),
			Action: "confirm it (rnic-loader confirm) or reboot to fall back, then flash again", Err: ErrTrialPending}
	}
	target, err := pickSlot(ctx, c, boot)
	if err != nil {
		return nil, 0, boot, err
	}
	return v, target, boot, nil
}

// pickSlot is the update slot that is not the running one; running golden
// (or nothing), the one without a valid marker, else the older.
func pickSlot(ctx context.Context, c *flash.Controller, boot flash.BootStatus) (flash.Slot, error) {
	switch boot.Slot {
	case flash.SlotA:
		return flash.SlotB, nil
	case flash.SlotB:
		return flash.SlotA, nil
	}
	a, err := readMarker(ctx, c, flash.SlotA)
	if err != nil {
		return 0, err
	}
	b, err := readMarker(ctx, c, flash.SlotB)
	if err != nil {
		return 0, err
	}
	switch {
	case !boot.Valid[flash.SlotA] || !a.HasMarker:
		return flash.SlotA, nil
	case !boot.Valid[flash.SlotB] || !b.HasMarker:
		return flash.SlotB, nil
	case b.Marker.Seq < a.Marker.Seq:
		return flash.SlotB, nil
	}
	return flash.SlotA, nil
}

// Flash updates the device with img: Check, then into the slot it picked
// the header sector erased first (the slot is invalid from then on), the
// payload's sectors erased and programmed, the header programmed, the
// commit marker last; everything read back and compared; then a reboot
// into the new slot, which boots on trial until Confirm.
func Flash(ctx context.Context, c *flash.Controller, img []byte, opt Options) (*Result, error) {
	v, slot, _, err := Check(ctx, c, img, opt.Trust)
	if err != nil {
		return nil, err
	}
	a, err := readMarker(ctx, c, flash.SlotA)
	if err != nil {
		return nil, err
	}
	b, err := readMarker(ctx, c, flash.SlotB)
	if err != nil {
		return nil, err
	}
	seq := max(a.Marker.Seq, b.Marker.Seq) + 1
	header := img[:flash.HeaderLen]
	payload := v.Payload
	hs, err := flash.HeaderSector(header, payload, seq)
	if err != nil {
		return nil, err
	}
	base := slot.Base()
	sectors := (len(payload) + flash.SectorSize - 1) / flash.SectorSize
	total := int64(flash.SectorSize*(1+sectors)) + 2*int64(len(payload)+flash.HeaderLen+flash.MarkerLen)
	var done int64
	step := func(phase string, n int) {
		done += int64(n)
		if opt.Progress != nil {
			opt.Progress(phase, done, total)
		}
	}
	// 1. The header sector: the slot stops being valid.
	if err := c.Erase(ctx, base); err != nil {
		return nil, err
	}
	step("erase", flash.SectorSize)
	// 2. The payload's sectors, then its pages.
	for i := 0; i < sectors; i++ {
		if err := c.Erase(ctx, base+flash.PayloadOff+uint32(i*flash.SectorSize)); err != nil {
			return nil, err
		}
		step("erase", flash.SectorSize)
	}
	for off := 0; off < len(payload); off += flash.PageSize {
		chunk := payload[off:min(off+flash.PageSize, len(payload))]
		if err := c.Program(ctx, base+flash.PayloadOff+uint32(off), chunk); err != nil {
			return nil, err
		}
		step("program", len(chunk))
	}
	// 3. The header, then 4. the commit marker.
	if err := c.Program(ctx, base, hs[:flash.HeaderLen]); err != nil {
		return nil, err
	}
	step("program", flash.HeaderLen)
	if err := c.Program(ctx, base+flash.MarkerOff, hs[flash.MarkerOff:]); err != nil {
		return nil, err
	}
	step("program", flash.MarkerLen)
	// 5. Read it all back.
	got, err := c.Read(ctx, base, len(hs))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(got[:flash.HeaderLen], header) || !bytes.Equal(got[flash.MarkerOff:], hs[flash.MarkerOff:]) {
		return nil, fmt.Errorf("update: slot %s's header sector reads back different from what was written: the flash may be failing; flash again", slot)
	}
	step("verify", flash.HeaderLen+flash.MarkerLen)
	for off := 0; off < len(payload); off += flash.PageSize {
		n := min(flash.PageSize, len(payload)-off)
		got, err := c.Read(ctx, base+flash.PayloadOff+uint32(off), n)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(got, payload[off:off+n]) {
			return nil, fmt.Errorf("update: slot %s's payload reads back different at offset %d: the flash may be failing; flash again", slot, off)
		}
		step("verify", n)
	}
	// 6. Reboot into it: a trial.
	boot, err := c.Reboot(ctx)
	if err != nil {
		return nil, err
	}
	res := &Result{Slot: slot, Seq: seq, Image: v.Header, Boot: boot, Written: int64(len(payload) + len(hs))}
	if boot.Slot != slot || boot.Reason != flash.ReasonTrial {
		return res, fmt.Errorf("update: slot %s was written and verified, but the reboot chose slot %s (%s): %s",
			slot, boot.Slot, boot.Reason, boot.Reason.Text())
	}
	return res, nil
}

// ErrNotOnTrial is Confirm's answer when the running image is not on trial.
var ErrNotOnTrial = errors.New("update: the running image is not on trial: nothing to confirm")

// Confirm ends the running image's trial: its confirm octet is programmed,
// so the next boots keep it. It returns the slot it confirmed.
func Confirm(ctx context.Context, c *flash.Controller) (flash.Slot, error) {
	boot, err := c.Boot(ctx)
	if err != nil {
		return 0, err
	}
	if boot.Reason != flash.ReasonTrial {
		return boot.Slot, fmt.Errorf("%w (slot %s booted: %s)", ErrNotOnTrial, boot.Slot, boot.Reason.Text())
	}
	at := boot.Slot.Base() + flash.ConfirmOff
	if err := c.Program(ctx, at, []byte{0}); err != nil {
		return boot.Slot, err
	}
	got, err := c.Read(ctx, at, 1)
	if err != nil {
		return boot.Slot, err
	}
	if got[0] != 0 {
		return boot.Slot, fmt.Errorf("update: slot %s's confirm octet reads %#02x after programming 0x00: the flash may be failing; confirm again", boot.Slot, got[0])
	}
	return boot.Slot, nil
}

// Confirmed reads whether slot s's image is confirmed now (the boot
// status says what it was at boot).
func Confirmed(ctx context.Context, c *flash.Controller, s flash.Slot) (bool, error) {
	if s != flash.SlotA && s != flash.SlotB {
		return s == flash.Golden, nil
	}
	b, err := c.Read(ctx, s.Base()+flash.ConfirmOff, 1)
	if err != nil {
		return false, err
	}
	return b[0] == 0, nil
}
