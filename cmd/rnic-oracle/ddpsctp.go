package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/sctp"
)

// The DDP/SCTP path for the placement block's test (tests/ddp_rx's
// test_ddp_rx_sctp.py): DDP segments sent as DDP Segment Chunks of a DDP
// Stream Session (iwarp/ddpsctp) and recovered at the other end, in
// DDP-SSN order, as the block would get them from an SCTP receive path.

func init() {
	register("ddpsctp_path",
		`DDP segments through a DDP/SCTP session: {segments: [hex], path: "udp" (the userspace SCTP association on loopback UDP, iwarp/sctp) | "pipe" (an in-memory association that reorders), mtu?: SCTP packet size for udp (default 1200), reorder?, seed?: for pipe} -> {mulpdu, chunks: [hex] (the DATA chunk payloads sent: DDP-SSN and segment), segments: [hex] (recovered, in DDP-SSN order)}`,
		opDDPSCTPPath)
}

// ddpsctpTimeout bounds one path run: a few hundred segments on loopback.
const ddpsctpTimeout = 30 * time.Second

type ddpsctpReply struct {
	MULPDU   int      `json:"mulpdu"`
	Chunks   []string `json:"chunks"`
	Segments []string `json:"segments"`
}

func opDDPSCTPPath(params []byte) (any, error) {
	var p struct {
		Segments []string `json:"segments"`
		Path     string   `json:"path"`
		MTU      int      `json:"mtu"`
		Reorder  int      `json:"reorder"`
		Seed     uint64   `json:"seed"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	segs := make([][]byte, len(p.Segments))
	for i := range p.Segments {
		b, err := decodeHex(fmt.Sprintf("segments[%d]", i), &p.Segments[i])
		if err != nil {
			return nil, err
		}
		segs[i] = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), ddpsctpTimeout)
	defer cancel()
	var (
		a, b *ddpsctp.Conn
		sent []ddpsctp.Message
		err  error
	)
	switch p.Path {
	case "udp":
		var ln *ddpsctp.Listener
		a, b, ln, err = udpPair(ctx, p.MTU)
		if err == nil {
			defer ln.Close() // after the associations: it aborts what is left
		}
	case "pipe":
		ind := ddpsctp.AdaptationDDP
		ea, eb := ddpsctp.Pipe(ddpsctp.PipeConfig{Adaptation: [2]*uint32{&ind, &ind}, Reorder: p.Reorder, Seed: p.Seed})
		ea.Sent = &sent
		if a, err = ddpsctp.New(ea, ddpsctp.Config{}); err == nil {
			b, err = ddpsctp.New(eb, ddpsctp.Config{})
		}
	default:
		return nil, fmt.Errorf(`field "path": want "udp" or "pipe", got %q`, p.Path)
	}
	if err != nil {
		return nil, err
	}
	defer a.Close()
	defer b.Close()
	rep := ddpsctpReply{MULPDU: a.MULPDU(), Chunks: []string{}, Segments: []string{}}
	got := make(chan error, 1)
	go func() {
		r, err := b.Listen(ctx)
		if err != nil {
			got <- err
			return
		}
		s, err := r.Accept(ctx, nil)
		if err != nil {
			got <- err
			return
		}
		for range segs {
			seg, err := s.Receive(ctx)
			if err != nil {
				got <- err
				return
			}
			rep.Segments = append(rep.Segments, hex.EncodeToString(seg))
		}
		got <- nil
	}()
	s, err := a.Initiate(ctx, 1, nil)
	if err != nil {
		return nil, err
	}
	for i, seg := range segs {
		if err := s.Send(ctx, seg); err != nil {
			return nil, fmt.Errorf("segment %d: %w", i, err)
		}
		// The chunk payload as the layer sends it (DDP-SSN 0 was the
		// Initiate).
		wire, _ := (&ddpsctp.Payload{PPID: ddpsctp.PPIDSegment, SSN: uint16(i + 1), Segment: seg}).Append(nil)
		rep.Chunks = append(rep.Chunks, hex.EncodeToString(wire))
	}
	if err := <-got; err != nil {
		return nil, fmt.Errorf("recovering the segments: %w", err)
	}
	// Over the pipe the record of what was sent checks the chunks above.
	for i, m := range sent[min(1, len(sent)):] {
		if i < len(rep.Chunks) && hex.EncodeToString(m.Data) != rep.Chunks[i] {
			return nil, errors.New("ddpsctp sent other chunk payloads than the format says")
		}
	}
	return rep, nil
}

// udpPair sets up both ends of a DDP association over loopback UDP, and
// the listener the second end came from.
func udpPair(ctx context.Context, mtu int) (*ddpsctp.Conn, *ddpsctp.Conn, *ddpsctp.Listener, error) {
	scfg := sctp.Config{MTU: mtu}
	ln, err := ddpsctp.Listen("127.0.0.1:0", scfg, ddpsctp.Config{})
	if err != nil {
		return nil, nil, nil, err
	}
	ch := make(chan *ddpsctp.Conn, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			errc <- err
			return
		}
		ch <- c
	}()
	a, err := ddpsctp.Dial(ctx, ln.Addr().String(), scfg, ddpsctp.Config{})
	if err != nil {
		ln.Close()
		return nil, nil, nil, err
	}
	select {
	case b := <-ch:
		return a, b, ln, nil
	case err := <-errc:
		a.Close()
		ln.Close()
		return nil, nil, nil, err
	}
}
