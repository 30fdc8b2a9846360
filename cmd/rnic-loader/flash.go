package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/simdev"
	"github.com/openrnic/rnic/driver/update"
	"github.com/openrnic/rnic/driver/vfio"
	"github.com/openrnic/rnic/firmware"
	"github.com/openrnic/rnic/firmware/keyfile"
)

// flashFlags are how the flash commands find the device and its flash.
type flashFlags struct {
	simBin    string
	flashFile string
	busy      string
	json      bool
}

func (f *flashFlags) add(c *cobra.Command) {
	c.Flags().String("device", "sim", "which device: sim (the verilated device, hw/sim) or vfio:BDF (a board bound to vfio-pci, docs/vfio.md); the model has no flash")
	c.Flags().StringVar(&f.simBin, "sim", "", "rnic-sim's path (default: $RNIC_SIM, else build/sim/rnic-sim here or above)")
	c.Flags().StringVar(&f.flashFile, "flash-file", "", "the simulated device's flash: a 16 MiB file (docs/firmware-update.md); required with --device sim")
	c.Flags().StringVar(&f.busy, "flash-busy", "short", "the simulated flash's program and erase times: short (2,000 and 20,000 clocks) or datasheet (tPP 0.4 ms, tSE 45 ms at 250 MHz: minutes per update at the simulator's speed)")
	c.Flags().BoolVar(&f.json, "json", false, "print JSON instead of text")
}

// open opens the device's flash block: the simulated device powered on
// its flash file (with --device sim every command is a power cycle of the
// device), or a board bound to vfio-pci (--device vfio:BDF), whose flash
// block drives its configuration flash.
func (f *flashFlags) open(ctx context.Context, cmd *cobra.Command) (io.Closer, *flash.Controller, error) {
	dev, _ := cmd.Flags().GetString("device")
	var (
		b interface {
			flash.MMIO
			io.Closer
			BARSize() uint32
		}
		err error
	)
	switch {
	case dev == "sim":
		if f.flashFile == "" {
			return nil, nil, usagef("--flash-file: give the simulated device's flash file (a new path starts an erased flash)")
		}
		tpp, tse, err := f.busyTimes()
		if err != nil {
			return nil, nil, err
		}
		if b, err = simdev.Start(ctx, simdev.Config{Binary: f.simBin, Flash: f.flashFile, FlashTPP: tpp, FlashTSE: tse}); err != nil {
			return nil, nil, err
		}
	case strings.HasPrefix(dev, "vfio:"):
		if f.flashFile != "" || f.simBin != "" {
			return nil, nil, usagef("--flash-file and --sim are for --device sim: a board's flash is its own")
		}
		if b, err = vfio.Open(ctx, vfio.Config{BDF: strings.TrimPrefix(dev, "vfio:")}); err != nil {
			return nil, nil, err
		}
	case dev == "vfio":
		return nil, nil, usagef("--device vfio needs the board's PCI address: --device vfio:0000:01:00.0 (lspci -Dnn lists it; docs/vfio.md)")
	default:
		return nil, nil, usagef("--device %s: the flash commands drive sim or vfio:BDF (the model has no configuration flash)", dev)
	}
	m, err := regmap.Walk(b, b.BARSize())
	if err == nil {
		var c *flash.Controller
		if c, err = flash.Open(b, m); err == nil {
			return b, c, nil
		}
	}
	b.Close()
	return nil, nil, err
}

// busyTimes are the simulated flash's page program and sector erase
// times in clocks (0: rnic-sim's default, the datasheet's). The datasheet's
// tSE of 45 ms is 11.25 million clocks, over a minute per sector at the
// simulator's 160,000 clocks a second, so --flash-busy short is the
// default; either way the controller polls the part's busy bit. The
// environment (RNIC_FLASH_TPP, RNIC_FLASH_TSE, in clocks) overrides both:
// the tests shorten them further.
func (f *flashFlags) busyTimes() (tpp, tse uint64, err error) {
	switch f.busy {
	case "short":
		tpp, tse = 2000, 20000
	case "datasheet":
	default:
		return 0, 0, usagef("--flash-busy %q: short or datasheet", f.busy)
	}
	if v := envClocks("RNIC_FLASH_TPP"); v != 0 {
		tpp = v
	}
	if v := envClocks("RNIC_FLASH_TSE"); v != 0 {
		tse = v
	}
	return tpp, tse, nil
}

func envClocks(name string) uint64 {
	var v uint64
	fmt.Sscan(os.Getenv(name), &v)
	return v
}

type bootJSON struct {
	Schema          string   `json:"schema"`
	Slot            string   `json:"slot"`
	Reason          string   `json:"reason"`
	Why             string   `json:"why"`
	Version         string   `json:"version"`
	Build           uint32   `json:"build"`
	SecurityCounter uint32   `json:"security_counter"`
	Seq             uint32   `json:"seq"`
	StartAddr       uint32   `json:"start_address"`
	Confirmed       bool     `json:"confirmed"`
	Valid           []string `json:"valid_slots"`
}

func bootOf(ctx context.Context, c *flash.Controller, b flash.BootStatus) (bootJSON, error) {
	conf, err := update.Confirmed(ctx, c, b.Slot)
	if err != nil {
		return bootJSON{}, err
	}
	out := bootJSON{Schema: "rnic-loader/boot-status/1", Slot: b.Slot.String(), Reason: b.Reason.String(), Why: b.Reason.Text(),
		Version: b.VersionString(), Build: b.Build, SecurityCounter: b.SecurityCounter, Seq: b.Seq, StartAddr: b.StartAddr,
		Confirmed: conf && b.Slot != flash.NoSlot, Valid: []string{}}
	for s, v := range b.Valid {
		if v {
			out.Valid = append(out.Valid, flash.Slot(s).String())
		}
	}
	return out, nil
}

func printBoot(w io.Writer, b bootJSON) {
	fmt.Fprintf(w, "booted      slot %s, version %s (build %d), security counter %d\n", b.Slot, b.Version, b.Build, b.SecurityCounter)
	fmt.Fprintf(w, "why         %s: %s\n", b.Reason, b.Why)
	fmt.Fprintf(w, "confirmed   %v\n", b.Confirmed)
	fmt.Fprintf(w, "valid       %v\n", b.Valid)
}

func newBootStatusCmd() *cobra.Command {
	var f flashFlags
	c := &cobra.Command{
		Use:   "boot-status",
		Short: "Show which image the device booted and why",
		Long: `boot-status reads the boot logic's report: the slot it booted (golden, A,
B or none), the image's version, build and security counter, why it chose
it (confirmed, trial, fallback-unconfirmed, fallback-invalid, golden,
nothing-valid) and whether the image is confirmed now.

With --device sim the command powers the simulated device on its
--flash-file: the boot logic runs at that power-on (a trial boot is
recorded then; docs/firmware-update.md).`,
		Example: `  rnic-loader boot-status --flash-file dev.flash
  rnic-loader boot-status --flash-file dev.flash --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, fc, err := f.open(cmd.Context(), cmd)
			if err != nil {
				return err
			}
			defer d.Close()
			b, err := fc.Boot(cmd.Context())
			if err != nil {
				return err
			}
			out, err := bootOf(cmd.Context(), fc, b)
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			printBoot(cmd.OutOrStdout(), out)
			return nil
		},
	}
	f.add(c)
	return c
}

func newConfirmCmd() *cobra.Command {
	var f flashFlags
	c := &cobra.Command{
		Use:   "confirm",
		Short: "End the running image's trial: keep it",
		Long: `confirm ends the trial of the image the device booted after rnic-loader
flash: it programs the slot's confirm octet, so later boots keep the image.
Without it the next boot falls back to the previous image. Refused (exit 1)
when the running image is not on trial.`,
		Example: `  rnic-loader confirm --flash-file dev.flash`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, fc, err := f.open(cmd.Context(), cmd)
			if err != nil {
				return err
			}
			defer d.Close()
			s, err := update.Confirm(cmd.Context(), fc)
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"schema": "rnic-loader/confirm/1", "slot": s.String(), "confirmed": true})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "slot %s confirmed\n", s)
			return nil
		},
	}
	f.add(c)
	return c
}

type flashJSON struct {
	Schema  string   `json:"schema"`
	File    string   `json:"file"`
	Slot    string   `json:"slot"`
	Seq     uint32   `json:"seq"`
	Octets  int64    `json:"octets_written"`
	Seconds float64  `json:"seconds"`
	Boot    bootJSON `json:"boot"`
}

func newFlashCmd() *cobra.Command {
	var (
		f       flashFlags
		trusted string
		confirm bool
	)
	c := &cobra.Command{
		Use:   "flash IMG",
		Short: "Write a signed image to the device's update slot and boot it on trial",
		Long: `flash checks the image IMG before it erases a single octet: the Ed25519
signature against the trust set (--trusted, else $RNIC_TRUSTED_KEYS, else
~/.config/rnic/trusted-keys, else /etc/rnic/trusted-keys), the payload's
SHA-256, that the image is for this device (board, FPGA part and PCI IDs of
its golden image), that its security counter is not below the running
image's, that it fits a slot, and that its key is in the device's golden
key list. Then it writes the update slot the device is not running from:
its header sector erased first, the payload, the header, the commit marker
last; reads everything back; and reboots the device into it on trial. Run
rnic-loader confirm once the new image works, or the next boot falls back.

Progress: a bar with the rate and time left on a terminal, plain lines
otherwise; --json prints one record at the end. With --device sim each
command is a power cycle of the simulated device (its --flash-file keeps
the flash): --confirm confirms in the same session, after the trial boot.

Exit status: 0 flashed and booted on trial, 1 refused (nothing written) or
failed, 2 usage error.`,
		Example: `  rnic-loader flash --flash-file dev.flash --trusted keys/ rnic-sim-1.2.0.img
  rnic-loader flash --flash-file dev.flash --confirm --json rnic-sim-1.2.0.img`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			path, _, err := keyfile.Locator{Flag: trusted, Getenv: os.Getenv, SystemDir: keyfile.SystemTrustDir}.Locate()
			if err != nil {
				return err
			}
			ts, err := keyfile.LoadTrust(path)
			if err != nil {
				return fmt.Errorf("refused, nothing written: %w", err)
			}
			img, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			d, fc, err := f.open(ctx, cmd)
			if err != nil {
				return err
			}
			defer d.Close()
			var bar *flashBar
			if !f.json {
				bar = newFlashBar(cmd.ErrOrStderr())
			}
			start := time.Now()
			r, err := update.Flash(ctx, fc, img, update.Options{Trust: ts, Progress: bar.update})
			bar.finish()
			if err != nil {
				var ref *update.Refused
				if errors.As(err, &ref) {
					return fmt.Errorf("%s: %w (nothing was written)", args[0], err)
				}
				return err
			}
			if confirm {
				if _, err := update.Confirm(ctx, fc); err != nil {
					return err
				}
			}
			b, err := bootOf(ctx, fc, r.Boot)
			if err != nil {
				return err
			}
			b.Confirmed = confirm
			out := flashJSON{Schema: "rnic-loader/flash/1", File: args[0], Slot: r.Slot.String(), Seq: r.Seq, Octets: r.Written,
				Seconds: time.Since(start).Seconds(), Boot: b}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "flashed     %s (%s) into slot %s, %d octets, sequence %d\n", args[0], firmware.Version{Major: uint8(r.Boot.Version),
				Minor: uint8(r.Boot.Version >> 8), Patch: uint16(r.Boot.Version >> 16), Build: r.Boot.Build}, r.Slot, r.Written, r.Seq)
			printBoot(w, b)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVar(&trusted, "trusted", "", "the trust set: a directory of *.pub/*.pem public keys or one file listing them")
	c.Flags().BoolVar(&confirm, "confirm", false, "confirm the new image right after its trial boot")
	return c
}

// flashBar shows an update's progress: on a terminal one line redrawn with
// a bar, the rate and the time left; otherwise a plain line per phase and
// every 25 %.
type flashBar struct {
	w      io.Writer
	tty    bool
	start  time.Time
	last   time.Time
	phase  string
	next   int64
	active bool
}

func newFlashBar(w io.Writer) *flashBar {
	b := &flashBar{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		b.tty = err == nil
	}
	return b
}

func (b *flashBar) update(phase string, done, total int64) {
	if b == nil {
		return
	}
	b.active = true
	el := time.Since(b.start).Seconds()
	rate := float64(done) / max(el, 1e-9)
	left := float64(total-done) / max(rate, 1e-9)
	if b.tty {
		if time.Since(b.last) < 100*time.Millisecond && done < total {
			return
		}
		b.last = time.Now()
		const width = 30
		n := int(width * done / max(total, 1))
		bar := fmt.Sprintf("%s%s", repeat('#', n), repeat('.', width-n))
		fmt.Fprintf(b.w, "\r%-7s [%s] %3d%%  %s/s  %s left ", phase, bar, 100*done/max(total, 1), shortOctets(int64(rate)),
			(time.Duration(left) * time.Second).Round(time.Second))
		return
	}
	if phase != b.phase || done >= b.next || done == total {
		fmt.Fprintf(b.w, "flash: %s: %d of %d octets (%d%%), %s/s, %.0f s left\n", phase, done, total, 100*done/max(total, 1),
			shortOctets(int64(rate)), left)
		b.phase = phase
		b.next = done + total/4
	}
}

func repeat(c byte, n int) string {
	s := make([]byte, max(n, 0))
	for i := range s {
		s[i] = c
	}
	return string(s)
}

func (b *flashBar) finish() {
	if b != nil && b.tty && b.active {
		fmt.Fprintln(b.w)
	}
}
