package regmap

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver/regs"
)

// fakeBAR is a BAR in memory: every register the generated map describes,
// with the values a device would show, and a count of reads so that a test
// can tell a walk that ended from one that ran on.
type fakeBAR struct {
	size  uint32
	words map[uint32]uint32
	reads int
}

// barSize is the BAR of a device built from this map: 128 KiB (the
// doorbells end at 0x18000).
const barSize = 0x20000

func goodBAR() *fakeBAR {
	f := &fakeBAR{size: barSize, words: map[uint32]uint32{}}
	for i, b := range regs.Blocks {
		next := uint32(0)
		if i+1 < len(regs.Blocks) {
			next = regs.Blocks[i+1].Base
		}
		f.words[b.Base+regs.HdrType] = b.Type
		f.words[b.Base+regs.HdrVersion] = b.VersionMajor<<regs.VersionMajorShift | b.VersionMinor
		f.words[b.Base+regs.HdrNext] = next
	}
	f.words[regs.IDDeviceID] = regs.IDDeviceIDValue
	f.words[regs.IDMapVersion] = regs.IDMapVersionMajorValue<<regs.IDMapVersionMajorShift |
		regs.IDMapVersionMinorValue<<regs.IDMapVersionMinorShift
	f.words[regs.IDBuildHash] = 0x2eef894a
	f.words[regs.IDDataWidth] = 512
	f.words[regs.IDCapConns] = 1024
	f.words[regs.IDCapSTags] = 4096
	f.words[regs.IDCapCQs] = 256
	f.words[regs.IDCapVectors] = 16
	f.words[regs.IDCapWindows] = 8
	f.words[regs.IDCapQueues] = 10<<regs.IDCapQueuesSQLog2Shift | 11<<regs.IDCapQueuesRQLog2Shift |
		12<<regs.IDCapQueuesCQLog2Shift
	return f
}

func (f *fakeBAR) Read32(off uint32) (uint32, error) {
	f.reads++
	if f.reads > 10000 {
		panic("regmap: the walk does not end")
	}
	if off%4 != 0 || off >= f.size {
		return 0, fmt.Errorf("fake BAR: read at %#x outside the BAR", off)
	}
	return f.words[off], nil
}

func TestWalkGoodDevice(t *testing.T) {
	f := goodBAR()
	f.words[regs.CountersRxOctets] = 0x89abcdef
	f.words[regs.CountersRxOctets+4] = 0x01234567
	d, err := Walk(f, f.size)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Blocks) != len(regs.Blocks) {
		t.Fatalf("walked %d blocks, the map has %d", len(d.Blocks), len(regs.Blocks))
	}
	for i, b := range d.Blocks {
		want := regs.Blocks[i]
		if !b.Known || b.Name != want.Name || b.Base != want.Base || b.Type != want.Type {
			t.Errorf("block %d: %+v, want %+v", i, b, want)
		}
	}
	if d.DataWidth != 512 || d.Conns != 1024 || d.STags != 4096 || d.BuildHash != 0x2eef894a ||
		d.SQLog2 != 10 || d.RQLog2 != 11 || d.CQLog2 != 12 || d.MapMajor != regs.IDMapVersionMajorValue ||
		d.CQs != 256 || d.Vectors != 16 || d.Windows != 8 {
		t.Errorf("ID block read as %+v", d)
	}
	if d.AdminBase() != regs.AdminBase || d.VectorsBase() != regs.VectorsBase || d.DoorbellsBase() != regs.DoorbellsBase {
		t.Errorf("block bases admin %#x vectors %#x doorbells %#x", d.AdminBase(), d.VectorsBase(), d.DoorbellsBase())
	}
	cs, err := d.Counters(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != len(regs.Counters) {
		t.Fatalf("%d counters, the map has %d", len(cs), len(regs.Counters))
	}
	for _, c := range cs {
		want := uint64(0)
		if c.Name == "rx_octets" {
			want = 0x0123456789abcdef
		}
		if c.Value != want {
			t.Errorf("counter %s = %#x, want %#x", c.Name, c.Value, want)
		}
	}
}

// A minor version above the driver's only adds registers: accepted.
func TestWalkNewerMinorAccepted(t *testing.T) {
	f := goodBAR()
	f.words[regs.CountersBase+regs.HdrVersion] = regs.CountersVersionMajor<<16 | 7
	f.words[regs.IDMapVersion] = regs.IDMapVersionMajorValue<<16 | 3
	d, err := Walk(f, f.size)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := d.Block(regs.CountersType); b.VersionMinor != 7 {
		t.Errorf("counters minor version %d, want 7", b.VersionMinor)
	}
}

// A block of a type the driver does not know is skipped, and the walk goes
// on through its next pointer.
func TestWalkUnknownTypeSkipped(t *testing.T) {
	f := goodBAR()
	const unknown, at = 0x12345678, 0x800
	f.words[regs.CountersBase+regs.HdrNext] = at
	f.words[at+regs.HdrType] = unknown
	f.words[at+regs.HdrVersion] = 9 << 16
	f.words[at+regs.HdrNext] = regs.AdminBase
	d, err := Walk(f, f.size)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Blocks) != len(regs.Blocks)+1 {
		t.Fatalf("walked %d blocks, want the map's %d and the unknown one", len(d.Blocks), len(regs.Blocks))
	}
	u := d.Blocks[2]
	if u.Known || u.Type != unknown || u.Base != at || u.Name != "" {
		t.Errorf("unknown block listed as %+v", u)
	}
	if d.AdminBase() != regs.AdminBase {
		t.Errorf("the walk after the unknown block found the admin block at %#x", d.AdminBase())
	}
}

func refused(t *testing.T, err error, parts ...string) {
	t.Helper()
	var r *RefusedError
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a RefusedError", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("message %q does not say %q", err, p)
		}
	}
	if r.Action == "" {
		t.Errorf("message %q says nothing to do", err)
	}
}

func TestWalkRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(f *fakeBAR)
		parts []string
	}{
		{"unknown block major", func(f *fakeBAR) {
			f.words[regs.CountersBase+regs.HdrVersion] = (regs.CountersVersionMajor+1)<<16 | 2
		}, []string{`block "counters"`, fmt.Sprintf("version %d.2", regs.CountersVersionMajor+1),
			fmt.Sprintf("knows version %d.x", regs.CountersVersionMajor), "use a driver"}},
		{"unknown ID block major", func(f *fakeBAR) {
			f.words[regs.IDBase+regs.HdrVersion] = 5 << 16
		}, []string{`block "id"`, "version 5.0", "knows version 1.x"}},
		{"unknown map major", func(f *fakeBAR) {
			f.words[regs.IDMapVersion] = (regs.IDMapVersionMajorValue + 1) << 16
		}, []string{"register map version 2.0", "knows version 1.x"}},
		{"not an openrnic device", func(f *fakeBAR) {
			f.words[regs.IDDeviceID] = 0x10ee9038
		}, []string{"device ID 0x10ee9038", "not an openrnic device"}},
		{"no ID block at 0", func(f *fakeBAR) {
			f.words[regs.IDBase+regs.HdrType] = 0xffffffff
		}, []string{"offset 0 has type 0xffffffff", "check that the BAR"}},
		{"loop through an unknown block", func(f *fakeBAR) {
			// (A next pointer of 0 ends the chain, so a loop goes back to
			// a later block.)
			f.words[regs.CountersBase+regs.HdrNext] = 0x800
			f.words[0x800+regs.HdrType] = 0x0badb10c
			f.words[0x800+regs.HdrNext] = regs.CountersBase
		}, []string{"block at 0x800", "next pointer 0x100", "loop"}},
		{"self loop", func(f *fakeBAR) {
			f.words[regs.CountersBase+regs.HdrNext] = regs.CountersBase
		}, []string{"next pointer 0x100", "loop"}},
		{"pointer outside the BAR", func(f *fakeBAR) {
			f.words[regs.IDBase+regs.HdrNext] = 0x40000000
		}, []string{"next pointer 0x40000000", "outside the 131072-octet BAR"}},
		{"pointer at the BAR's last word", func(f *fakeBAR) {
			f.words[regs.IDBase+regs.HdrNext] = barSize - 4
		}, []string{"next pointer 0x1fffc", "outside"}},
		{"misaligned pointer", func(f *fakeBAR) {
			f.words[regs.IDBase+regs.HdrNext] = 0x102
		}, []string{"next pointer 0x102", "aligned"}},
		{"counters block missing", func(f *fakeBAR) {
			f.words[regs.IDBase+regs.HdrNext] = 0
		}, []string{"no counters (type 0x524e4354), no admin (type 0x524e4144), no vectors",
			"no doorbells (type 0x524e4442) block"}},
		{"admin block missing", func(f *fakeBAR) {
			f.words[regs.CountersBase+regs.HdrNext] = regs.VectorsBase
		}, []string{"the chain has no admin (type 0x524e4144) block"}},
		{"more QPs than doorbells", func(f *fakeBAR) {
			f.words[regs.IDCapConns] = 8192
		}, []string{"8192 connections (QPs)", "SQ_PI and RQ_PI for 4096"}},
		{"more CQs than doorbells", func(f *fakeBAR) {
			f.words[regs.IDCapCQs] = 4097
		}, []string{"4097 completion queues", "CQ_CI for 4096"}},
		{"more vectors than registers", func(f *fakeBAR) {
			f.words[regs.IDCapVectors] = 32
		}, []string{"32 interrupt vectors", "registers for 16"}},
		{"no vector", func(f *fakeBAR) {
			f.words[regs.IDCapVectors] = 0
		}, []string{"0 interrupt vectors", "at least 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := goodBAR()
			tc.edit(f)
			d, err := Walk(f, f.size)
			if err == nil {
				t.Fatalf("walk accepted the device: %+v", d)
			}
			refused(t, err, tc.parts...)
		})
	}
}

// A known block placed where it would run past the BAR is refused before
// any of its registers is read.
func TestWalkBlockPastBAR(t *testing.T) {
	f := goodBAR()
	f.size = regs.CountersBase + regs.CountersSize - 4
	_, err := Walk(f, f.size)
	refused(t, err, `block "counters"`, "runs past the end")
}

func TestWalkReadError(t *testing.T) {
	f := goodBAR()
	_, err := Walk(f, 0x10)
	refused(t, err, "smaller than the ID block")
	f.size = 0x10 // the device answers less than the caller said
	_, err = Walk(f, barSize)
	if err == nil || !strings.Contains(err.Error(), "read at 0x") {
		t.Fatalf("err = %v, want the failed read named", err)
	}
}
