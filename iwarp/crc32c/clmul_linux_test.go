package crc32c

import (
	"math/rand/v2"
	"syscall"
	"testing"
)

// TestCLMULGuardPages puts the buffer right after and right before
// inaccessible pages: the folding path must not read a byte outside p.
func TestCLMULGuardPages(t *testing.T) {
	needCLMUL(t)
	page := syscall.Getpagesize()
	const dataPages = 3
	mem, err := syscall.Mmap(-1, 0, (dataPages+2)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(mem)
	data := mem[page : (dataPages+1)*page]
	r := rand.New(rand.NewPCG(13, 14))
	copy(data, randBytes(r, len(data)))
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[(dataPages+1)*page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= len(data); n++ {
		if n > 3*page/2 && n%61 != 0 && n != len(data) {
			continue
		}
		crc := r.Uint32()
		for _, p := range [][]byte{data[:n], data[len(data)-n:]} {
			if got, want := updateCLMUL(crc, p), crc32Ref(crc, p); got != want {
				t.Fatalf("len %d at offset %d: %#08x, want %#08x", n, len(data)-cap(p), got, want)
			}
		}
	}
}
