package vfio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/u-root/u-root/pkg/pci"
)

// PCIDevice is what the driver needs to know about one PCI function: its
// identity, the driver the kernel has bound to it and its IOMMU group.
type PCIDevice struct {
	// BDF is the address, domain included: 0000:00:04.0.
	BDF            string
	Vendor, Device uint16
	// Class is the 24-bit class code (base class, subclass, interface).
	Class uint32
	// Driver is the name of the bound kernel driver, "" when none is.
	Driver string
	// DriverOverride is the driver_override attribute, "" when unset.
	DriverOverride string
	// IOMMUGroup is the group's number, or -1 when the device has none
	// (no IOMMU, or it is disabled).
	IOMMUGroup int
}

func (d PCIDevice) String() string {
	drv := d.Driver
	if drv == "" {
		drv = "no driver"
	}
	return fmt.Sprintf("%s [%04x:%04x] (%s)", d.BDF, d.Vendor, d.Device, drv)
}

// Bus is the PCI bus as the driver reads it: the devices, and the members
// of an IOMMU group. Sysfs implements it over /sys (or over a fake tree of
// the same shape, in tests).
type Bus interface {
	// Devices returns every PCI function, in BDF order.
	Devices() ([]PCIDevice, error)
	// Device returns one function; a *NoDeviceError when there is none.
	Device(bdf string) (PCIDevice, error)
	// GroupMembers returns the BDFs of the functions in IOMMU group n.
	GroupMembers(n int) ([]string, error)
}

// Sysfs reads the PCI bus from a sysfs tree: Root is "/sys" on a running
// system (the zero value means that too). The device attributes (vendor,
// device, class, irq, resource) are parsed by u-root's pkg/pci (OnePCI,
// which reads any directory of that shape); the driver and IOMMU group
// links, driver_override and the group's member list are read here.
type Sysfs struct {
	Root string
}

func (s Sysfs) root() string {
	if s.Root == "" {
		return "/sys"
	}
	return s.Root
}

func (s Sysfs) devicesDir() string { return filepath.Join(s.root(), "bus", "pci", "devices") }

var bdfRE = regexp.MustCompile(`^([0-9a-f]{4}:)?[0-9a-f]{2}:[0-1][0-9a-f]\.[0-7]$`)

// ParseBDF checks a PCI address and returns it with its domain
// ("00:04.0" becomes "0000:00:04.0"), in lower case.
func ParseBDF(s string) (string, error) {
	b := strings.ToLower(strings.TrimSpace(s))
	if !bdfRE.MatchString(b) {
		return "", fmt.Errorf("vfio: %q is not a PCI address: give domain:bus:device.function as lspci -D prints it, e.g. 0000:01:00.0", s)
	}
	if len(b) == len("00:04.0") {
		b = "0000:" + b
	}
	return b, nil
}

// Devices returns every PCI function under bus/pci/devices.
func (s Sysfs) Devices() ([]PCIDevice, error) {
	ents, err := os.ReadDir(s.devicesDir())
	if err != nil {
		return nil, fmt.Errorf("vfio: listing PCI devices: %w (is sysfs mounted at %s?)", err, s.root())
	}
	var out []PCIDevice
	for _, e := range ents {
		d, err := s.Device(e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b PCIDevice) int { return strings.Compare(a.BDF, b.BDF) })
	return out, nil
}

// Device reads one function.
func (s Sysfs) Device(bdf string) (PCIDevice, error) {
	b, err := ParseBDF(bdf)
	if err != nil {
		return PCIDevice{}, err
	}
	dir := filepath.Join(s.devicesDir(), b)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return PCIDevice{}, &NoDeviceError{BDF: b}
	}
	p, err := pci.OnePCI(dir)
	if err != nil {
		return PCIDevice{}, fmt.Errorf("vfio: reading %s: %w", dir, err)
	}
	d := PCIDevice{BDF: b, Vendor: p.Vendor, Device: p.Device, Class: p.Class, IOMMUGroup: -1}
	if d.Driver, err = linkBase(filepath.Join(dir, "driver")); err != nil {
		return PCIDevice{}, err
	}
	if d.DriverOverride, err = readAttr(filepath.Join(dir, "driver_override")); err != nil {
		return PCIDevice{}, err
	}
	if d.DriverOverride == "(null)" { // what the kernel prints when unset
		d.DriverOverride = ""
	}
	group, err := linkBase(filepath.Join(dir, "iommu_group"))
	if err != nil {
		return PCIDevice{}, err
	}
	if group != "" {
		if d.IOMMUGroup, err = strconv.Atoi(group); err != nil {
			return PCIDevice{}, fmt.Errorf("vfio: %s/iommu_group links to %q, not a group number", dir, group)
		}
	}
	return d, nil
}

// GroupMembers lists kernel/iommu_groups/N/devices.
func (s Sysfs) GroupMembers(n int) ([]string, error) {
	dir := filepath.Join(s.root(), "kernel", "iommu_groups", strconv.Itoa(n), "devices")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("vfio: listing IOMMU group %d: %w", n, err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out, nil
}

// Find returns the functions with the given vendor and device IDs.
func Find(b Bus, vendor, device uint16) ([]PCIDevice, error) {
	all, err := b.Devices()
	if err != nil {
		return nil, err
	}
	var out []PCIDevice
	for _, d := range all {
		if d.Vendor == vendor && d.Device == device {
			out = append(out, d)
		}
	}
	return out, nil
}

// linkBase returns the last element of a symlink's target, "" when the link
// does not exist.
func linkBase(path string) (string, error) {
	t, err := os.Readlink(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("vfio: %w", err)
	}
	return filepath.Base(t), nil
}

// readAttr reads a one-line sysfs attribute, "" when it does not exist.
func readAttr(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("vfio: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// dmaNeutralDrivers are the drivers that leave a group's DMA to its user
// (driver_managed_dma in Linux 6.1: vfio-pci itself, pci-stub, and
// pcieport on bridges). A member bound to any other driver holds the
// group's DMA for the host and makes the group unusable for VFIO.
var dmaNeutralDrivers = map[string]bool{"": true, "vfio-pci": true, "pci-stub": true, "pcieport": true}

// groupHolders returns the members of group n other than bdf that are bound
// to a host driver (not in dmaNeutralDrivers).
func groupHolders(b Bus, n int, bdf string) ([]PCIDevice, error) {
	members, err := b.GroupMembers(n)
	if err != nil {
		return nil, err
	}
	var out []PCIDevice
	for _, m := range members {
		if m == bdf {
			continue
		}
		d, err := b.Device(m)
		if err != nil {
			return nil, err
		}
		if !dmaNeutralDrivers[d.Driver] {
			out = append(out, d)
		}
	}
	return out, nil
}
