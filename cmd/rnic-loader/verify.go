package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/firmware"
)

type verifyJSON struct {
	Schema     string           `json:"schema"`
	File       string           `json:"file"`
	Valid      bool             `json:"valid"`
	Refused    *refusalJSON     `json:"refused"`
	TrustSet   *string          `json:"trust_set"`
	TrustedKey *string          `json:"trusted_key"`
	Checked    []string         `json:"checked"`
	Unchecked  []string         `json:"unchecked"`
	Header     *imageHeaderJSON `json:"header"`
}

func newVerifyCmd() *cobra.Command {
	var (
		trusted, board, part, pci string
		minCounter                uint32
		json                      bool
	)
	c := &cobra.Command{
		Use:   "verify [--trusted DIR] [--board B] [--part P] [--pci IDS] [--min-security-counter N] IMG",
		Short: "Check a signed image: signature, payload, and the device it is for",
		Long: `verify checks the image IMG as rnic-loader flash will before it erases
anything: every header field the format fixes, the Ed25519 signature
against the trust set's key whose id the image names (never a key from the
image), the file's length and the payload's SHA-256; then, for each of
--board, --part, --pci and --min-security-counter given, that the image is
for that board, FPGA part, PCI IDs (all four compared; VVVV:DDDD stands for
VVVV:DDDD:VVVV:DDDD), and that its security counter is not below N (the
device's anti-rollback floor). An older version with a high enough
security counter is accepted: the counter, not the version, says what a
device may go back to. The text output lists what was not checked.

The trust set is --trusted (a directory of *.pub and *.pem public keys, or
one file listing them), else $RNIC_TRUSTED_KEYS, else
$XDG_CONFIG_HOME/rnic/trusted-keys (~/.config/rnic/trusted-keys), else
/etc/rnic/trusted-keys. An empty trust set is refused.

--json prints one record (schema "rnic-loader/verify/1"), also when the
image is refused: schema, file, valid, refused (null, or kind, field,
message), trust_set, trusted_key (the public key file that verified it),
checked and unchecked (lists of signature, payload, board, part, pci_ids,
security_counter), header (every field as the file says it, vouched for
only when valid is true; null when the header does not parse).

Exit status: 0 the image is valid for what was checked, 1 it is refused (the
reason on stderr) or the trust set cannot be read, 2 usage error.`,
		Example: `  rnic-loader verify --trusted ~/.config/rnic/trusted-keys rnic-au250-1.2.0.img
  rnic-loader verify --board au250 --part xcu250-figd2104-2l-e --pci 10ee:903f \
      --min-security-counter 3 rnic-au250-1.2.0.img
  rnic-loader verify --trusted release.key.pub --json sim.img`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			var ids firmware.PCIIDs
			if fl.Changed("pci") {
				var err error
				if ids, err = firmware.ParsePCIIDs(pci); err != nil {
					return usagef("--pci: %v", err)
				}
			}
			for _, n := range []string{"board", "part"} {
				if v, _ := fl.GetString(n); fl.Changed(n) && v == "" {
					return usagef("--%s \"\": give the %s name, or leave the flag out to not check it", n, n)
				}
			}
			path := args[0]
			out := verifyJSON{Schema: "rnic-loader/verify/1", File: path, Checked: []string{}, Unchecked: []string{}}
			// The target checks, in the order Check makes them.
			type check struct {
				name, flag string
				given      bool
				run        func(*firmware.Header) error
			}
			checks := []check{
				{"board", "--board", fl.Changed("board"), func(h *firmware.Header) error { return firmware.CheckBoard(h, board) }},
				{"part", "--part", fl.Changed("part"), func(h *firmware.Header) error { return firmware.CheckPart(h, part) }},
				{"pci_ids", "--pci", fl.Changed("pci"), func(h *firmware.Header) error { return firmware.CheckPCI(h, ids) }},
				{"security_counter", "--min-security-counter", fl.Changed("min-security-counter"), func(h *firmware.Header) error {
					return firmware.CheckSecurityCounter(h, minCounter)
				}},
			}
			err := func() error {
				b, err := readImage(path)
				if err != nil {
					return err
				}
				if h, perr := firmware.ParseHeader(b); perr == nil {
					out.Header = headerJSON(h)
				}
				trust, where, err := loadTrust(trusted, false)
				if err != nil {
					return err
				}
				out.TrustSet = &where
				v, err := firmware.Verify(b, trust)
				if err != nil {
					return err
				}
				out.TrustedKey = &v.Key.Source
				out.Checked = append(out.Checked, "signature", "payload")
				for _, c := range checks {
					if !c.given {
						out.Unchecked = append(out.Unchecked, c.name)
						continue
					}
					if err := c.run(&v.Header); err != nil {
						return err
					}
					out.Checked = append(out.Checked, c.name)
				}
				return nil
			}()
			out.Valid = err == nil
			if err != nil {
				out.Refused = refusalOf(err)
				err = fmt.Errorf("%s: refused: %w", path, err)
			}
			w := cmd.OutOrStdout()
			if json {
				if jerr := writeJSON(w, out); jerr != nil {
					return jerr
				}
				return err
			}
			if err != nil {
				return err
			}
			h := out.Header
			fmt.Fprintf(w, "%s: valid: version %s, security counter %d, board %s, part %s, PCI IDs %s\n",
				path, h.Version, h.SecurityCounter, h.Board, h.Part, h.PCIIDs)
			fmt.Fprintf(w, "signed by key %s (%s, trust set %s)\n", h.KeyID, *out.TrustedKey, *out.TrustSet)
			fmt.Fprintf(w, "checked: %s\n", strings.Join(out.Checked, ", "))
			if len(out.Unchecked) > 0 {
				var flags []string
				for _, c := range checks {
					if !c.given {
						flags = append(flags, c.flag)
					}
				}
				fmt.Fprintf(w, "not checked: %s (give %s to check them against the device)\n", strings.Join(out.Unchecked, ", "), strings.Join(flags, ", "))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&trusted, "trusted", "", trustFlagHelp)
	f.StringVar(&board, "board", "", "refuse an image for another board")
	f.StringVar(&part, "part", "", "refuse an image for another FPGA part")
	f.StringVar(&pci, "pci", "", "refuse an image for other PCI IDs: VVVV:DDDD[:SVVV:SDDD] in hex")
	f.Uint32Var(&minCounter, "min-security-counter", 0, "refuse an image whose security counter is below this (the device's anti-rollback floor)")
	f.BoolVar(&json, "json", false, "print one JSON record (also when the image is refused)")
	return c
}
