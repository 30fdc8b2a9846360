package vfio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseBDF(t *testing.T) {
	for in, want := range map[string]string{
		"0000:00:04.0": "0000:00:04.0", "00:04.0": "0000:00:04.0",
		"0001:3B:1f.7": "0001:3b:1f.7", " 01:00.0\n": "0000:01:00.0",
	} {
		got, err := ParseBDF(in)
		if err != nil || got != want {
			t.Errorf("ParseBDF(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0000:00:04", "00:20.0", "00:04.8", "1234:11e8", "0000:00:04.0/../x", "../00:04.0"} {
		if got, err := ParseBDF(bad); err == nil || !strings.Contains(err.Error(), "lspci -D") {
			t.Errorf("ParseBDF(%q) = %q, %v; want an error saying what an address looks like", bad, got, err)
		}
	}
}

func TestSysfsDiscovery(t *testing.T) {
	root := fakeSysfs(t,
		fakeDev{bdf: "0000:00:04.0", vendor: 0x1234, device: 0x11e8, group: 2},
		fakeDev{bdf: "0000:00:01.0", vendor: 0x1af4, device: 0x1000, driver: "virtio-pci", group: 1},
		fakeDev{bdf: "0000:01:01.0", vendor: 0x1234, device: 0x11e8, driver: "vfio-pci", override: "vfio-pci", group: 3},
		fakeDev{bdf: "0000:01:02.0", vendor: 0x1234, device: 0x11e8, driver: "uio_pci_generic", group: 3},
		fakeDev{bdf: "0000:02:00.0", vendor: 0x10ee, device: 0x9038, group: -1},
	)
	s := Sysfs{Root: root}
	all, err := s.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var bdfs []string
	for _, d := range all {
		bdfs = append(bdfs, d.BDF)
	}
	if want := []string{"0000:00:01.0", "0000:00:04.0", "0000:01:01.0", "0000:01:02.0", "0000:02:00.0"}; !reflect.DeepEqual(bdfs, want) {
		t.Errorf("Devices: %v, want %v", bdfs, want)
	}
	edu, err := Find(s, 0x1234, 0x11e8)
	if err != nil {
		t.Fatal(err)
	}
	want := []PCIDevice{
		{BDF: "0000:00:04.0", Vendor: 0x1234, Device: 0x11e8, Class: 0xff00, IOMMUGroup: 2},
		{BDF: "0000:01:01.0", Vendor: 0x1234, Device: 0x11e8, Class: 0xff00, Driver: "vfio-pci", DriverOverride: "vfio-pci", IOMMUGroup: 3},
		{BDF: "0000:01:02.0", Vendor: 0x1234, Device: 0x11e8, Class: 0xff00, Driver: "uio_pci_generic", IOMMUGroup: 3},
	}
	if !reflect.DeepEqual(edu, want) {
		t.Errorf("Find(1234:11e8):\n got %+v\nwant %+v", edu, want)
	}
	if d, err := s.Device("02:00.0"); err != nil || d.IOMMUGroup != -1 || d.Vendor != 0x10ee {
		t.Errorf("Device(02:00.0) = %+v, %v; want vendor 10ee and no group", d, err)
	}
	members, err := s.GroupMembers(3)
	if err != nil || !reflect.DeepEqual(members, []string{"0000:01:01.0", "0000:01:02.0"}) {
		t.Errorf("GroupMembers(3) = %v, %v", members, err)
	}
	var nd *NoDeviceError
	if _, err := s.Device("0000:09:00.0"); !errors.As(err, &nd) || nd.BDF != "0000:09:00.0" {
		t.Errorf("Device of a missing function: %v, want a NoDeviceError", err)
	}
	if _, err := (Sysfs{Root: t.TempDir()}).Devices(); err == nil || !strings.Contains(err.Error(), "sysfs mounted") {
		t.Errorf("Devices on an empty tree: %v", err)
	}
}

// The refusals Open makes from sysfs alone, before it touches /dev/vfio.
func TestOpenRefusals(t *testing.T) {
	root := fakeSysfs(t,
		fakeDev{bdf: "0000:00:04.0", vendor: 0x1234, device: 0x11e8, group: 2},
		fakeDev{bdf: "0000:00:05.0", vendor: 0x1234, device: 0x11e8, driver: "uio_pci_generic", group: 3},
		fakeDev{bdf: "0000:02:00.0", vendor: 0x10ee, device: 0x9038, driver: "vfio-pci", group: -1},
		fakeDev{bdf: "0000:03:00.0", vendor: 0x10ee, device: 0x9038, driver: "vfio-pci", group: 7},
	)
	ctx := context.Background()
	open := func(bdf string) error {
		d, err := Open(ctx, Config{BDF: bdf, Bus: Sysfs{Root: root}, DevDir: filepath.Join(root, "dev-vfio")})
		if d != nil {
			d.Close()
			t.Errorf("Open(%s) succeeded on a fake tree", bdf)
		}
		return err
	}
	var nb *NotBoundError
	err := open("00:04.0")
	if !errors.As(err, &nb) || nb.Driver != "" ||
		!strings.Contains(err.Error(), "echo vfio-pci > /sys/bus/pci/devices/0000:00:04.0/driver_override") ||
		!strings.Contains(err.Error(), "echo 0000:00:04.0 > /sys/bus/pci/drivers_probe") ||
		strings.Contains(err.Error(), "unbind") {
		t.Errorf("unbound device: %v", err)
	}
	err = open("0000:00:05.0")
	if !errors.As(err, &nb) || nb.Driver != "uio_pci_generic" ||
		!strings.Contains(err.Error(), "is bound to uio_pci_generic") ||
		!strings.Contains(err.Error(), "echo 0000:00:05.0 > /sys/bus/pci/devices/0000:00:05.0/driver/unbind") {
		t.Errorf("device on a host driver: %v", err)
	}
	var ng *NoIOMMUGroupError
	if err := open("0000:02:00.0"); !errors.As(err, &ng) || !strings.Contains(err.Error(), "intel_iommu=on") {
		t.Errorf("device without a group: %v", err)
	}
	var nd *NoDeviceError
	if err := open("0000:0a:00.0"); !errors.As(err, &nd) {
		t.Errorf("missing device: %v", err)
	}
	if err := open("1234:11e8"); err == nil || !strings.Contains(err.Error(), "not a PCI address") {
		t.Errorf("vendor:device given as an address: %v", err)
	}
	// Bound and grouped, but no VFIO on this "system": the container's
	// open fails with what to load.
	if err := open("0000:03:00.0"); err == nil || !strings.Contains(err.Error(), "modprobe vfio-pci") {
		t.Errorf("no /dev/vfio: %v", err)
	}
	if _, err := Open(ctx, Config{BDF: "0000:03:00.0", Bus: Sysfs{Root: root}, DMAMask: 1<<28 - 2}); err == nil ||
		!strings.Contains(err.Error(), "DMA mask 0xffffffe") {
		t.Errorf("a DMA mask that is not a run of low ones: %v", err)
	}
}

// A group the kernel finds not viable is explained by the member bound to
// a host driver; members without a driver or on vfio-pci, pci-stub or
// pcieport are not named.
func TestGroupHolders(t *testing.T) {
	root := fakeSysfs(t,
		fakeDev{bdf: "0000:00:1c.0", vendor: 0x8086, device: 0xa110, driver: "pcieport", group: 9},
		fakeDev{bdf: "0000:01:00.0", vendor: 0x10ee, device: 0x9038, driver: "vfio-pci", group: 9},
		fakeDev{bdf: "0000:01:00.1", vendor: 0x10ee, device: 0x9039, group: 9},
		fakeDev{bdf: "0000:01:00.2", vendor: 0x10ee, device: 0x903a, driver: "pci-stub", group: 9},
		fakeDev{bdf: "0000:01:00.3", vendor: 0x8086, device: 0x10d3, driver: "e1000e", group: 9},
	)
	holders, err := groupHolders(Sysfs{Root: root}, 9, "0000:01:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(holders) != 1 || holders[0].BDF != "0000:01:00.3" || holders[0].Driver != "e1000e" {
		t.Fatalf("holders %+v, want 0000:01:00.3 on e1000e only", holders)
	}
	e := &GroupNotViableError{BDF: "0000:01:00.0", Group: 9, Holders: holders}
	for _, want := range []string{"group 9", "0000:01:00.3 [8086:10d3] (e1000e)", "echo 0000:01:00.3 > /sys/bus/pci/devices/0000:01:00.3/driver/unbind"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
	if e := (&GroupNotViableError{BDF: "0000:01:00.0", Group: 9}); !strings.Contains(e.Error(), "/sys/kernel/iommu_groups/9/devices") {
		t.Errorf("without holders: %q", e.Error())
	}
}

// Bind and Restore against a fake tree, with a stand-in for the kernel's
// side: it binds a function written to drivers_probe to the driver its
// driver_override names, and unbinds one written to a driver's unbind.
func TestBindRestore(t *testing.T) {
	root := fakeSysfs(t,
		fakeDev{bdf: "0000:00:04.0", vendor: 0x1234, device: 0x11e8, driver: "uio_pci_generic", group: 2},
		fakeDev{bdf: "0000:00:05.0", vendor: 0x1234, device: 0x11e8, driver: "vfio-pci", group: 3},
	)
	s := Sysfs{Root: root}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// vfio-pci not loaded (no drivers/vfio-pci): refused with what to do.
	if err := os.RemoveAll(filepath.Join(root, "bus/pci/drivers/vfio-pci")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Bind(ctx, "0000:00:04.0"); err == nil || !strings.Contains(err.Error(), "modprobe vfio-pci") {
		t.Fatalf("Bind without vfio-pci: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bus/pci/drivers/vfio-pci"), 0o755); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	done := make(chan struct{})
	go fakeKernel(t, root, stop, done)
	defer func() { close(stop); <-done }()

	b, err := s.Bind(ctx, "0000:00:04.0")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := s.Device("0000:00:04.0")
	if d.Driver != "vfio-pci" || b.Previous != "uio_pci_generic" || b.PreviousOverride != "" {
		t.Fatalf("after Bind: driver %q, binding %+v", d.Driver, b)
	}
	if err := b.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ = s.Device("0000:00:04.0")
	if d.Driver != "uio_pci_generic" || d.DriverOverride != "" {
		t.Fatalf("after Restore: driver %q, override %q; want uio_pci_generic and none", d.Driver, d.DriverOverride)
	}
	// Bound already: nothing to do, nothing to restore.
	b, err = s.Bind(ctx, "0000:00:05.0")
	if err != nil || b.Previous != "vfio-pci" {
		t.Fatalf("Bind of a vfio-pci device: %+v, %v", b, err)
	}
}

// fakeKernel plays the kernel's part of driver_override, unbind and
// drivers_probe on a fake tree until stop is closed.
func fakeKernel(t *testing.T, root string, stop, done chan struct{}) {
	defer close(done)
	probe := filepath.Join(root, "bus/pci/drivers_probe")
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Millisecond):
		}
		drivers, _ := filepath.Glob(filepath.Join(root, "bus/pci/drivers/*/unbind"))
		for _, u := range drivers {
			if b, _ := os.ReadFile(u); len(b) > 0 {
				os.Remove(filepath.Join(root, "bus/pci/devices", string(b), "driver"))
				os.WriteFile(u, nil, 0o644)
			}
		}
		b, _ := os.ReadFile(probe)
		if len(b) == 0 {
			continue
		}
		os.WriteFile(probe, nil, 0o644)
		dev := filepath.Join(root, "bus/pci/devices", string(b))
		ov, _ := os.ReadFile(filepath.Join(dev, "driver_override"))
		drv := strings.TrimSpace(string(ov))
		if drv == "" || drv == "none" {
			continue
		}
		target, _ := filepath.EvalSymlinks(dev)
		if err := os.Symlink(filepath.Join(root, "bus/pci/drivers", drv), filepath.Join(target, "driver")); err != nil {
			t.Errorf("fake kernel: %v", err)
		}
	}
}
