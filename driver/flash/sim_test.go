package flash_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrnic/rnic/driver/flash"
	"github.com/openrnic/rnic/driver/regmap"
	"github.com/openrnic/rnic/driver/simdev"
	"github.com/openrnic/rnic/internal/simbuild"
)

// Short busy times keep the tests quick; the controller polls the part
// whatever they are (the datasheet's are the sim's defaults).
const (
	testTPP = 600
	testTSE = 3000
)

// startSim starts the simulated device on the flash file path (created
// erased if missing) and opens its flash block.
func startSim(t testing.TB, path string) (*simdev.Device, *flash.Controller) {
	t.Helper()
	return startSimConfig(t, simdev.Config{Flash: path})
}

func startSimConfig(t testing.TB, cfg simdev.Config) (*simdev.Device, *flash.Controller) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg.Binary, cfg.FlashTPP, cfg.FlashTSE = simbuild.Binary(t), testTPP, testTSE
	d, err := simdev.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	m, err := regmap.Walk(d, d.BARSize())
	if err != nil {
		t.Fatal(err)
	}
	c, err := flash.Open(d, m)
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestControllerAgainstModel programs, reads and erases through the
// controller, single-line and quad, and checks every octet against the
// flash model's backing file (the part's contents as the model holds them).
func TestControllerAgainstModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flash.bin")
	d, c := startSim(t, path)
	ctx := ctxT(t)
	id, err := c.JEDECID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id != [3]byte{0xef, 0x40, 0x18} {
		t.Fatalf("JEDEC ID % x, want ef 40 18 (the model's W25Q128)", id[:])
	}
	if g := c.Geometry(); !g.Quad || g.Protect != flash.SlotSize {
		t.Fatalf("geometry %+v: want quad, golden protected up to %#x", g, flash.SlotSize)
	}
	for _, quad := range []bool{false, true} {
		c.Quad = quad
		base := flash.SlotA.Base() + 0x3000
		if quad {
			base += flash.SectorSize
		}
		if err := c.Erase(ctx, base); err != nil {
			t.Fatal(err)
		}
		// 700 octets from 0x85 into a page: four page programs, partial at each end.
		data := make([]byte, 700)
		for i := range data {
			data[i] = byte(i*7 + 3)
		}
		at := base + 0x85
		if err := c.Program(ctx, at, data); err != nil {
			t.Fatal(err)
		}
		got, err := c.Read(ctx, at-5, len(data)+10)
		if err != nil {
			t.Fatal(err)
		}
		want := append(append(bytes.Repeat([]byte{0xff}, 5), data...), bytes.Repeat([]byte{0xff}, 5)...)
		if !bytes.Equal(got, want) {
			t.Fatalf("quad=%v: read back differs from what was programmed", quad)
		}
		file := readFile(t, path)
		if !bytes.Equal(file[at-5:int(at)+len(data)+5], want) {
			t.Fatalf("quad=%v: the model's contents differ from what was programmed", quad)
		}
		// A program only clears bits: 0x0f over 0xf0... reads 0x00.
		if err := c.Program(ctx, at, []byte{0x0f}); err != nil {
			t.Fatal(err)
		}
		if b, _ := c.Read(ctx, at, 1); b[0] != data[0]&0x0f {
			t.Fatalf("quad=%v: programming 0x0f over %#02x read %#02x, want %#02x", quad, data[0], b[0], data[0]&0x0f)
		}
		if err := c.Erase(ctx, base); err != nil {
			t.Fatal(err)
		}
		file = readFile(t, path)
		if !bytes.Equal(file[base:base+flash.SectorSize], bytes.Repeat([]byte{0xff}, flash.SectorSize)) {
			t.Fatalf("quad=%v: the sector is not erased in the model after ERASE", quad)
		}
	}
	st, err := c.PartStatus(ctx)
	if err != nil || st != 0 {
		t.Fatalf("part status %#02x, %v: want 0 (not busy, write enable clear)", st, err)
	}
	fs, err := d.FlashStats()
	if err != nil {
		t.Fatal(err)
	}
	if fs.Erases != 4 || fs.Programs != 10 {
		t.Fatalf("the model counted %d erases and %d programs, want 4 and 10", fs.Erases, fs.Programs)
	}
}

// TestGoldenProtected: the controller refuses to erase or program the
// golden slot from the host, and the flash does not change.
func TestGoldenProtected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flash.bin")
	d, c := startSim(t, path)
	ctx := ctxT(t)
	before := readFile(t, path)
	for _, a := range []uint32{0, flash.SectorSize, flash.SlotSize - flash.SectorSize} {
		if err := c.Erase(ctx, a); !errors.Is(err, flash.ErrProtected) {
			t.Fatalf("erase at %#x: %v, want PROTECTED", a, err)
		}
		if err := c.Program(ctx, a+16, []byte{0, 0, 0, 0}); !errors.Is(err, flash.ErrProtected) {
			t.Fatalf("program at %#x: %v, want PROTECTED", a, err)
		}
	}
	var ce *flash.CommandError
	if err := c.Erase(ctx, flash.SlotA.Base()+1); !errors.As(err, &ce) || ce.Code != flash.CodeBadArg {
		t.Fatalf("erase of an unaligned address: %v, want BAD_ARG", err)
	}
	fs, err := d.FlashStats()
	if err != nil {
		t.Fatal(err)
	}
	if fs.Ops != 0 {
		t.Fatalf("the flash model saw %d programs or erases, want none", fs.Ops)
	}
	if !bytes.Equal(before, readFile(t, path)) {
		t.Fatal("the flash contents changed")
	}
}
