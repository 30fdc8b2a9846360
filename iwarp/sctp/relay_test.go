package sctp

import (
	"net"
	"sync"
	"testing"
	"time"
)

// relay sits between a dialer and a listener: one UDP socket that sends
// what comes from the listener to the dialer (the last address that sent
// anything else) and everything else to the listener. filter decides each
// packet's fate: no delays drops it, one forwards it after that delay,
// more duplicate it.
type relay struct {
	pc       *net.UDPConn
	listener *net.UDPAddr

	mu     sync.Mutex
	dialer *net.UDPAddr
	filter func(toListener bool, pkt []byte) []time.Duration
	seen   []relayed // every packet, in arrival order
	wg     sync.WaitGroup
}

type relayed struct {
	toListener bool
	pkt        []byte
	copies     int
}

func newRelay(t testing.TB, listener net.Addr, filter func(toListener bool, pkt []byte) []time.Duration) *relay {
	r := &relay{pc: listenUDP(t), listener: listener.(*net.UDPAddr), filter: filter}
	r.wg.Add(1)
	go r.loop()
	t.Cleanup(func() {
		r.pc.Close()
		r.wg.Wait()
	})
	return r
}

func (r *relay) Addr() net.Addr { return r.pc.LocalAddr() }

func (r *relay) setFilter(f func(toListener bool, pkt []byte) []time.Duration) {
	r.mu.Lock()
	r.filter = f
	r.mu.Unlock()
}

func (r *relay) loop() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := r.pc.ReadFromUDP(buf)
		if err != nil {
			return
		}
		pkt := append([]byte(nil), buf[:n]...)
		toListener := !(from.IP.Equal(r.listener.IP) && from.Port == r.listener.Port)
		r.mu.Lock()
		var to *net.UDPAddr
		if toListener {
			r.dialer = from
			to = r.listener
		} else {
			to = r.dialer
		}
		delays := []time.Duration{0}
		if r.filter != nil {
			delays = r.filter(toListener, pkt)
		}
		r.seen = append(r.seen, relayed{toListener, pkt, len(delays)})
		r.mu.Unlock()
		if to == nil {
			continue
		}
		for _, d := range delays {
			if d == 0 {
				r.pc.WriteToUDP(pkt, to)
				continue
			}
			time.AfterFunc(d, func() { r.pc.WriteToUDP(pkt, to) })
		}
	}
}

// inject sends pkt from the relay's address, as if from the dialer, to
// the listener, or to the dialer.
func (r *relay) inject(toListener bool, pkt []byte) {
	r.mu.Lock()
	to := r.listener
	if !toListener {
		to = r.dialer
	}
	r.mu.Unlock()
	r.pc.WriteToUDP(pkt, to)
}

// packets returns the packets seen so far in one direction.
func (r *relay) packets(toListener bool) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, s := range r.seen {
		if s.toListener == toListener {
			out = append(out, s.pkt)
		}
	}
	return out
}

// chunkTypes lists the chunk types of a packet (nil if malformed).
func chunkTypes(pkt []byte) []uint8 {
	_, cs, err := parsePacket(pkt, nil)
	if err != nil {
		return nil
	}
	out := make([]uint8, len(cs))
	for i, c := range cs {
		out[i] = c.Type
	}
	return out
}

func hasChunk(pkt []byte, typ uint8) bool {
	for _, t := range chunkTypes(pkt) {
		if t == typ {
			return true
		}
	}
	return false
}

func onlyChunk(pkt []byte, typ uint8) bool {
	ts := chunkTypes(pkt)
	for _, t := range ts {
		if t != typ {
			return false
		}
	}
	return len(ts) > 0
}
