package vfio

import (
	"errors"
	"fmt"
	"strings"
)

// NoDeviceError: there is no PCI function at the address.
type NoDeviceError struct{ BDF string }

func (e *NoDeviceError) Error() string {
	return fmt.Sprintf("vfio: no PCI device %s: list them with lspci -Dnn (or rnic's vfio.Find by vendor:device)", e.BDF)
}

// NotBoundError: the device is not bound to vfio-pci, so /dev/vfio has no
// group for it (or the group's fd would not give the device).
type NotBoundError struct {
	BDF    string
	Driver string // the driver it is bound to, "" for none
}

func (e *NotBoundError) Error() string {
	now := "is bound to no driver"
	unbind := ""
	if e.Driver != "" {
		now = "is bound to " + e.Driver
		unbind = fmt.Sprintf("echo %s > /sys/bus/pci/devices/%s/driver/unbind; ", e.BDF, e.BDF)
	}
	return fmt.Sprintf("vfio: %s %s, not vfio-pci: bind it: modprobe vfio-pci; "+
		"echo vfio-pci > /sys/bus/pci/devices/%s/driver_override; %s"+
		"echo %s > /sys/bus/pci/drivers_probe (docs/vfio.md)", e.BDF, now, e.BDF, unbind, e.BDF)
}

// NoIOMMUGroupError: the device has no IOMMU group, so the kernel runs
// without an IOMMU (or with it off) and VFIO cannot isolate the device.
type NoIOMMUGroupError struct{ BDF string }

func (e *NoIOMMUGroupError) Error() string {
	return fmt.Sprintf("vfio: %s has no IOMMU group: turn the IOMMU on (VT-d or AMD-Vi in the firmware setup, "+
		"and intel_iommu=on or amd_iommu=on on the kernel command line), then check /sys/kernel/iommu_groups", e.BDF)
}

// GroupNotViableError: the kernel says the device's IOMMU group is not
// viable (VFIO_GROUP_GET_STATUS without VFIO_GROUP_FLAGS_VIABLE): another
// device in the group is bound to a host driver that uses DMA.
type GroupNotViableError struct {
	BDF   string
	Group int
	// Holders are the other members bound to host drivers, as sysfs shows
	// them (empty if sysfs names none).
	Holders []PCIDevice
}

func (e *GroupNotViableError) Error() string {
	if len(e.Holders) == 0 {
		return fmt.Sprintf("vfio: IOMMU group %d of %s is not viable, and sysfs names no member bound to a host driver: "+
			"see /sys/kernel/iommu_groups/%d/devices and bind every member to vfio-pci (or unbind it)", e.Group, e.BDF, e.Group)
	}
	var names, cmds []string
	for _, h := range e.Holders {
		names = append(names, h.String())
		cmds = append(cmds, fmt.Sprintf("echo %s > /sys/bus/pci/devices/%s/driver/unbind", h.BDF, h.BDF))
	}
	return fmt.Sprintf("vfio: IOMMU group %d of %s is not viable: %s shares it and is bound to a host driver; "+
		"unbind it or bind it to vfio-pci too (%s), or move the board to a slot with a group of its own",
		e.Group, e.BDF, strings.Join(names, ", "), strings.Join(cmds, "; "))
}

// OutsideMappingError: an address range the driver was asked to give the
// device is not inside one live IOMMU mapping of this device.
type OutsideMappingError struct {
	Addr, Len uint64
}

func (e *OutsideMappingError) Error() string {
	return fmt.Sprintf("vfio: refusing to give the device [%#x, %#x): not inside a DMA buffer mapped for it (allocate with Alloc, and do not use a buffer after Unmap or Free)",
		e.Addr, e.Addr+e.Len)
}

// ErrIOVAExhausted: no free IOVA range of the size asked for is left
// within the device's DMA mask and the IOMMU's usable ranges.
var ErrIOVAExhausted = errors.New("vfio: no IOVA space left within the device's DMA mask: free buffers, or allocate fewer or smaller ones")

// ErrClosed: the device has been closed.
var ErrClosed = errors.New("vfio: the device is closed")
