package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/firmware"
	"github.com/openrnic/rnic/firmware/keyfile"
)

type signJSON struct {
	Schema string           `json:"schema"`
	File   string           `json:"file"`
	Size   int              `json:"file_size"`
	Header *imageHeaderJSON `json:"header"`
}

func newSignCmd() *cobra.Command {
	var (
		key, board, part, pci, version, buildHash, out string
		counter                                        uint32
		json                                           bool
	)
	c := &cobra.Command{
		Use:   "sign --key KEY --board B --part P --pci IDS --version V --security-counter N --out IMG PAYLOAD",
		Short: "Make a signed image of a payload (a bitstream) for one board",
		Long: `sign wraps PAYLOAD (a bitstream, or whatever the board's update slot
takes) in the RNIC image format: a 320-octet header naming the target
board, FPGA part and PCI IDs, the version, the security counter, the
payload's length and SHA-256 and the signing key's id, signed with the
Ed25519 key in KEY (docs/firmware.md). The image is written to IMG
(replaced whole: a failed sign leaves no partial image).

--pci is VVVV:DDDD:SVVV:SDDD in hex as lspci -n shows it (vendor, device,
subsystem vendor, subsystem device); VVVV:DDDD stands for VVVV:DDDD:VVVV:DDDD.
--version is MAJOR.MINOR.PATCH[+BUILD] (0-255, 0-255, 0-65535, 0-4294967295).
--security-counter is the anti-rollback counter: a device that has run an
image with counter N refuses images below N, whatever their version. Raise
it when an image fixes a security bug that older images must not bring
back; keep it to allow going back to older versions.
--build-hash is the git commit the payload was built from (40 hex digits;
zeros when not given).

KEY is refused if its group or others have any permission on it
(chmod 600 KEY). Signing is deterministic: the same inputs give the same
image.

--json prints one record (schema "rnic-loader/sign/1"): schema, file,
file_size, header (every field, as inspect --json prints it).

Exit status: 0 success, 1 failure (a key or payload that cannot be read),
2 usage error (a flag missing or malformed, a name too long).`,
		Example: `  rnic-loader sign --key release.key --board au250 --part xcu250-figd2104-2l-e \
      --pci 10ee:903f --version 1.2.0+417 --security-counter 3 \
      --build-hash $(git rev-parse HEAD) --out rnic-au250-1.2.0.img rnic_au250.bit
  rnic-loader sign --key test.key --board sim --part verilator --pci 1234:5678 \
      --version 0.1.0 --security-counter 0 --out sim.img payload.bin --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			var missing []string
			for _, n := range []string{"key", "board", "part", "pci", "version", "security-counter", "out"} {
				if !fl.Changed(n) {
					missing = append(missing, n)
				}
			}
			if len(missing) > 0 {
				return usagef("%s: required: an image names its target, version and security counter, and sign needs the key and where to write", flagNames(missing...))
			}
			var h firmware.Header
			var err error
			if h.Version, err = firmware.ParseVersion(version); err != nil {
				return usagef("--version: %v", err)
			}
			if h.PCI, err = firmware.ParsePCIIDs(pci); err != nil {
				return usagef("--pci: %v", err)
			}
			if buildHash != "" {
				b, err := hex.DecodeString(buildHash)
				if err != nil || len(b) != len(h.BuildHash) {
					return usagef("--build-hash %q: want the 40 hex digits of a git commit (git rev-parse HEAD)", buildHash)
				}
				copy(h.BuildHash[:], b)
			}
			h.Board, h.Part, h.SecurityCounter = board, part, counter
			payloadPath := args[0]
			if same(payloadPath, out) {
				return usagef("--out %s is the payload file: give the image another name", out)
			}
			priv, err := keyfile.ReadPrivate(key)
			if err != nil {
				return err
			}
			payload, err := os.ReadFile(payloadPath)
			if err != nil {
				return err
			}
			im, err := firmware.Sign(priv, h, payload)
			if k := firmware.KindOf(err); k == firmware.BadString {
				return usagef("--%s", err) // "--board: ..." names the flag
			} else if k == firmware.EmptyPayload {
				return fmt.Errorf("%s is empty: %w", payloadPath, err)
			} else if err != nil {
				return err
			}
			b, err := im.MarshalBinary()
			if err != nil {
				return err
			}
			if err := writeFileAtomic(out, b); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if json {
				return writeJSON(w, signJSON{Schema: "rnic-loader/sign/1", File: out, Size: len(b), Header: headerJSON(&im.Header)})
			}
			fmt.Fprintf(w, "signed %s: %d octets (%d header + %d payload)\n", out, len(b), firmware.HeaderSize, len(payload))
			return printHeader(w, &im.Header)
		},
	}
	f := c.Flags()
	f.StringVar(&key, "key", "", "the private key file (rnic-loader keygen; mode 0600)")
	f.StringVar(&board, "board", "", "the board the image is for, e.g. au250 or sim (printable ASCII, at most 16)")
	f.StringVar(&part, "part", "", "the FPGA part the image is for, e.g. xcu250-figd2104-2l-e or verilator (at most 32)")
	f.StringVar(&pci, "pci", "", "the PCI IDs of the device the image is for: VVVV:DDDD[:SVVV:SDDD] in hex")
	f.StringVar(&version, "version", "", "the image version: MAJOR.MINOR.PATCH[+BUILD]")
	f.Uint32Var(&counter, "security-counter", 0, "the anti-rollback counter (0 to 4294967295)")
	f.StringVar(&buildHash, "build-hash", "", "the git commit of the build: 40 hex digits (default all zero)")
	f.StringVarP(&out, "out", "o", "", "the image file to write")
	f.BoolVar(&json, "json", false, "print one JSON record instead of text")
	return c
}

// same reports whether two paths name one existing file.
func same(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// writeFileAtomic writes b to path through a temporary file in the same
// directory renamed over it: readers see the old file or the whole new
// one, never a part.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = tmp.Chmod(0o644)
	if err == nil {
		_, err = tmp.Write(b)
	}
	if err == nil {
		err = tmp.Sync()
	}
	err = errors.Join(err, tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
