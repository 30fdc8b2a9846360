package ddp

import "testing"

func BenchmarkParseHeader(b *testing.B) {
	for _, h := range []Header{
		{Tagged: true, Last: true, DV: 1, ULPCtrl: 0x40, STag: 0x100, TO: 0x1000},
		{Last: true, DV: 1, ULPCtrl: 0x43, QN: 0, MSN: 1},
	} {
		seg := append(h.Append(nil), make([]byte, 64)...)
		name := "untagged"
		if h.Tagged {
			name = "tagged"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := ParseHeader(seg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendHeader(b *testing.B) {
	buf := make([]byte, 0, 32)
	for _, h := range []Header{
		{Tagged: true, Last: true, DV: 1, ULPCtrl: 0x40, STag: 0x100, TO: 0x1000},
		{Last: true, DV: 1, ULPCtrl: 0x43, QN: 0, MSN: 1},
	} {
		name := "untagged"
		if h.Tagged {
			name = "tagged"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				buf = h.Append(buf[:0])
			}
		})
	}
}

// BenchmarkPlace64KiB places 64 KiB: as one tagged segment, as a tagged
// message cut into segments for a 1460-octet MULPDU (Segmenter + Receive,
// the per-segment cost of the checks), and as an untagged message into a
// posted buffer.
func BenchmarkPlace64KiB(b *testing.B) {
	const size = 64 << 10
	msg := make([]byte, size)
	newSink := func() (*Sink, uint32) {
		tab := NewSTagTable()
		stag := MakeSTag(1, 1)
		must(b, tab.Register(Region{STag: stag, PD: 1, Access: RemoteWrite, Base: 0, Buf: make([]byte, size)}))
		return NewSink(1, 1, tab, 1), stag
	}
	b.Run("tagged/1-segment", func(b *testing.B) {
		s, stag := newSink()
		h := Header{Tagged: true, Last: true, DV: 1, STag: stag}
		b.SetBytes(size)
		for b.Loop() {
			if _, err := s.Receive(&h, msg, RemoteWrite); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tagged/MULPDU-1460", func(b *testing.B) {
		s, stag := newSink()
		b.SetBytes(size)
		for b.Loop() {
			seg, err := NewSegmenter(Header{Tagged: true, DV: 1, STag: stag}, msg, 1460)
			if err != nil {
				b.Fatal(err)
			}
			for {
				h, p, ok := seg.Next()
				if !ok {
					break
				}
				if _, err := s.Receive(&h, p, RemoteWrite); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("untagged/MULPDU-1460", func(b *testing.B) {
		s, _ := newSink()
		buf := make([]byte, size)
		b.SetBytes(size)
		msn := uint32(FirstMSN)
		for b.Loop() {
			if _, err := s.Post(0, buf, 0); err != nil {
				b.Fatal(err)
			}
			seg, err := NewSegmenter(Header{DV: 1, QN: 0, MSN: msn}, msg, 1460)
			if err != nil {
				b.Fatal(err)
			}
			for {
				h, p, ok := seg.Next()
				if !ok {
					break
				}
				if _, err := s.Receive(&h, p, 0); err != nil {
					b.Fatal(err)
				}
			}
			msn++
		}
	})
}
