package vfio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Binding is a function Bind gave to vfio-pci, with what it had before.
type Binding struct {
	BDF string
	// Previous is the driver it was bound to ("" for none), and
	// PreviousOverride its driver_override.
	Previous, PreviousOverride string

	s       Sysfs
	changed bool
}

// Bind binds the function to vfio-pci (which must be loaded: modprobe
// vfio-pci): driver_override names vfio-pci, the current driver (if any)
// lets go of the device, and drivers_probe binds it again, to vfio-pci.
// It waits (until ctx is done) for the driver link to show vfio-pci.
// A function bound to vfio-pci already is left as it is.
func (s Sysfs) Bind(ctx context.Context, bdf string) (*Binding, error) {
	d, err := s.Device(bdf)
	if err != nil {
		return nil, err
	}
	b := &Binding{BDF: d.BDF, Previous: d.Driver, PreviousOverride: d.DriverOverride, s: s}
	if d.Driver == "vfio-pci" {
		return b, nil
	}
	if _, err := os.Stat(filepath.Join(s.root(), "bus", "pci", "drivers", "vfio-pci")); err != nil {
		return nil, fmt.Errorf("vfio: the vfio-pci driver is not loaded (%w): modprobe vfio-pci", err)
	}
	b.changed = true
	if err := s.rebind(ctx, d.BDF, d.Driver, "vfio-pci"); err != nil {
		return b, err
	}
	return b, nil
}

// Restore gives the function back to the driver it had before Bind, with
// its driver_override as it was (or leaves it without a driver if it had
// none).
func (b *Binding) Restore(ctx context.Context) error {
	if !b.changed {
		return nil
	}
	d, err := b.s.Device(b.BDF)
	if err != nil {
		return err
	}
	if err := b.s.rebind(ctx, b.BDF, d.Driver, b.Previous); err != nil {
		return err
	}
	if err := b.s.writeAttr(filepath.Join(b.s.devicesDir(), b.BDF, "driver_override"), b.PreviousOverride+"\n"); err != nil {
		return err
	}
	b.changed = false
	return nil
}

// rebind moves bdf from driver cur to driver want ("" for none) through
// driver_override, unbind and drivers_probe, and waits for the result.
func (s Sysfs) rebind(ctx context.Context, bdf, cur, want string) error {
	dev := filepath.Join(s.devicesDir(), bdf)
	override := want
	if want == "" {
		// No driver: an override no driver has keeps the probe from
		// binding one.
		override = "none"
	}
	if err := s.writeAttr(filepath.Join(dev, "driver_override"), override+"\n"); err != nil {
		return err
	}
	if cur != "" {
		if err := s.writeAttr(filepath.Join(dev, "driver", "unbind"), bdf); err != nil {
			return err
		}
	}
	if want != "" {
		if err := s.writeAttr(filepath.Join(s.root(), "bus", "pci", "drivers_probe"), bdf); err != nil {
			return err
		}
	}
	for {
		got, err := linkBase(filepath.Join(dev, "driver"))
		if err != nil {
			return err
		}
		if got == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("vfio: %s is bound to %q, not %q, after driver_override and drivers_probe (%w); "+
				"is the driver loaded, and does dmesg say why its probe failed?", bdf, got, want, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (s Sysfs) writeAttr(path, v string) error {
	if err := os.WriteFile(path, []byte(v), 0o200); err != nil {
		return fmt.Errorf("vfio: writing %q to %s: %w (run as root)", v, path, err)
	}
	return nil
}
