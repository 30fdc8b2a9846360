package main

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// A session through the ops as a testbench drives it: memory, a window,
// a CQ, one completion; the CQE lands with the phase bit of the first
// pass, vector 1 armed sends one message, and a second session is apart.
func TestModelSession(t *testing.T) {
	ask := func(line string) map[string]any {
		t.Helper()
		r := decodeReply(t, handle([]byte(line)))
		if e, ok := r["error"]; ok {
			t.Fatalf("%s: %v", line, e)
		}
		return r
	}
	s := ask(`{"op":"model_open","cqs":8,"vectors":2,"windows":4}`)["session"].(float64)
	addr := uint64(ask(fmt.Sprintf(`{"op":"model_alloc","session":%v,"size":12288}`, s))["addr"].(float64))
	admin := func(op int, args ...uint64) float64 {
		words := make([]string, 8)
		for i := range words {
			words[i] = "0"
			if i < len(args) {
				words[i] = fmt.Sprint(args[i])
			}
		}
		return ask(fmt.Sprintf(`{"op":"model_admin","session":%v,"opcode":%d,"args":[%s]}`, s, op,
			strings.Join(words, ",")))["status"].(float64)
	}
	if st := admin(0x0a, 0, addr&0xffffffff, addr>>32, 12288); st != 0 {
		t.Fatalf("DMA_WINDOW: status %v", st)
	}
	if st := admin(0x01, 2, addr&0xffffffff, addr>>32, 2, 1); st != 0 {
		t.Fatalf("CREATE_CQ: status %v", st)
	}
	ask(fmt.Sprintf(`{"op":"model_write32","session":%v,"off":%d,"value":1}`, s, 0x400+4)) // vector 1 enabled
	ask(fmt.Sprintf(`{"op":"model_write32","session":%v,"off":%d,"value":%d}`, s, 0xc000+8, uint32(1)<<31))
	cqe := make([]byte, 32)
	cqe[0], cqe[14] = 0x5a, 6
	ask(fmt.Sprintf(`{"op":"model_cqe","session":%v,"cqn":2,"cqe":"%s"}`, s, hex.EncodeToString(cqe)))
	st := ask(fmt.Sprintf(`{"op":"model_state","session":%v,"addr":%d,"len":32}`, s, addr))
	want := append([]byte(nil), cqe...)
	want[31] = 1
	if st["mem"] != hex.EncodeToString(want) {
		t.Errorf("CQE %v, want %x", st["mem"], want)
	}
	if m := st["messages"].([]any); len(m) != 2 || m[0].(float64) != 0 || m[1].(float64) != 1 {
		t.Errorf("messages %v, want [0 1]", m)
	}
	// A segment for QP 1, not enabled: one exception buffer (header and
	// the octets) and one EXCEPTION event.
	if st := admin(0x09, (addr+0x1000)&0xffffffff, (addr+0x1000)>>32, 2|1<<8|6<<16, (addr+0x2000)&0xffffffff,
		(addr+0x2000)>>32); st != 0 {
		t.Fatalf("EVENT_RING: status %v", st)
	}
	ask(fmt.Sprintf(`{"op":"model_seg","session":%v,"qpn":1,"seq":7,"octets":"61626364"}`, s))
	st = ask(fmt.Sprintf(`{"op":"model_state","session":%v,"addr":%d,"len":20}`, s, addr+0x2000))
	if want := "0100040007000000010000000000000161626364"; st["mem"] != want {
		t.Errorf("exception buffer %v, want %s", st["mem"], want)
	}
	st = ask(fmt.Sprintf(`{"op":"model_state","session":%v,"addr":%d,"len":16}`, s, addr+0x1000))
	if want := "03010100010000000000000000000001"; st["mem"] != want {
		t.Errorf("event %v, want %s", st["mem"], want)
	}
	s2 := ask(`{"op":"model_open","cqs":8,"vectors":2,"windows":4}`)["session"].(float64)
	if s2 == s {
		t.Fatal("two sessions with one number")
	}
	ask(fmt.Sprintf(`{"op":"model_close","session":%v}`, s))
	ask(fmt.Sprintf(`{"op":"model_close","session":%v}`, s2))
	if r := decodeReply(t, handle([]byte(fmt.Sprintf(`{"op":"model_state","session":%v,"addr":0,"len":0}`, s)))); r["error"] == nil {
		t.Error("a closed session answered")
	}
}
