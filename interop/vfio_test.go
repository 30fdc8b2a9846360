package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openrnic/rnic/internal/qemuguest"
)

// The guest's PCI layout for TestVFIOEdu: QEMU's edu device (1234:11e8)
// alone on the root bus (an IOMMU group of its own), and two more behind a
// conventional PCI bridge, which Linux puts in one group with the bridge
// (they cannot be told apart by the IOMMU: a conventional bridge takes
// over its devices' requester IDs). The emulated VT-d (intel-iommu) comes
// first, as QEMU wants.
const (
	eduAlone  = "0000:00:04.0"
	eduShared = "0000:01:01.0"
	eduHolder = "0000:01:02.0"
)

var vfioDevices = []string{
	"intel-iommu",
	"edu,addr=04.0",
	"pci-bridge,id=br0,chassis_nr=1,addr=05.0,shpc=off",
	"edu,bus=br0,addr=01.0",
	"edu,bus=br0,addr=02.0",
}

// vfioScript loads VFIO (and uio_pci_generic, the host driver that holds
// the shared group), binds the holder to it, and runs cmd/vfio-edu, which
// binds the others to vfio-pci itself and restores them when done.
const vfioScript = `set -u
modprobe -a vfio vfio_iommu_type1 vfio_pci uio_pci_generic || exit 10
echo "modules: $(lsmod | awk '/^(vfio|uio)/ {print $1}' | sort | tr '\n' ' ')"
echo uio_pci_generic > /sys/bus/pci/devices/` + eduHolder + `/driver_override
echo ` + eduHolder + ` > /sys/bus/pci/drivers_probe
echo "` + eduHolder + ` driver: $(basename $(readlink /sys/bus/pci/devices/` + eduHolder + `/driver))"
# Options.Files gives mode 0755 to scripts (#!) only.
chmod 0755 /root/vfio-edu
/root/vfio-edu -alone ` + eduAlone + ` -shared ` + eduShared + ` -holder ` + eduHolder + `; rc=$?
for d in ` + eduAlone + ` ` + eduShared + `; do
	drv=$(readlink /sys/bus/pci/devices/$d/driver)
	echo "$d driver after the run: ${drv:+${drv##*/}}${drv:-none}"
done
echo "@@DMAR"
dmesg | grep DMAR: | grep -i fault
exit $rc
`

// vfioChecks are the checks cmd/vfio-edu must report as passed.
var vfioChecks = []string{
	"discover", "refuse-unbound", "bind", "open", "bar-id", "liveness", "factorial",
	"interrupt-factorial", "interrupt-raise", "dma-roundtrip", "dma-refuse-unmapped",
	"dma-iommu-blocks", "close", "restore", "refuse-host-driver", "refuse-group",
}

// TestVFIOEdu runs the driver's vfio backend (driver/vfio, through
// cmd/vfio-edu) inside a Debian 6.1 guest against QEMU's edu device behind
// an emulated Intel IOMMU: discovery, binding to vfio-pci, BAR0 reads and
// writes, MSI through an eventfd, a DMA round trip through the IOMMU, and
// the refusals (not bound to vfio-pci, a group with a member on a host
// driver, an address outside every mapping); and a DMA the device is made
// to do to an unmapped IOVA, which the IOMMU must block (the guest kernel
// logs the DMAR fault). One boot, one script.
func TestVFIOEdu(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := qemuguest.EnsureLog(ctx, "", testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	bin := buildVFIOEdu(t, ctx)
	built := time.Since(start)

	g, err := qemuguest.Start(ctx, img, qemuguest.Options{
		Machine:    "q35",
		KernelArgs: "intel_iommu=on",
		Devices:    vfioDevices,
		Script:     vfioScript,
		Files:      map[string][]byte{"/root/vfio-edu": bin},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Kill()
	status, err := g.Wait(ctx)
	out := g.ScriptOutput()
	t.Logf("guest script output:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	if status != 0 {
		t.Fatalf("guest script exited %d (10: a module did not load; 1: a check failed)", status)
	}

	for _, c := range vfioChecks {
		if !regexp.MustCompile(`(?m)^ok ` + regexp.QuoteMeta(c) + `: `).MatchString(out) {
			t.Errorf("check %s did not pass", c)
		}
	}
	if strings.Contains(out, "\nFAIL ") {
		t.Errorf("a check failed")
	}
	for _, want := range []string{
		"ok bind: " + eduAlone + " bound to vfio-pci",
		"ok bar-id: BAR0 ID register reads 0x010000ed",
		"interrupts by MSI",
		fmt.Sprintf("vfio-edu: %d checks passed, 0 failed", len(vfioChecks)),
		"refuse-group: vfio: IOMMU group", eduHolder + " [1234:11e8] (uio_pci_generic) shares it",
		"refuse-host-driver: vfio: " + eduHolder + " is bound to uio_pci_generic, not vfio-pci",
		"refuse-unbound: vfio: " + eduAlone + " is bound to no driver, not vfio-pci: bind it",
		eduHolder + " driver: uio_pci_generic",
		eduAlone + " driver after the run: none\n", eduShared + " driver after the run: none\n", // as before
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the guest's output lacks %q", want)
		}
	}
	// The IOMMU's own account of the blocked write: a DMAR fault for the
	// edu device at the unmapped IOVA.
	m := regexp.MustCompile(`write to unmapped IOVA (0x[0-9a-f]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the guest's output does not say which IOVA the stray DMA went to")
	}
	dmar := out[strings.Index(out, "@@DMAR"):]
	fault := regexp.MustCompile(`DMAR: \[DMA Write[^\]]*\] Request device \[00:04\.0\] fault addr ` + m[1] + `\b`)
	if !fault.MatchString(dmar) {
		t.Errorf("no DMAR fault for a write by 00:04.0 to %s in the guest kernel's log:\n%s", m[1], dmar)
	}
	t.Logf("vfio: wall time %v (vfio-edu built in %v, guest boot and run %v)",
		time.Since(start).Round(time.Millisecond), built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond))
}

// buildVFIOEdu builds cmd/vfio-edu for the guest: static (CGO_ENABLED=0),
// linux/amd64, with the go command running this test.
func buildVFIOEdu(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not in PATH; it builds cmd/vfio-edu for the guest: %v", err)
	}
	out := filepath.Join(t.TempDir(), "vfio-edu")
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-o", out, "../cmd/vfio-edu")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/vfio-edu: %v\n%s", err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
