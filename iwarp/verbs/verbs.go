// Package verbs is a verbs-like API over the Go reference iWARP stack:
// protection domains, memory registration returning STags, queue pairs
// with send and receive queues, and completion queues, running RDMAP
// (RFC 5040) over DDP (RFC 5041) over MPA (RFC 5044) on a real TCP
// connection, or over DDP/SCTP (RFC 5043's draft) on an SCTP association.
//
//	dev := verbs.NewDevice()
//	pd := dev.AllocPD()
//	mr, _ := pd.RegisterMR(buf, verbs.RemoteWrite)
//	qp, _ := verbs.Dial(ctx, pd, "host:7174", verbs.QPConfig{})
//	qp.PostSend(ctx, verbs.SendWR{ID: 1, Op: verbs.OpWrite, Data: src, RemoteSTag: stag, RemoteTO: to})
//	c, _ := qp.SendCQ().Poll(ctx)
//
// The package's examples run both ends over loopback.
//
// # The lower layer
//
// A queue pair's DDP and RDMAP do not depend on what carries their DDP
// segments: the seam is the unexported lowerLayer interface (lower.go),
// DDP's Lower Layer Protocol (RFC 5041 3). The queue pair segments each
// message by the layer's MULPDU, queues the segments, writes them in
// batches, and gets back every segment received in the sender's order;
// the layer frames them and owns its transport. MPA over TCP (mpaLayer)
// is the default, and what Dial, Accept and Establish run; DDP over SCTP
// (sctpLayer, ddpsctp.go: a DDP Stream Session of package ddpsctp) is what
// InitiateSession, AcceptSession, EstablishSession and EstablishRequest
// run (docs/ddp-sctp.md).
package verbs

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// Access rights a memory region grants the Remote Peer.
type Access = ddp.Access

const (
	RemoteWrite = ddp.RemoteWrite
	RemoteRead  = ddp.RemoteRead
)

// Device is one RNIC instance of the reference stack: it owns the STag
// table that all its protection domains and queue pairs share, as the
// hardware's single STag table does.
type Device struct {
	stags *ddp.STagTable

	mu        sync.Mutex
	nextPD    uint32
	nextIndex uint32
	keys      map[uint32]uint8 // last key used per STag index
	free      []uint32         // released STag indexes
	nextQP    uint64
}

// NewDevice returns a device with an empty STag table.
func NewDevice() *Device {
	return &Device{stags: ddp.NewSTagTable(), nextPD: 1, nextIndex: 1, keys: map[uint32]uint8{}}
}

// STags exposes the device's STag table, for tests and diagnostics.
func (d *Device) STags() *ddp.STagTable { return d.stags }

// PD is a protection domain: STags registered in one PD can be used only by
// queue pairs of the same PD (RFC 5041 8.2).
type PD struct {
	dev *Device
	id  uint32
}

// AllocPD allocates a protection domain.
func (d *Device) AllocPD() *PD {
	d.mu.Lock()
	defer d.mu.Unlock()
	pd := &PD{dev: d, id: d.nextPD}
	d.nextPD++
	return pd
}

// ID returns the protection domain's number.
func (pd *PD) ID() uint32 { return pd.id }

// MR is a registered memory region.
type MR struct {
	pd     *PD
	STag   uint32 // the Steering Tag to advertise to the peer
	Addr   uint64 // the TO of Buf[0]
	Buf    []byte
	Access Access
}

// RegisterMR registers buf with the given remote access and returns its
// region. Its TO base is buf's virtual address, as RDMA verbs providers
// do, so that a peer's advertisement {address, STag, length} works as is.
func (pd *PD) RegisterMR(buf []byte, access Access) (*MR, error) {
	var addr uint64
	if len(buf) > 0 {
		addr = uint64(uintptr(unsafe.Pointer(&buf[0])))
	}
	return pd.RegisterMRAt(buf, addr, access, 0)
}

// RegisterMRAt registers buf with TO base addr. A non-zero qp binds the
// STag to that queue pair's DDP Stream (RFC 5041 8.2): other streams of
// the PD cannot use it.
func (pd *PD) RegisterMRAt(buf []byte, addr uint64, access Access, stream uint64) (*MR, error) {
	d := pd.dev
	d.mu.Lock()
	var idx uint32
	if n := len(d.free); n > 0 {
		idx, d.free = d.free[n-1], d.free[:n-1]
	} else {
		if d.nextIndex >= 1<<24 {
			d.mu.Unlock()
			return nil, fmt.Errorf("verbs: STag table full (2^24 entries)")
		}
		idx = d.nextIndex
		d.nextIndex++
	}
	// A new key each time an index is reused, so a peer holding the old
	// STag is refused (RFC 5041 8.3 item 2).
	key := d.keys[idx] + 1
	d.keys[idx] = key
	d.mu.Unlock()
	stag := ddp.MakeSTag(idx, key)
	r := ddp.Region{STag: stag, PD: pd.id, Stream: stream, Access: access, Base: addr, Buf: buf}
	if err := d.stags.Register(r); err != nil {
		return nil, err
	}
	return &MR{pd: pd, STag: stag, Addr: addr, Buf: buf, Access: access}, nil
}

// Invalidate makes the STag unusable for the peer while keeping the index
// reserved; a later Deregister frees it.
func (mr *MR) Invalidate() error { return mr.pd.dev.stags.Invalidate(mr.STag) }

// Deregister removes the region; its STag index may be reused with a new
// key.
func (mr *MR) Deregister() error {
	d := mr.pd.dev
	if err := d.stags.Deregister(mr.STag); err != nil {
		return err
	}
	d.mu.Lock()
	d.free = append(d.free, ddp.STagIndex(mr.STag))
	d.mu.Unlock()
	return nil
}

// CQ is a completion queue.
type CQ struct {
	ch chan Completion
}

// NewCQ returns a completion queue holding up to depth completions; a
// queue pair blocks when its CQ is full, as flow control.
func NewCQ(depth int) *CQ { return &CQ{ch: make(chan Completion, max(depth, 1))} }

// Poll waits for the next completion.
func (cq *CQ) Poll(ctx context.Context) (Completion, error) {
	select {
	case c := <-cq.ch:
		return c, nil
	case <-ctx.Done():
		return Completion{}, ctx.Err()
	}
}

// TryPoll returns the next completion if there is one.
func (cq *CQ) TryPoll() (Completion, bool) {
	select {
	case c := <-cq.ch:
		return c, true
	default:
		return Completion{}, false
	}
}

// C exposes the channel of completions for use in select statements.
func (cq *CQ) C() <-chan Completion { return cq.ch }
