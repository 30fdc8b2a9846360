package firmware

import (
	"strings"
	"testing"
)

// TestCheckVersionAndCounter: the security counter, not the version,
// decides what a device takes back. A lower version with an equal or
// higher counter is a downgrade the signer allowed.
func TestCheckVersionAndCounter(t *testing.T) {
	target := vectorTarget()
	target.MinSecurityCounter = 5
	cases := []struct {
		version Version
		counter uint32
		ok      bool
	}{
		{Version{2, 0, 0, 0}, 5, true},  // newer, same counter
		{Version{0, 9, 0, 0}, 5, true},  // older version, same counter: allowed downgrade
		{Version{0, 9, 0, 0}, 6, true},  // older version, higher counter
		{Version{9, 9, 9, 9}, 4, false}, // newest version, counter below the floor: rollback
		{Version{1, 0, 0, 0}, 0, false},
	}
	for _, c := range cases {
		h := vectorHeader()
		h.Version, h.SecurityCounter, h.PayloadLen = c.version, c.counter, 1
		err := Check(&h, target)
		if (err == nil) != c.ok {
			t.Errorf("version %v counter %d against floor 5: %v, want ok=%v", c.version, c.counter, err, c.ok)
		}
		if err != nil && KindOf(err) != Rollback {
			t.Errorf("version %v counter %d: refused as %v, want a rollback", c.version, c.counter, KindOf(err))
		}
	}
}

// TestCheckIncompleteTarget: a target missing its board, part or PCI IDs
// is refused, never checked in part.
func TestCheckIncompleteTarget(t *testing.T) {
	h := vectorHeader()
	h.PayloadLen = 1
	cases := []struct {
		name string
		edit func(*Target)
		want string
	}{
		{"board", func(t *Target) { t.Board = "" }, "target board: not given"},
		{"part", func(t *Target) { t.Part = "" }, "target part: not given"},
		{"no PCI IDs", func(t *Target) { t.PCIIDs = PCIIDs{} }, "target PCI IDs: 0000:0000:0000:0000"},
		{"vendor ffff", func(t *Target) { t.Vendor = 0xffff }, "vendor IDs 0000 and ffff name no vendor"},
		{"subsystem vendor 0", func(t *Target) { t.SubVendor = 0 }, "target PCI IDs"},
	}
	for _, c := range cases {
		tg := vectorTarget()
		c.edit(&tg)
		err := Check(&h, tg)
		if KindOf(err) != BadTarget || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a bad target saying %q", c.name, err, c.want)
		}
	}
	// MaxPayload 0 leaves the size unchecked.
	tg := vectorTarget()
	tg.MaxPayload = 0
	h.PayloadLen = MaxPayload
	if err := Check(&h, tg); err != nil {
		t.Errorf("MaxPayload 0: %v", err)
	}
}

func TestKindNames(t *testing.T) {
	seen := map[string]Kind{}
	for k := Truncated; k <= NoTrustedKeys; k++ {
		s := k.String()
		if strings.HasPrefix(s, "kind(") {
			t.Errorf("kind %d has no name", k)
		}
		if o, dup := seen[s]; dup {
			t.Errorf("kinds %d and %d are both %q", o, k, s)
		}
		seen[s] = k
	}
	if got := Kind(200).String(); got != "kind(200)" {
		t.Errorf("unknown kind: %s", got)
	}
}
