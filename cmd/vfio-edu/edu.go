package main

import (
	"context"
	"fmt"
	"time"

	"github.com/openrnic/rnic/driver/vfio"
)

// QEMU's edu device (QEMU's docs/specs/edu.rst, hw/misc/edu.c): BAR0 is
// 1 MiB of registers; the DMA engine copies between host memory and a
// 4 KiB buffer inside the device at 0x40000.
const (
	eduVendor = 0x1234
	eduDevice = 0x11e8
	// eduDMAMask: edu drives 28 address bits (its dma_mask property's
	// default); it clamps anything above.
	eduDMAMask = 1<<28 - 1

	eduID        = 0x00 // RO: 0xRRrr00ed, major RR and minor rr version
	eduLiveness  = 0x04 // RW: reads the bitwise inverse of what was written
	eduFactorial = 0x08 // RW: write n, read n! once status bit 0x01 clears
	eduStatus    = 0x20 // RW: 0x01 computing (RO), 0x80 interrupt when done
	eduIRQStatus = 0x24 // RO: the OR of the values that raised interrupts
	eduIRQRaise  = 0x60 // WO: raise an interrupt with this value
	eduIRQAck    = 0x64 // WO: clear these bits of the interrupt status
	eduDMASrc    = 0x80 // RW: DMA source address
	eduDMADst    = 0x88 // RW: DMA destination address
	eduDMACount  = 0x90 // RW: DMA length in octets
	eduDMACmd    = 0x98 // RW: 0x01 start (reads 1 until done), 0x02 edu to RAM, 0x04 interrupt when done

	eduStatusComputing = 0x01
	eduStatusIRQ       = 0x80
	eduIRQFactorial    = 0x001 // the interrupt status a factorial raises
	eduIRQDMA          = 0x100 // the interrupt status a DMA raises
	eduDMARun          = 0x01
	eduDMAToRAM        = 0x02
	eduDMAIRQ          = 0x04

	eduBuffer     = 0x40000 // the device's DMA buffer, in its own address space
	eduBufferSize = 4096
	// eduChunk is the size of one transfer: half the buffer (a whole one
	// trips QEMU 7.2's range check, see dma).
	eduChunk = eduBufferSize / 2
)

// edu drives one edu device through the vfio backend.
type edu struct {
	d *vfio.Device
}

func (e edu) read(off uint32) uint32 {
	v, err := e.d.Read32(off)
	if err != nil {
		panic(err) // a mapped BAR does not fail; an offset bug does
	}
	return v
}

func (e edu) write(off, v uint32) {
	if err := e.d.Write32(off, v); err != nil {
		panic(err)
	}
}

// poll waits until done returns true, reading the device, or ctx ends.
func poll(ctx context.Context, what string, done func() bool) error {
	for !done() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// factorial computes n! on the device, polling the status register.
func (e edu) factorial(ctx context.Context, n uint32) (uint32, error) {
	e.write(eduStatus, 0)
	e.write(eduFactorial, n)
	err := poll(ctx, "the factorial", func() bool { return e.read(eduStatus)&eduStatusComputing == 0 })
	return e.read(eduFactorial), err
}

// dma runs one transfer between host address host and the device's
// buffer (at device offset dev), toRAM choosing the direction, and waits
// for its interrupt. checked: the host range goes through the driver's
// Mapped check first (the driver's path); unchecked writes the address as
// given (to show what the IOMMU does with a stray one).
func (e edu) dma(ctx context.Context, host uint64, dev, n uint32, toRAM, checked bool) error {
	if checked {
		if err := e.d.Mapped(host, uint64(n)); err != nil {
			return err
		}
	}
	// QEMU 7.2's range check (edu_check_range) wants the transfer's end
	// strictly below the buffer's, and aborts QEMU ("hardware error")
	// otherwise: the buffer's last octet is out of reach.
	if n == 0 || n >= eduBufferSize || dev < eduBuffer || dev+n >= eduBuffer+eduBufferSize {
		return fmt.Errorf("edu: [%#x, %#x) is outside its buffer (less its last octet)", dev, dev+n)
	}
	if host > eduDMAMask || host+uint64(n)-1 > eduDMAMask {
		return fmt.Errorf("edu: host address %#x is beyond its 28-bit DMA mask", host)
	}
	cmd := uint32(eduDMARun | eduDMAIRQ)
	src, dst := uint32(host), dev
	if toRAM {
		cmd |= eduDMAToRAM
		src, dst = dev, uint32(host)
	}
	e.write(eduDMASrc, src)
	e.write(eduDMADst, dst)
	e.write(eduDMACount, n)
	e.write(eduDMACmd, cmd)
	if err := e.d.Wait(ctx, 0); err != nil {
		return err
	}
	if st := e.read(eduIRQStatus); st&eduIRQDMA == 0 {
		return fmt.Errorf("edu: interrupt after DMA with status %#x, want bit %#x", st, eduIRQDMA)
	}
	e.write(eduIRQAck, eduIRQDMA)
	return poll(ctx, "the DMA to finish", func() bool { return e.read(eduDMACmd)&eduDMARun == 0 })
}
