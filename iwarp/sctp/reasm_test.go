package sctp

import (
	"bytes"
	"testing"
)

func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// TestReassemblyAnyOrder feeds the fragments of two messages (4 and 2
// fragments, consecutive TSNs) in every order and checks that each is
// delivered once, whole, as soon as its last fragment is in, and that no
// run is left behind.
func TestReassemblyAnyOrder(t *testing.T) {
	cfg, _ := fastConfig().withDefaults()
	msgA := []byte("aaaaBBBBccccDDD")
	msgB := []byte("xyzzy!")
	frags := []dataChunk{
		{Flags: flagBegin | flagUnordered, TSN: 10, Stream: 1, PPID: 1, Data: msgA[0:4]},
		{Flags: flagUnordered, TSN: 11, Stream: 1, PPID: 1, Data: msgA[4:8]},
		{Flags: flagUnordered, TSN: 12, Stream: 1, PPID: 1, Data: msgA[8:12]},
		{Flags: flagEnd | flagUnordered, TSN: 13, Stream: 1, PPID: 1, Data: msgA[12:]},
		{Flags: flagBegin | flagUnordered, TSN: 14, Stream: 2, PPID: 2, Data: msgB[:3]},
		{Flags: flagEnd | flagUnordered, TSN: 15, Stream: 2, PPID: 2, Data: msgB[3:]},
	}
	for _, perm := range permutations(len(frags)) {
		a := &Association{ep: &Endpoint{}, cfg: &cfg, runStart: map[uint32]*run{}, runEnd: map[uint32]*run{}, inSSN: make([]uint16, 4), pendingOrd: map[uint32]Message{}}
		for k, i := range perm {
			d := frags[i]
			d.Data = append([]byte(nil), d.Data...) // the packet buffer is reused
			a.addFragment(&d)
			haveA, haveB := true, true
			for j := 0; j < 4; j++ {
				if !contains(perm[:k+1], j) {
					haveA = false
				}
			}
			for j := 4; j < 6; j++ {
				if !contains(perm[:k+1], j) {
					haveB = false
				}
			}
			want := 0
			if haveA {
				want++
			}
			if haveB {
				want++
			}
			if len(a.readQ) != want {
				t.Fatalf("order %v after %d fragments: %d delivered, want %d", perm, k+1, len(a.readQ), want)
			}
		}
		for _, m := range a.readQ {
			want := msgA
			if m.PPID == 2 {
				want = msgB
			}
			if !bytes.Equal(m.Data, want) {
				t.Fatalf("order %v: message %d is %q", perm, m.PPID, m.Data)
			}
		}
		if len(a.runStart) != 0 || len(a.runEnd) != 0 {
			t.Fatalf("order %v: runs left %v %v", perm, a.runStart, a.runEnd)
		}
	}
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
