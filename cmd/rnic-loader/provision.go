package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/firmware"
	"github.com/openrnic/rnic/firmware/keyfile"
)

type provisionJSON struct {
	Schema  string   `json:"schema"`
	File    string   `json:"flash_file"`
	Image   string   `json:"image"`
	Version string   `json:"version"`
	Board   string   `json:"board"`
	Part    string   `json:"part"`
	PCIIDs  string   `json:"pci_ids"`
	Keys    []string `json:"key_list"`
	Created bool     `json:"created"`
}

// newProvisionCmd is the factory's step: the golden image and its key list
// written into a flash image file, never through the device (whose flash
// block refuses every host write to the golden region).
func newProvisionCmd() *cobra.Command {
	var (
		flashFile, trusted string
		force, asJSON      bool
	)
	c := &cobra.Command{
		Use:   "provision GOLDEN.IMG",
		Short: "Put the golden image and its key list into a flash image file (factory programming)",
		Long: `provision writes the golden slot of a flash image file: GOLDEN.IMG, a signed
image, as a complete update would leave it (header sector with its commit
marker, payload), and the golden key list: the key ids an update may be
signed with, which rnic-loader flash checks besides the host's trust set.
The key list is every key of the trust set (--trusted, else
$RNIC_TRUSTED_KEYS, else ~/.config/rnic/trusted-keys, else
/etc/rnic/trusted-keys), and GOLDEN.IMG must verify against it. The golden
image's board, FPGA part and PCI IDs become the device's identity.

The file is the whole 16 MiB part (docs/firmware-update.md): the simulated
device's --flash-file, or what a flash programmer writes to a board's part
before the board is first powered. A new path is created erased (0xff); an
existing file whose golden slot is not erased is refused unless --force
(a device never rewrites its golden slot: this is the factory's job).
Nothing is written when a check fails.

Exit status: 0 written, 1 refused or failed, 2 usage error.`,
		Example: `  rnic-loader keygen --out release.key
  rnic-loader sign --key release.key --board sim --part verilator --pci 1d0f:0001 \
      --version 1.0.0 --security-counter 1 --out golden.img golden.bit
  rnic-loader provision --trusted release.key.pub --flash-file dev.flash golden.img
  rnic-loader boot-status --flash-file dev.flash`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if flashFile == "" {
				return usagef("--flash-file: give the flash image file to write (a new path is created erased)")
			}
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
			v, err := firmware.Verify(img, ts)
			if err != nil {
				return fmt.Errorf("%s: refused, nothing written: %w", args[0], err)
			}
			fl, created, err := readFlashFile(flashFile)
			if err != nil {
				return err
			}
			golden := fl[flash.Golden.Base() : flash.Golden.Base()+flash.SlotSize]
			if !created && !force && !bytes.Equal(golden, bytes.Repeat([]byte{0xff}, len(golden))) {
				return fmt.Errorf("%s: its golden slot is not erased: a device's golden image is written once, at the factory (--force replaces it in this file; nothing was written)", flashFile)
			}
			var ids [][32]byte
			var shown []string
			for _, k := range ts.Keys() {
				ids = append(ids, k.ID)
				shown = append(shown, k.ID.String())
			}
			if err := flash.WriteSlot(fl, flash.Golden, img[:firmware.HeaderSize], v.Payload, 0, ids); err != nil {
				return fmt.Errorf("%s: %w (nothing was written)", args[0], err)
			}
			if err := writeFileAtomic(flashFile, fl); err != nil {
				return err
			}
			h := v.Header
			out := provisionJSON{Schema: "rnic-loader/provision/1", File: flashFile, Image: args[0], Version: h.Version.String(),
				Board: h.Board, Part: h.Part, PCIIDs: h.PCI.String(), Keys: shown, Created: created}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "provisioned %s: golden image %s (version %s; board %s, part %s, PCI IDs %s)\n",
				flashFile, args[0], out.Version, out.Board, out.Part, out.PCIIDs)
			for _, k := range shown {
				fmt.Fprintf(w, "key list    %s\n", k)
			}
			return nil
		},
	}
	c.Flags().StringVar(&flashFile, "flash-file", "", "the flash image file (16 MiB; created erased if it does not exist)")
	c.Flags().StringVar(&trusted, "trusted", "", "the trust set: the golden image must verify against it, and its keys become the golden key list")
	c.Flags().BoolVar(&force, "force", false, "replace a golden slot that is already written in this file")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	return c
}

// readFlashFile reads a whole flash image file, or makes an erased one
// when path does not exist (created reports which).
func readFlashFile(path string) (fl []byte, created bool, err error) {
	fl, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return bytes.Repeat([]byte{0xff}, flash.Size), true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(fl) != flash.Size {
		return nil, false, fmt.Errorf("%s: %d octets: a flash image file is the whole part, %d octets (nothing was written)", path, len(fl), flash.Size)
	}
	return fl, false, nil
}
