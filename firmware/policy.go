package firmware

// Target is the device an image is about to go to: what it is (board,
// FPGA part, PCI IDs) and the lowest security counter it still accepts.
// On a device, the flash updater fills it from the device itself and its
// configuration; rnic-loader verify from its flags.
type Target struct {
	Board string
	Part  string
	PCIIDs
	// MinSecurityCounter is the device's anti-rollback floor: images with
	// a lower security counter are refused, equal or higher accepted.
	MinSecurityCounter uint32
	// MaxPayload is the payload the device's update slot holds (the slot
	// minus its header sector); 0 leaves the payload's size unchecked
	// beyond the format's own limit.
	MaxPayload uint32
}

// Check refuses a header whose image is not for the target: another
// board, FPGA part or PCI IDs, a security counter below the target's
// (rollback), or a payload larger than its slot. Board, part and PCI IDs
// must all be given: an incomplete target is refused (BadTarget) rather
// than checked in part.
//
// A lower image version is not refused: going back to an older version
// with an equal or higher security counter is a downgrade the signer
// allowed (that is what the separate counter is for). To forbid going
// back past a fix, the signer raises the security counter of the fixed
// image, and devices raise their floor once they run it.
func Check(h *Header, t Target) error {
	switch {
	case t.Board == "":
		return refuse(BadTarget, "target board", "not given: say which board the image must be for (e.g. au250, sim)")
	case t.Part == "":
		return refuse(BadTarget, "target part", "not given: say which FPGA part the image must be for (e.g. xcu250-figd2104-2l-e, verilator)")
	case t.Vendor == 0 || t.Vendor == 0xffff || t.SubVendor == 0 || t.SubVendor == 0xffff:
		return refuse(BadTarget, "target PCI IDs", "%s: vendor IDs 0000 and ffff name no vendor; give the device's IDs as lspci -n shows them", t.PCIIDs)
	}
	if err := CheckBoard(h, t.Board); err != nil {
		return err
	}
	if err := CheckPart(h, t.Part); err != nil {
		return err
	}
	if err := CheckPCI(h, t.PCIIDs); err != nil {
		return err
	}
	if err := CheckSecurityCounter(h, t.MinSecurityCounter); err != nil {
		return err
	}
	return CheckSize(h, t.MaxPayload)
}

// CheckBoard refuses an image for another board than board.
func CheckBoard(h *Header, board string) error {
	if h.Board != board {
		return refuse(WrongBoard, "board", "the image is for board %q, not %q: use the image built for %s", h.Board, board, board)
	}
	return nil
}

// CheckPart refuses an image for another FPGA part than part.
func CheckPart(h *Header, part string) error {
	if h.Part != part {
		return refuse(WrongPart, "part", "the image is for FPGA part %q, not %q: a bitstream runs on the part it was built for only; use the image built for %s", h.Part, part, part)
	}
	return nil
}

// CheckPCI refuses an image for other PCI IDs than ids (all four
// compared).
func CheckPCI(h *Header, ids PCIIDs) error {
	if h.PCI != ids {
		return refuse(WrongPCI, "PCI IDs", "the image is for %s, the device is %s (vendor:device:subsystem vendor:subsystem device): use the image built for this device", h.PCI, ids)
	}
	return nil
}

// CheckSecurityCounter refuses an image whose security counter is below
// min (anti-rollback).
func CheckSecurityCounter(h *Header, min uint32) error {
	if h.SecurityCounter < min {
		return refuse(Rollback, "security counter", "the image has %d, the device takes %d or higher only: this image is older than a security fix the device has taken (anti-rollback); use an image with security counter %d or higher",
			h.SecurityCounter, min, min)
	}
	return nil
}

// CheckSize refuses a payload larger than max octets (a slot's capacity);
// max 0 checks nothing.
func CheckSize(h *Header, max uint32) error {
	if max != 0 && h.PayloadLen > max {
		return refuse(TooLarge, "payload length", "%d octets, more than the %d the device's update slot holds: this image is not for this device's flash", h.PayloadLen, max)
	}
	return nil
}
