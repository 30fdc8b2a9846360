package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/firmware"
)

type inspectJSON struct {
	Schema    string           `json:"schema"`
	File      string           `json:"file"`
	Size      int              `json:"file_size"`
	Header    *imageHeaderJSON `json:"header"`
	TrustSet  *string          `json:"trust_set"`
	Signature checkJSON        `json:"signature_check"`
	Payload   checkJSON        `json:"payload_check"`
}

// checkJSON is one of inspect's checks: status "valid", "not_checked" or
// the refusal's kind (bad_signature, unknown_key, truncated, ...), and a
// message.
type checkJSON struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func newInspectCmd() *cobra.Command {
	var (
		trusted string
		json    bool
	)
	c := &cobra.Command{
		Use:   "inspect [--json] [--trusted DIR] IMG",
		Short: "Print every field of a signed image's header",
		Long: `inspect prints every field of IMG's header, then two checks: the
signature, against the trust set when there is one (--trusted, else
$RNIC_TRUSTED_KEYS, else ~/.config/rnic/trusted-keys or
/etc/rnic/trusted-keys when they exist; without one it says "not
checked"), and the payload, whose length and SHA-256 are compared with the
header's (which vouches for nothing unless the signature verifies).

inspect shows; it does not judge: it exits 0 whenever the header parses,
whatever the checks say. Use rnic-loader verify to accept or refuse an
image.

--json prints one record (schema "rnic-loader/inspect/1"): schema, file,
file_size, header (magic, format_version, signed_header_length, flags,
version, security_counter, payload_length, payload_sha256, key_id, board,
part, pci_ids, build_hash, signature), trust_set (null without one),
signature_check and payload_check (each status and message; status is
valid, not_checked, or why not: unknown_key, bad_signature, truncated,
oversized, hash_mismatch).

Exit status: 0 the header was printed, 1 the file is not an image whose
header parses (the field and the reason on stderr) or the trust set
named cannot be read, 2 usage error.`,
		Example: `  rnic-loader inspect rnic-au250-1.2.0.img
  rnic-loader inspect --json rnic-au250-1.2.0.img
  rnic-loader inspect --trusted release.key.pub sim.img`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			b, err := readImage(path)
			if err != nil {
				return err
			}
			h, err := firmware.ParseHeader(b)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			trust, where, err := loadTrust(trusted, true)
			if err != nil {
				return err
			}
			out := inspectJSON{Schema: "rnic-loader/inspect/1", File: path, Size: len(b), Header: headerJSON(h)}
			if trust == nil {
				out.Signature = checkJSON{"not_checked", "no trust set: give --trusted DIR (or set $RNIC_TRUSTED_KEYS) to check it"}
			} else {
				out.TrustSet = &where
				if _, key, err := firmware.VerifyHeader(b, trust); err != nil {
					out.Signature = checkJSON{firmware.KindOf(err).String(), err.Error()}
				} else {
					out.Signature = checkJSON{"valid", fmt.Sprintf("verifies with the trusted key %s", key.Source)}
				}
			}
			if err := firmware.CheckPayload(h, b[firmware.HeaderSize:]); err != nil {
				out.Payload = checkJSON{firmware.KindOf(err).String(), err.Error()}
			} else {
				out.Payload = checkJSON{"valid", fmt.Sprintf("%d octets, SHA-256 as the header says", h.PayloadLen)}
			}
			w := cmd.OutOrStdout()
			if json {
				return writeJSON(w, out)
			}
			fmt.Fprintf(w, "%s: %d octets\n", path, len(b))
			var extra [][2]string
			if out.TrustSet != nil {
				extra = append(extra, [2]string{"trust set", *out.TrustSet})
			}
			extra = append(extra, [2]string{"signature check", out.Signature.Status + ": " + out.Signature.Message},
				[2]string{"payload check", out.Payload.Status + ": " + out.Payload.Message})
			return printHeader(w, h, extra...)
		},
	}
	c.Flags().StringVar(&trusted, "trusted", "", trustFlagHelp)
	c.Flags().BoolVar(&json, "json", false, "print one JSON record instead of text")
	return c
}
