package flash_test

import (
	"path/filepath"
	"testing"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/driver/simdev"
)

// BenchmarkFlashThroughput erases, programs (quad) and reads back 64 KiB
// through the controller and reports simulated clocks per MiB: all of
// them, and the part's busy clocks among them (the test's short tPP and
// tSE); docs/firmware-update.md adds the datasheet's busy times to the
// rest. A clock is 4 ns at the device's 250 MHz.
func BenchmarkFlashThroughput(b *testing.B) {
	const n = 64 << 10
	// Lockstep: the clock runs only while an MMIO access is served, so the
	// count is the controller's and the part's, plus a few clocks an access
	// (the polls of STATUS and the buffer's words), not the host's pace.
	d, c := startSimConfig(b, simdev.Config{Flash: filepath.Join(b.TempDir(), "flash.bin"), Lockstep: true})
	ctx := ctxT(b)
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 5)
	}
	base := flash.SlotA.Base() + flash.PayloadOff
	var wr, rd, busy uint64
	for i := 0; i < b.N; i++ {
		s0, _ := d.FlashStats()
		t0, err := d.Run(0)
		if err != nil {
			b.Fatal(err)
		}
		for off := uint32(0); off < n; off += flash.SectorSize {
			if err := c.Erase(ctx, base+off); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.Program(ctx, base, data); err != nil {
			b.Fatal(err)
		}
		t1, _ := d.Run(0)
		if _, err := c.Read(ctx, base, n); err != nil {
			b.Fatal(err)
		}
		t2, _ := d.Run(0)
		s1, _ := d.FlashStats()
		wr += t1 - t0
		rd += t2 - t1
		busy += s1.BusyClocks - s0.BusyClocks
	}
	per := float64(b.N) * n / (1 << 20)
	b.ReportMetric(float64(wr)/per, "write-clocks/MiB")
	b.ReportMetric(float64(busy)/per, "busy-clocks/MiB")
	b.ReportMetric(float64(rd)/per, "read-clocks/MiB")
}
