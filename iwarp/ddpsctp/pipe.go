package ddpsctp

import (
	"context"
	"io"
	"math/rand/v2"
	"sync"
)

// PipeConfig configures an in-memory association pair.
type PipeConfig struct {
	// Streams in each direction (default 16).
	Streams int
	// MaxMessage is MaxUnfragmented (default 1452: a 1500-octet path
	// MTU less IPv4, UDP encapsulation, SCTP common and DATA headers).
	MaxMessage int
	// Adaptation is the indication each end sends (index 0: the first
	// end's); nil sends none.
	Adaptation [2]*uint32
	// Reorder delivers each message up to Reorder places early, at
	// random, as SCTP does with unordered chunks; Seed seeds it.
	Reorder int
	Seed    uint64
}

// Pipe returns the two ends of an in-memory association that keeps every
// message (no loss, no duplication) and may reorder them: a stand-in for
// SCTP in tests, like net.Pipe for TCP.
func Pipe(cfg PipeConfig) (*PipeEnd, *PipeEnd) {
	if cfg.Streams <= 0 {
		cfg.Streams = 16
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 1452
	}
	// A generator per end: each sends under its peer's inbox lock only.
	a := &PipeEnd{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5c7b)), in: newInbox()}
	b := &PipeEnd{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5c7c)), in: newInbox()}
	a.peer, b.peer = b, a
	a.ind, b.ind = cfg.Adaptation[1], cfg.Adaptation[0]
	return a, b
}

// PipeEnd is one end of a Pipe; it satisfies Association.
type PipeEnd struct {
	cfg  PipeConfig
	rng  *rand.Rand // guarded by the peer's inbox lock
	peer *PipeEnd
	ind  *uint32 // the indication the peer sent
	in   *inbox
	// Sent records every message this end sent, for tests that check the
	// wire (nil: not recorded); set it before the first send.
	Sent *[]Message
}

type inbox struct {
	mu     sync.Mutex
	q      []Message
	got    int // messages taken by Receive
	put    int // messages queued
	closed bool
	wake   chan struct{}
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{})} }

// notify wakes every waiter, with mu held.
func (b *inbox) notify() {
	close(b.wake)
	b.wake = make(chan struct{})
}

// SendUnordered queues msg at the peer.
func (e *PipeEnd) SendUnordered(ctx context.Context, stream uint16, ppid uint32, msg []byte) error {
	return e.send(Message{Stream: stream, PPID: ppid, Unordered: true, Data: append([]byte(nil), msg...)})
}

// SendOrdered queues msg as an ordered chunk, which a DDP association must
// never carry (for tests of that check).
func (e *PipeEnd) SendOrdered(stream uint16, ppid uint32, msg []byte) error {
	return e.send(Message{Stream: stream, PPID: ppid, Data: append([]byte(nil), msg...)})
}

func (e *PipeEnd) send(m Message) error {
	b := e.peer.in
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if e.Sent != nil {
		*e.Sent = append(*e.Sent, m)
	}
	at := len(b.q)
	if e.cfg.Reorder > 0 {
		at -= e.rng.IntN(min(e.cfg.Reorder, len(b.q)) + 1)
	}
	b.q = append(b.q, Message{})
	copy(b.q[at+1:], b.q[at:])
	b.q[at] = m
	b.put++
	b.notify()
	return nil
}

// Receive returns the next queued message, io.EOF once the pipe is closed
// and drained.
func (e *PipeEnd) Receive(ctx context.Context) (Message, error) {
	b := e.in
	for {
		b.mu.Lock()
		if len(b.q) > 0 {
			m := b.q[0]
			b.q = b.q[1:]
			b.got++
			b.notify()
			b.mu.Unlock()
			return m, nil
		}
		closed, wake := b.closed, b.wake
		b.mu.Unlock()
		if closed {
			return Message{}, io.EOF
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// WaitAcked waits until the peer has taken every message sent so far.
func (e *PipeEnd) WaitAcked(ctx context.Context) error {
	b := e.peer.in
	for {
		b.mu.Lock()
		done, closed, wake := b.got == b.put, b.closed, b.wake
		b.mu.Unlock()
		if done {
			return nil
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// PeerAdaptation is the indication the other end was configured to send.
func (e *PipeEnd) PeerAdaptation() (uint32, bool) {
	if e.ind == nil {
		return 0, false
	}
	return *e.ind, true
}

func (e *PipeEnd) Streams() int         { return e.cfg.Streams }
func (e *PipeEnd) MaxUnfragmented() int { return e.cfg.MaxMessage }

// Close ends both directions: each end's Receive returns io.EOF once its
// queue is drained.
func (e *PipeEnd) Close() error {
	for _, b := range []*inbox{e.in, e.peer.in} {
		b.mu.Lock()
		b.closed = true
		b.notify()
		b.mu.Unlock()
	}
	return nil
}
