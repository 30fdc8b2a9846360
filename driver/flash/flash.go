// Package flash is the driver's side of the device's configuration flash
// (docs/firmware-update.md): the SPI NOR controller's commands through the
// flash block of the register map (read, page program, sector erase, the
// part's status and ID), the boot logic's report (which slot booted, its
// version and security counter, and why), a warm reboot, and the flash
// layout the boot logic reads: three slots (golden, A, B), each a header
// sector (the signed image header, the commit marker, the trial state)
// followed by the payload.
package flash

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/regs"
)

// MMIO is the device's BAR as this package uses it.
type MMIO interface {
	Read32(off uint32) (uint32, error)
	Write32(off uint32, v uint32) error
}

// The controller's commands (CMD's opcode; hw/rtl/flash_defs.vh).
const (
	opRead    = 1
	opProgram = 2
	opErase   = 3
	opStatus  = 4
	opID      = 5
	cmdQuad   = 1 << 8
)

// bootKey is BOOT_CTRL's key: "BOOT".
const bootKey = 0x424F4F54

// Code is a command's result (STATUS.CODE).
type Code uint8

// The codes (hw/regs/rnic.rdl, the flash block's STATUS).
const (
	CodeOK        Code = 0
	CodeBadOp     Code = 1
	CodeBadArg    Code = 2
	CodeProtected Code = 3
	CodeTimeout   Code = 4
)

func (c Code) String() string {
	switch c {
	case CodeOK:
		return "OK"
	case CodeBadOp:
		return "BAD_OP"
	case CodeBadArg:
		return "BAD_ARG"
	case CodeProtected:
		return "PROTECTED"
	case CodeTimeout:
		return "TIMEOUT"
	}
	return fmt.Sprintf("code %d", uint8(c))
}

// ErrProtected is what a CommandError whose code is PROTECTED matches
// (errors.Is): the device refused to erase or program its golden slot.
var ErrProtected = errors.New("flash: the golden slot is protected")

// CommandError is a command the device refused or could not finish.
type CommandError struct {
	Op   string
	Addr uint32
	Len  int
	Code Code
}

func (e *CommandError) Error() string {
	what := map[Code]string{
		CodeBadOp:     "the device does not know the command",
		CodeBadArg:    "the device refused its address or length (a program must stay within a 256-octet page, an erase start on a 4 KiB sector)",
		CodeProtected: "the address is in the golden slot, which the device never erases or programs from the host",
		CodeTimeout:   "the flash stayed busy past the controller's limit: the part may be failing; read its status and retry",
	}[e.Code]
	return fmt.Sprintf("flash: %s of %d octets at %#06x: %s: %s", e.Op, e.Len, e.Addr, e.Code, what)
}

// Is makes a PROTECTED refusal match ErrProtected.
func (e *CommandError) Is(target error) bool {
	return target == ErrProtected && e.Code == CodeProtected
}

// ErrNoFlash is returned by Open for a device whose map has no flash block.
var ErrNoFlash = errors.New("flash: the device has no flash block (a register map without it, or the driver's model)")

// Geometry is the part the device drives.
type Geometry struct {
	Size, Sector, Page uint32
	Quad               bool
	Protect            uint32 // addresses below are the golden slot's: never erased or programmed
}

// Controller is the flash block of one device.
type Controller struct {
	m    MMIO
	base uint32
	geo  Geometry
	// Quad uses the quad forms of READ and PROGRAM when the part has them.
	Quad bool
}

// Open finds the flash block on the walked map and reads its geometry.
func Open(m MMIO, dev *regmap.Device) (*Controller, error) {
	b, ok := dev.Block(regs.FlashType)
	if !ok {
		return nil, ErrNoFlash
	}
	c := &Controller{m: m, base: b.Base}
	g, err := c.read(regs.FlashGeometry)
	if err != nil {
		return nil, err
	}
	p, err := c.read(regs.FlashProtect)
	if err != nil {
		return nil, err
	}
	c.geo = Geometry{Size: 1 << (g & regs.FlashGeometrySizeLog2Mask), Sector: 1 << ((g & regs.FlashGeometrySectorLog2Mask) >> regs.FlashGeometrySectorLog2Shift),
		Page: 1 << ((g & regs.FlashGeometryPageLog2Mask) >> regs.FlashGeometryPageLog2Shift), Quad: g&regs.FlashGeometryQuadMask != 0, Protect: p}
	if c.geo.Size != Size || c.geo.Sector != SectorSize || c.geo.Page != PageSize {
		return nil, fmt.Errorf("flash: the device's part is %d octets in %d-octet sectors and %d-octet pages; this driver's layout needs %d, %d, %d: use a driver built for the device's layout",
			c.geo.Size, c.geo.Sector, c.geo.Page, Size, SectorSize, PageSize)
	}
	c.Quad = c.geo.Quad
	return c, nil
}

// Geometry is the part the device drives.
func (c *Controller) Geometry() Geometry { return c.geo }

func (c *Controller) reg(off uint32) uint32 { return off - regs.FlashBase + c.base }

func (c *Controller) read(off uint32) (uint32, error) {
	v, err := c.m.Read32(c.reg(off))
	if err != nil {
		return 0, fmt.Errorf("flash: %w", err)
	}
	return v, nil
}

func (c *Controller) write(off, v uint32) error {
	if err := c.m.Write32(c.reg(off), v); err != nil {
		return fmt.Errorf("flash: %w", err)
	}
	return nil
}

// wait polls STATUS until BUSY is clear and returns it.
func (c *Controller) wait(ctx context.Context) (uint32, error) {
	for {
		st, err := c.read(regs.FlashStatus)
		if err != nil {
			return 0, err
		}
		if st&regs.FlashStatusBusyMask == 0 {
			return st, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("flash: waiting for the device: %w", context.Cause(ctx))
		}
	}
}

// run runs one command and waits for its result.
func (c *Controller) run(ctx context.Context, name string, cmd, addr uint32, n int) error {
	if _, err := c.wait(ctx); err != nil {
		return err
	}
	if err := c.write(regs.FlashAddr, addr); err != nil {
		return err
	}
	if err := c.write(regs.FlashLen, uint32(n)); err != nil {
		return err
	}
	if err := c.write(regs.FlashCmd, cmd); err != nil {
		return err
	}
	st, err := c.wait(ctx)
	if err != nil {
		return err
	}
	if code := Code((st & regs.FlashStatusCodeMask) >> regs.FlashStatusCodeShift); code != CodeOK {
		return &CommandError{Op: name, Addr: addr, Len: n, Code: code}
	}
	return nil
}

func (c *Controller) quad() uint32 {
	if c.Quad && c.geo.Quad {
		return cmdQuad
	}
	return 0
}

// readBuf reads n octets of the data buffer.
func (c *Controller) readBuf(n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for i := 0; i < n; i += 4 {
		w, err := c.read(regs.FlashData + uint32(i))
		if err != nil {
			return nil, err
		}
		for k := 0; k < 4 && i+k < n; k++ {
			out = append(out, byte(w>>(8*k)))
		}
	}
	return out, nil
}

// Read reads n octets from addr, a command of up to 256 octets at a time.
func (c *Controller) Read(ctx context.Context, addr uint32, n int) ([]byte, error) {
	if uint64(addr)+uint64(n) > uint64(c.geo.Size) {
		return nil, fmt.Errorf("flash: a read of %d octets at %#x runs past the %d-octet part", n, addr, c.geo.Size)
	}
	out := make([]byte, 0, n)
	for done := 0; done < n; {
		k := min(n-done, PageSize)
		a := addr + uint32(done)
		if err := c.run(ctx, "read", opRead|c.quad(), a, k); err != nil {
			return nil, err
		}
		b, err := c.readBuf(k)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		done += k
	}
	return out, nil
}

// Program programs data at addr (bits go from 1 to 0 only: the range must
// be erased, or hold bits data only clears), a page program per page it
// touches.
func (c *Controller) Program(ctx context.Context, addr uint32, data []byte) error {
	for done := 0; done < len(data); {
		a := addr + uint32(done)
		k := min(len(data)-done, int(PageSize-a%PageSize))
		chunk := data[done : done+k]
		for i := 0; i < k; i += 4 {
			var w uint32
			for j := 0; j < 4 && i+j < k; j++ {
				w |= uint32(chunk[i+j]) << (8 * j)
			}
			// Octets past the chunk in the last word are never sent: LEN says how many go.
			if err := c.write(regs.FlashData+uint32(i), w); err != nil {
				return err
			}
		}
		if err := c.run(ctx, "program", opProgram|c.quad(), a, k); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// Erase erases the 4 KiB sector at addr (sector-aligned).
func (c *Controller) Erase(ctx context.Context, addr uint32) error {
	return c.run(ctx, "erase", opErase, addr, 0)
}

// PartStatus reads the part's status register 1 (WIP bit 0, WEL bit 1).
func (c *Controller) PartStatus(ctx context.Context) (byte, error) {
	if err := c.run(ctx, "status", opStatus, 0, 1); err != nil {
		return 0, err
	}
	b, err := c.readBuf(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// JEDECID reads the part's manufacturer and device ID.
func (c *Controller) JEDECID(ctx context.Context) ([3]byte, error) {
	var id [3]byte
	if err := c.run(ctx, "id", opID, 0, 3); err != nil {
		return id, err
	}
	b, err := c.readBuf(3)
	if err != nil {
		return id, err
	}
	copy(id[:], b)
	return id, nil
}
