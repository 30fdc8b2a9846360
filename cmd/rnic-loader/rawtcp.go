package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// The raw TCP baseline: the same messages over a plain TCP connection on
// the same path, received and verified the same way, so the ratio compares
// the iWARP stack with TCP alone.

// A raw TCP baseline connection opens with rawKey, then size, total and
// the pattern seed as big-endian 64-bit numbers. The key differs from MPA's so that one
// listener tells the two apart from the first 16 octets.
const rawKey = "RNIC raw TCP v1 "

func rawSend(ctx context.Context, c net.Conn, seed uint64, pat *pattern, size int, total int64, prog *progress) (time.Duration, error) {
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	hello := make([]byte, 0, 32)
	hello = append(hello, rawKey...)
	hello = binary.BigEndian.AppendUint64(hello, uint64(size))
	hello = binary.BigEndian.AppendUint64(hello, uint64(total))
	hello = binary.BigEndian.AppendUint64(hello, seed)
	if _, err := c.Write(hello); err != nil {
		return 0, fmt.Errorf("raw TCP: %w", err)
	}
	start := time.Now()
	var sent int64
	for i := uint64(0); sent < total; i++ {
		m := pat.msg(i)
		if rem := total - sent; rem < int64(len(m)) {
			m = m[:rem]
		}
		if _, err := c.Write(m); err != nil {
			return 0, fmt.Errorf("raw TCP: after %d octets: %w", sent, err)
		}
		sent += int64(len(m))
		prog.add(int64(len(m)))
	}
	// The receiver answers once it has verified everything, so the time
	// covers delivery, not just handing octets to the kernel.
	var ack [8]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return 0, fmt.Errorf("raw TCP: waiting for the receiver's verdict: %w", err)
	}
	if bad := binary.BigEndian.Uint64(ack[:]); bad != 0 {
		return 0, fmt.Errorf("raw TCP: the receiver found %d mismatched octets", bad)
	}
	return time.Since(start), nil
}

// rawReceive serves one baseline connection whose key has been read.
func rawReceive(ctx context.Context, c net.Conn) (verified int64, mismatches int64, err error) {
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var hdr [24]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return 0, 0, fmt.Errorf("raw TCP: reading the header: %w", err)
	}
	size := int(binary.BigEndian.Uint64(hdr[:8]))
	total := int64(binary.BigEndian.Uint64(hdr[8:]))
	seed := binary.BigEndian.Uint64(hdr[16:])
	if size <= 0 || size > maxMessageSize || total < 0 {
		return 0, 0, fmt.Errorf("raw TCP: bad header: size %d, total %d", size, total)
	}
	pat := newPattern(seed, size)
	buf := make([]byte, size)
	for i := uint64(0); verified < total; i++ {
		n := size
		if rem := total - verified; rem < int64(n) {
			n = int(rem)
		}
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return verified, mismatches, fmt.Errorf("raw TCP: after %d octets: %w", verified, err)
		}
		mismatches += int64(pat.check(i, buf[:n]))
		verified += int64(n)
	}
	var ack [8]byte
	binary.BigEndian.PutUint64(ack[:], uint64(mismatches))
	_, err = c.Write(ack[:])
	return verified, mismatches, err
}
