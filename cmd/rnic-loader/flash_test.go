package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/firmware"
	"github.com/openrnic/rnic/firmware/keyfile"
	"github.com/openrnic/rnic/internal/simbuild"
)

var flashPCI = firmware.PCIIDs{Vendor: 0x1af4, Device: 0x10fe, SubVendor: 0x1af4, SubDevice: 0x0001}

func flashKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func signed(t *testing.T, k ed25519.PrivateKey, h firmware.Header, n int) []byte {
	t.Helper()
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i * 13)
	}
	if h.Board == "" {
		h.Board = "sim"
	}
	if h.Part == "" {
		h.Part = "verilator"
	}
	if h.PCI == (firmware.PCIIDs{}) {
		h.PCI = flashPCI
	}
	im, err := firmware.Sign(k, h, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := im.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFlashTamperMatrix runs every image the firmware package refuses
// through rnic-loader flash on the simulated device: each is refused with
// a message naming the problem and exit status 1, and not one octet of
// the flash model's contents changes. Then a good image flashes.
func TestFlashTamperMatrix(t *testing.T) {
	t.Setenv("RNIC_SIM", simbuild.Binary(t))
	t.Setenv("RNIC_FLASH_TPP", "400")
	t.Setenv("RNIC_FLASH_TSE", "2000")
	dir := t.TempDir()
	k, other, stranger := flashKey(1), flashKey(2), flashKey(3)
	trustDir := filepath.Join(dir, "trusted")
	if err := os.Mkdir(trustDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]ed25519.PrivateKey{"release.pub": k, "other.pub": other} {
		if err := keyfile.WritePublic(filepath.Join(trustDir, name), key.Public().(ed25519.PublicKey), false); err != nil {
			t.Fatal(err)
		}
	}
	loose := filepath.Join(dir, "loose.pub")
	if err := keyfile.WritePublic(loose, k.Public().(ed25519.PublicKey), false); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o666); err != nil {
		t.Fatal(err)
	}
	// The device: golden 1.0.0 with security counter 2, trusting k only.
	fl := bytes.Repeat([]byte{0xff}, flash.Size)
	golden := signed(t, k, firmware.Header{SecurityCounter: 2}, 500)
	if err := flash.WriteSlot(fl, flash.Golden, golden[:flash.HeaderLen], golden[flash.HeaderLen:], 0,
		[][32]byte{sha256.Sum256(k.Public().(ed25519.PublicKey))}); err != nil {
		t.Fatal(err)
	}
	flashFile := filepath.Join(dir, "dev.flash")
	if err := os.WriteFile(flashFile, fl, 0o644); err != nil {
		t.Fatal(err)
	}
	good := signed(t, k, firmware.Header{Version: firmware.Version{Major: 1, Minor: 1}, SecurityCounter: 2}, 3000)
	flip := func(off int, bit byte) []byte {
		b := bytes.Clone(good)
		b[off] ^= bit
		return b
	}
	cases := []struct {
		name    string
		img     []byte
		trusted string
		want    string
	}{
		{"wrong signature", flip(0x100+5, 0x01), "", "signature: does not verify"},
		{"unknown key", signed(t, stranger, firmware.Header{SecurityCounter: 2}, 3000), "", "is not a key of the trust set"},
		{"key the device does not list", signed(t, other, firmware.Header{SecurityCounter: 2}, 3000), "", "not by the device"},
		{"wrong board", signed(t, k, firmware.Header{SecurityCounter: 2, Board: "au250"}, 3000), "", "board"},
		{"wrong part", signed(t, k, firmware.Header{SecurityCounter: 2, Part: "xcu250-figd2104-2l-e"}, 3000), "", "part"},
		{"wrong PCI IDs", signed(t, k, firmware.Header{SecurityCounter: 2, PCI: firmware.PCIIDs{Vendor: 0x10ee, Device: 0x903f, SubVendor: 0x10ee, SubDevice: 7}}, 3000), "", "PCI"},
		{"rollback", signed(t, k, firmware.Header{SecurityCounter: 1}, 3000), "", "security counter"},
		{"truncated", good[:len(good)-1], "", "missing"},
		{"oversized", append(bytes.Clone(good), 0), "", "follow the payload"},
		{"header bit flip (version)", flip(0x0c, 0x02), "", "signature"},
		{"header bit flip (payload length)", flip(0x18, 0x01), "", "signature"},
		{"header bit flip (board)", flip(0x60, 0x20), "", "signature"},
		{"header bit flip (reserved)", flip(0xb0, 0x01), "", "reserved"},
		{"payload bit flip", flip(flash.HeaderLen+1000, 0x80), "", "SHA-256"},
		{"loose trust file permissions", good, loose, "loose.pub"},
	}
	before, err := os.ReadFile(flashFile)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".img")
			if err := os.WriteFile(img, c.img, 0o644); err != nil {
				t.Fatal(err)
			}
			trusted := trustDir
			if c.trusted != "" {
				trusted = c.trusted
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"flash", "--flash-file", flashFile, "--trusted", trusted, img}, &out, &errb)
			if code != exitFailure {
				t.Fatalf("case %d: exit %d, want %d; stdout %s stderr %s", i, code, exitFailure, out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), c.want) {
				t.Fatalf("stderr %q does not name the problem (%q)", errb.String(), c.want)
			}
			after, err := os.ReadFile(flashFile)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatal("the flash contents changed")
			}
			t.Logf("refused: %s", strings.TrimSpace(errb.String()))
		})
	}
	// The good image flashes, boots on trial and is confirmed in the same session.
	img := filepath.Join(dir, "good.img")
	if err := os.WriteFile(img, good, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"flash", "--flash-file", flashFile, "--trusted", trustDir, "--confirm", "--json", img}, &out, &errb); code != 0 {
		t.Fatalf("good image: exit %d: %s", code, errb.String())
	}
	var fj flashJSON
	if err := json.Unmarshal(out.Bytes(), &fj); err != nil || fj.Slot != "A" || fj.Boot.Reason != "trial" || !fj.Boot.Confirmed {
		t.Fatalf("flash --json: %s, %v", out.String(), err)
	}
	out.Reset()
	if code := run(context.Background(), []string{"boot-status", "--flash-file", flashFile, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("boot-status: exit %d: %s", code, errb.String())
	}
	var bj bootJSON
	if err := json.Unmarshal(out.Bytes(), &bj); err != nil || bj.Slot != "A" || bj.Reason != "confirmed" || bj.Version != "1.1.0" {
		t.Fatalf("boot-status --json after flash --confirm: %s, %v", out.String(), err)
	}
	out.Reset()
	if code := run(context.Background(), []string{"confirm", "--flash-file", flashFile}, &out, &errb); code != exitFailure ||
		!strings.Contains(errb.String(), "not on trial") {
		t.Fatalf("confirm of a confirmed image: exit %d, %s", code, errb.String())
	}
}
