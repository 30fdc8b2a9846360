package main

import (
	"bytes"
	"math/rand/v2"
)

// pattern is the data a bench moves: message i carries
// buf[off(i) : off(i)+size], a window into one pseudo-random buffer. Both
// ends derive it from the same seed, so the receiver verifies every octet
// with one memory compare and the sender sends straight from the buffer.
type pattern struct {
	buf  []byte
	size int
}

const patternSlack = 4096

func newPattern(seed uint64, size int) *pattern {
	buf := make([]byte, size+patternSlack)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i+8 <= len(buf); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			buf[i+j] = byte(v >> (8 * j))
		}
	}
	return &pattern{buf: buf, size: size}
}

// off staggers messages so that a message landing in the wrong place, or
// twice, does not compare equal.
func (p *pattern) off(i uint64) int { return int((i * 4093) % patternSlack) }

// msg returns the contents of message i.
func (p *pattern) msg(i uint64) []byte {
	o := p.off(i)
	return p.buf[o : o+p.size]
}

// check returns how many octets of got differ from message i.
func (p *pattern) check(i uint64, got []byte) int {
	want := p.msg(i)[:len(got)]
	if bytes.Equal(got, want) {
		return 0
	}
	n := 0
	for k := range got {
		if got[k] != want[k] {
			n++
		}
	}
	return n
}
