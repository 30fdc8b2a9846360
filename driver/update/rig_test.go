package update_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/simdev"
	"github.com/openrnic/rnic/firmware"
	"github.com/openrnic/rnic/internal/simbuild"
)

// Short busy times keep the matrices quick; the controller polls the part
// whatever they are (the sim's defaults are the datasheet's).
const (
	testTPP = 400
	testTSE = 2000
)

// The device the golden image says the simulated device is.
var simPCI = firmware.PCIIDs{Vendor: 0x1af4, Device: 0x10fe, SubVendor: 0x1af4, SubDevice: 0x0001}

func key(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

// image signs a payload of n octets (a pattern from fill) for the sim.
func image(t testing.TB, priv ed25519.PrivateKey, minor uint8, counter uint32, n int, fill byte) []byte {
	t.Helper()
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i) ^ fill
	}
	im, err := firmware.Sign(priv, firmware.Header{Version: firmware.Version{Major: 1, Minor: minor, Build: uint32(fill)},
		SecurityCounter: counter, Board: "sim", Part: "verilator", PCI: simPCI}, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := im.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func trust(t testing.TB, privs ...ed25519.PrivateKey) *firmware.TrustSet {
	ts := firmware.NewTrustSet()
	for _, p := range privs {
		if _, err := ts.Add(p.Public().(ed25519.PublicKey), "test"); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

func keyID(p ed25519.PrivateKey) [32]byte { return sha256.Sum256(p.Public().(ed25519.PublicKey)) }

// provision writes a flash file with the golden image (as a factory's
// programmer would) and its key list.
func provision(t testing.TB, path string, golden []byte, keys ...ed25519.PrivateKey) {
	t.Helper()
	fl := bytes.Repeat([]byte{0xff}, flash.Size)
	var ids [][32]byte
	for _, k := range keys {
		ids = append(ids, keyID(k))
	}
	if err := flash.WriteSlot(fl, flash.Golden, golden[:flash.HeaderLen], golden[flash.HeaderLen:], 0, ids); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fl, 0o644); err != nil {
		t.Fatal(err)
	}
}

type dev struct {
	sim *simdev.Device
	c   *flash.Controller
}

// power starts the simulated device on the flash file: a power-on (the
// boot logic runs).
func power(t testing.TB, path string) dev {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := simdev.Start(ctx, simdev.Config{Binary: simbuild.Binary(t), Flash: path, FlashTPP: testTPP, FlashTSE: testTSE})
	if err != nil {
		t.Fatal(err)
	}
	m, err := regmap.Walk(d, d.BARSize())
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	c, err := flash.Open(d, m)
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	return dev{d, c}
}

func (d dev) off(t testing.TB) {
	t.Helper()
	if err := d.sim.Close(); err != nil {
		t.Fatal(err)
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func boot(t testing.TB, d dev) flash.BootStatus {
	t.Helper()
	b, err := d.c.Boot(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	if err := os.WriteFile(to, readFile(t, from), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tmp(t testing.TB, name string) string { return filepath.Join(t.TempDir(), name) }

func osWriteFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
