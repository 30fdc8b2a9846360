package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"text/tabwriter"

	"github.com/openrnic/rnic/firmware"
	"github.com/openrnic/rnic/firmware/keyfile"
)

// What keygen, sign, verify and inspect share: reading an image file, the
// trust set, and the header as text and JSON (docs/firmware.md).

// imageHeaderJSON is an image header in sign's, verify's and inspect's
// JSON: every field of the format, numbers as numbers, octet strings in
// hex.
type imageHeaderJSON struct {
	Magic           string `json:"magic"`
	FormatVersion   int    `json:"format_version"`
	SignedLength    int    `json:"signed_header_length"`
	Flags           uint32 `json:"flags"`
	Version         string `json:"version"`
	SecurityCounter uint32 `json:"security_counter"`
	PayloadLength   uint32 `json:"payload_length"`
	PayloadSHA256   string `json:"payload_sha256"`
	KeyID           string `json:"key_id"`
	Board           string `json:"board"`
	Part            string `json:"part"`
	PCIIDs          string `json:"pci_ids"`
	BuildHash       string `json:"build_hash"`
	Signature       string `json:"signature"`
}

func headerJSON(h *firmware.Header) *imageHeaderJSON {
	return &imageHeaderJSON{
		Magic: firmware.Magic, FormatVersion: firmware.FormatVersion, SignedLength: firmware.SignedSize,
		Version: h.Version.String(), SecurityCounter: h.SecurityCounter, PayloadLength: h.PayloadLen,
		PayloadSHA256: hex.EncodeToString(h.PayloadSHA256[:]), KeyID: h.KeyID.String(),
		Board: h.Board, Part: h.Part, PCIIDs: h.PCI.String(),
		BuildHash: hex.EncodeToString(h.BuildHash[:]), Signature: hex.EncodeToString(h.Signature[:]),
	}
}

// printHeader writes every field of h, one a line, then the extra lines
// (name, value) aligned with them.
func printHeader(w io.Writer, h *firmware.Header, extra ...[2]string) error {
	j := headerJSON(h)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range [][2]string{
		{"magic", j.Magic},
		{"format version", fmt.Sprint(j.FormatVersion)},
		{"signed length", fmt.Sprintf("%d octets", j.SignedLength)},
		{"flags", fmt.Sprintf("%#08x", j.Flags)},
		{"version", j.Version},
		{"security counter", fmt.Sprint(j.SecurityCounter)},
		{"payload length", fmt.Sprintf("%d octets", j.PayloadLength)},
		{"payload SHA-256", j.PayloadSHA256},
		{"key id", j.KeyID},
		{"board", j.Board},
		{"part", j.Part},
		{"PCI IDs", j.PCIIDs + " (vendor:device:subsystem vendor:subsystem device)"},
		{"build hash", j.BuildHash},
		{"signature", j.Signature},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", f[0], f[1])
	}
	for _, f := range extra {
		fmt.Fprintf(tw, "%s\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}

// readImage reads an image file whole. A file longer than any image can
// be is refused before it is read.
func readImage(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v): give an image file (rnic-loader sign writes one)", path, fi.Mode().Type())
	}
	if max := int64(firmware.HeaderSize) + firmware.MaxPayload; fi.Size() > max {
		return nil, &firmware.Error{Kind: firmware.Oversized, Field: "image",
			Msg: fmt.Sprintf("%s is %d octets, more than any image (%d): not an RNIC image", path, fi.Size(), max)}
	}
	return io.ReadAll(f)
}

// trustFlag is --trusted.
const trustFlagHelp = "the trust set: a directory of public keys (*.pub, *.pem) or one file listing them (default: $" + keyfile.EnvTrusted +
	", else $XDG_CONFIG_HOME/rnic/trusted-keys, else " + keyfile.SystemTrustDir + ")"

// loadTrust finds and loads the trust set (keyfile.Locator's order). With
// optional, no trust set configured anywhere is not an error: the set is
// nil.
func loadTrust(flag string, optional bool) (ts *firmware.TrustSet, where string, err error) {
	path, from, err := keyfile.Locator{Flag: flag, Getenv: os.Getenv, SystemDir: keyfile.SystemTrustDir}.Locate()
	var nc *keyfile.NotConfiguredError
	if optional && errors.As(err, &nc) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	where = path
	if from != "--trusted" {
		where += " (from " + from + ")"
	}
	if ts, err = keyfile.LoadTrust(path); err != nil && errors.Is(err, fs.ErrNotExist) && from != "default" {
		err = fmt.Errorf("%w (%s names it)", err, from)
	}
	return ts, where, err
}

// refusalJSON is why an image was refused, in verify's and inspect's JSON.
type refusalJSON struct {
	Kind    string `json:"kind"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

func refusalOf(err error) *refusalJSON {
	var fe *firmware.Error
	if errors.As(err, &fe) {
		return &refusalJSON{Kind: fe.Kind.String(), Field: fe.Field, Message: fe.Error()}
	}
	return &refusalJSON{Kind: "error", Field: "", Message: err.Error()}
}
