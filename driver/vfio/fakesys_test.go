package vfio

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeDev is one function of a fake sysfs tree.
type fakeDev struct {
	bdf            string
	vendor, device uint16
	driver         string // "" for none
	override       string // "" writes "(null)", as the kernel shows it
	group          int    // -1 for none
}

// fakeSysfs builds, under a temporary directory, the parts of /sys the
// driver reads, in the kernel's shape: bus/pci/devices/BDF links to
// devices/pci0000:00/BDF, whose driver and iommu_group are links to
// bus/pci/drivers/NAME and kernel/iommu_groups/N, and each group's
// devices/ lists its members. u-root's pkg/pci reads vendor, device,
// class, irq and resource from the device directory.
func fakeSysfs(t *testing.T, devs ...fakeDev) string {
	t.Helper()
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, v string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("bus/pci/devices")
	mk("bus/pci/drivers")
	mk("kernel/iommu_groups")
	write("bus/pci/drivers_probe", "")
	for _, d := range devs {
		dir := "devices/pci0000:00/" + d.bdf
		mk(dir)
		write(dir+"/vendor", "0x"+strconv.FormatUint(uint64(d.vendor), 16)+"\n")
		write(dir+"/device", "0x"+strconv.FormatUint(uint64(d.device), 16)+"\n")
		write(dir+"/class", "0x00ff00\n")
		write(dir+"/irq", "11\n")
		write(dir+"/resource", "0x00000000fea00000 0x00000000feafffff 0x0000000000040200\n"+
			"0x0000000000000000 0x0000000000000000 0x0000000000000000\n")
		ov := d.override
		if ov == "" {
			ov = "(null)"
		}
		write(dir+"/driver_override", ov+"\n")
		link("../../../"+dir, "bus/pci/devices/"+d.bdf)
		if d.driver != "" {
			mk("bus/pci/drivers/" + d.driver)
			write("bus/pci/drivers/"+d.driver+"/unbind", "")
			link("../../../bus/pci/drivers/"+d.driver, dir+"/driver")
		}
		if d.group >= 0 {
			g := "kernel/iommu_groups/" + strconv.Itoa(d.group)
			mk(g + "/devices")
			link("../../../"+g, dir+"/iommu_group")
			link("../../../../"+dir, g+"/devices/"+d.bdf)
		}
	}
	return root
}
