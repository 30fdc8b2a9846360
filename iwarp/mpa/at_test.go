package mpa

import (
	"bytes"
	"testing"
)

// A Framer and a Receiver started at a sequence number past the marker
// base frame and take what ones started at the base do after the same
// prefix: the handover of a half connection from a host's software path to
// a device (docs/device.md, QP_RTS).
func TestFramerReceiverAt(t *testing.T) {
	const base = 0xffff_fe00 // the prefix crosses a marker and the wrap
	for _, markers := range []bool{false, true} {
		f := NewFramer(markers, true, base)
		first, err := f.AppendFPDU(nil, []byte("hdr"), bytes.Repeat([]byte{7}, 700))
		if err != nil {
			t.Fatal(err)
		}
		at := NewFramerAt(markers, true, base, f.Seq())
		want, _ := f.AppendFPDU(nil, []byte("second"), bytes.Repeat([]byte{9}, 900))
		got, _ := at.AppendFPDU(nil, []byte("second"), bytes.Repeat([]byte{9}, 900))
		if !bytes.Equal(got, want) || at.Seq() != f.Seq() {
			t.Fatalf("markers %v: NewFramerAt framed differently", markers)
		}
		r := NewReceiverAt(markers, true, base, base+uint32(len(first)))
		var n int
		if err := r.Feed(got, func(_ uint32, u []byte) error { n = len(u); return nil }); err != nil || n != 906 {
			t.Fatalf("markers %v: NewReceiverAt took %d octets, %v", markers, n, err)
		}
		// A Receiver that believes the FPDU starts at the base (with
		// markers on: a marker there) does not deliver it.
		if markers {
			r = NewReceiverAt(markers, true, base, base)
			delivered := false
			r.Feed(got, func(uint32, []byte) error { delivered = true; return nil })
			if delivered {
				t.Fatal("a Receiver placed at the base delivered the second FPDU")
			}
		}
	}
}
