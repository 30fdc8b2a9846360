package sctp

import (
	"math/bits"
	"sync"
	"time"
)

// writePacket seals (CRC32c) and sends one packet to the peer.
func (a *Association) writePacket(b []byte) {
	sealPacket(b)
	a.ep.writeTo(b, a.key, a.raddr)
	a.stats.PacketsSent++
}

// arwnd is the receive window this end advertises (RFC 9260 6.2).
func (a *Association) arwnd() int { return max(a.cfg.ReceiveBuffer-a.held, 0) }

// appendSack appends a SACK (RFC 9260 3.3.4, 6.2) with as many gap blocks
// and duplicate TSNs as fit in room octets, and clears what it reported.
func (a *Association) appendSack(b []byte, room int) []byte {
	s := sackChunk{CumTSN: a.rcvCum, ARwnd: uint32(a.arwnd())}
	room -= sackFixedLen
	var gaps [64]gapBlock
	s.Gaps = gaps[:0]
	for _, g := range a.gaps {
		if room < 4 || len(s.Gaps) == len(gaps) {
			break
		}
		s.Gaps = append(s.Gaps, gapBlock{uint16(g.start - a.rcvCum), uint16(g.end - a.rcvCum)})
		room -= 4
	}
	nd := min(len(a.dups), room/4)
	s.Dups = a.dups[:nd]
	b = appendSack(b, &s)
	a.dups = a.dups[:0]
	a.sackNow, a.sackDue = false, false
	a.dataPackets = 0
	stopTimer(&a.sackTimer)
	a.lastAdvRwnd = int(s.ARwnd)
	a.stats.SACKsSent++
	return b
}

// transmit sends what is due: control chunks, a SACK, retransmissions,
// then new DATA as the congestion window (RFC 9260 7.2) and the peer's
// receive window (6.1 rules A, B) allow, packed into as few packets as
// the MTU allows, all in this one call.
func (a *Association) transmit() {
	if a.state == stateClosed || a.peerTag == 0 {
		return
	}
	mtu := a.cfg.MTU
	canData := a.state == stateEstablished || a.state == stateShutdownPending || a.state == stateShutdownReceived
	p := &a.pb
	p.reset(a.localPort, a.peerPort, a.peerTag)
	if len(a.ctrl) > 0 {
		p.hdr = append(p.hdr, a.ctrl...)
		a.ctrl = a.ctrl[:0]
	}
	hasNew := canData && a.nsent < len(a.q)
	if a.sackNow || (a.sackDue && hasNew) {
		if mtu-p.len() < sackFixedLen+16 {
			a.flushPacket()
		}
		p.hdr = a.appendSack(p.hdr, mtu-p.len())
	}
	if canData {
		if a.rtxPending > 0 {
			a.retransmit()
		}
		for a.rtxPending == 0 && a.nsent < len(a.q) {
			c := &a.q[a.nsent]
			if a.flight >= a.cwnd {
				break
			}
			// Rule A: not beyond the peer's window, except one chunk
			// when nothing is in flight (the zero window probe).
			if len(c.data) > a.rwnd && a.flight > 0 {
				break
			}
			if p.len()+dataHeaderLen+len(c.data) > mtu {
				a.flushPacket()
			}
			a.sendData(c)
			c.txCount = 1
			if !a.rttPending {
				a.rttPending = true
				a.rttTSN = c.tsn
				a.rttSent = time.Now()
			}
			a.nsent++
			a.stats.DataChunksSent++
			a.dataSends++
		}
	}
	a.flushPacket()
	a.fastRtxBurst = false
	a.t3OnePacket = false
	// RFC 9260 6.3.2 R1: T3-rtx runs while DATA is outstanding.
	if a.nsent > 0 && !a.t3.armed {
		a.startTimer(&a.t3, a.rto, a.t3Expired)
	}
}

// sendData puts c into the packet being built, new or sent again, and
// into the flight. A chunk the peer's window has no room for is the zero
// window probe (6.1 rule A; also a T3 resend of a probe the peer dropped):
// handleSack resends it as soon as a SACK shows room, before new data, so
// that data after it does not turn its drop into three miss indications
// and a fast retransmit. 6.2.1 B: every chunk sent, or sent again, takes
// its size off the peer's window (without it on resends, new data after a
// resent probe overran the window by the probe's size).
func (a *Association) sendData(c *outChunk) {
	a.pb.appendData(&dataChunk{Flags: c.flags, TSN: c.tsn, Stream: c.stream, SSN: c.ssn, PPID: c.ppid, Data: c.data})
	if len(c.data) > a.rwnd {
		a.probing, a.probeTSN = true, c.tsn
	}
	c.inFlight = true
	a.flight += len(c.data)
	a.rwnd = max(a.rwnd-len(c.data), 0)
}

// flushPacket sends the packet being built, if it has chunks, and starts
// the next.
func (a *Association) flushPacket() {
	p := &a.pb
	if !p.empty() {
		bufs := p.seal()
		a.ep.writeGather(a, bufs)
		a.stats.PacketsSent++
	}
	p.reset(a.localPort, a.peerPort, a.peerTag)
}

// retransmit sends the chunks marked for retransmission, earliest first,
// before any new data (RFC 9260 6.1). After a fast retransmit one packet
// of them may go beyond cwnd (7.2.4 step 3); after a T3 expiry, one packet
// is all (6.3.3 E3).
func (a *Association) retransmit() {
	mtu := a.cfg.MTU
	p := &a.pb
	sentPackets := 0
	for i := 0; i < a.nsent && a.rtxPending > 0; i++ {
		c := &a.q[i]
		if !c.rtx {
			continue
		}
		burst := a.fastRtxBurst && sentPackets == 0
		if a.flight >= a.cwnd && !burst {
			return
		}
		if p.len()+dataHeaderLen+len(c.data) > mtu {
			a.flushPacket()
			sentPackets++
			if a.flight >= a.cwnd || a.t3OnePacket {
				return
			}
		}
		a.sendData(c)
		c.rtx = false
		a.rtxPending--
		c.txCount++
		if a.rttPending && a.rttTSN == c.tsn {
			a.rttPending = false // Karn: no sample from a retransmitted chunk (6.3.1 C5)
		}
		a.stats.DataChunksSent++
		a.stats.Retransmissions++
		a.dataSends++
	}
}

// t3Expired is the retransmission timeout (RFC 9260 6.3.3).
func (a *Association) t3Expired() {
	if a.nsent == 0 {
		return
	}
	a.stats.T3Timeouts++
	// E2: back off (in timedOut), or give up.
	if a.timedOut("retransmission limit reached") {
		return
	}
	// E1 (7.2.3): ssthresh = max(cwnd/2, 4*MTU), cwnd = 1 MTU.
	mtu := a.cfg.MTU
	a.ssthresh = max(a.cwnd/2, 4*mtu)
	a.cwnd = mtu
	a.pba = 0
	// E3: every outstanding chunk is to be sent again; they leave the
	// flight, and the cwnd of one MTU lets one packet of them out now.
	for i := 0; i < a.nsent; i++ {
		c := &a.q[i]
		if c.acked {
			continue
		}
		if c.inFlight {
			a.flight -= len(c.data)
			c.inFlight = false
		}
		if !c.rtx {
			c.rtx = true
			a.rtxPending++
		}
	}
	a.inFastRecovery = false
	a.rttPending = false
	// E3: "as many of the earliest as fit into a single packet".
	a.t3OnePacket = true
	a.transmit()
}

// handleSack processes a SACK (RFC 9260 6.2.1 D, 7.2). counted is false
// for the Cumulative TSN Ack of a SHUTDOWN.
func (a *Association) handleSack(s *sackChunk, counted bool) {
	if counted {
		a.stats.SACKsReceived++
	}
	cum := s.CumTSN
	if tsnLT(cum, a.cumAck) {
		return // D i: older than one already seen
	}
	highestSent := a.cumAck
	if a.nsent > 0 {
		highestSent = a.q[a.nsent-1].tsn
	}
	if tsnGT(cum, highestSent) {
		a.abortWith(ProtocolViolation("SACK acknowledges TSNs not yet sent"))
		return
	}
	mtu := a.cfg.MTU
	flightBefore := a.flight
	cumAdvanced := tsnGT(cum, a.cumAck)
	newly := 0
	var htna uint32
	haveHTNA := false
	acked := func(c *outChunk) {
		newly += len(c.data)
		if !haveHTNA || tsnGT(c.tsn, htna) {
			htna, haveHTNA = c.tsn, true
		}
		if c.inFlight {
			a.flight -= len(c.data)
			c.inFlight = false
		}
		if c.rtx {
			c.rtx = false
			a.rtxPending--
		}
		if a.rttPending && a.rttTSN == c.tsn {
			if c.txCount == 1 {
				a.measureRTT(time.Since(a.rttSent))
			}
			a.rttPending = false
		}
	}
	k := 0
	for k < a.nsent && tsnLTE(a.q[k].tsn, cum) {
		c := &a.q[k]
		if c.acked {
			a.gapAcked--
		} else {
			acked(c)
		}
		a.queued -= len(c.data)
		if c.msgBuf != nil {
			a.ep.bufs.put(c.msgBuf)
		}
		a.q[k] = outChunk{}
		k++
	}
	if k > 0 {
		a.q = a.q[k:]
		a.nsent -= k
		if len(a.q) == 0 {
			a.q = a.q[:0:0]
		}
	}
	if cumAdvanced {
		a.cumAck = cum
	}
	if len(s.Gaps) > 0 || a.gapAcked > 0 {
		for i := 0; i < a.nsent; i++ {
			c := &a.q[i]
			off := c.tsn - cum
			in := false
			for _, g := range s.Gaps {
				if off >= uint32(g.Start) && off <= uint32(g.End) {
					in = true
					break
				}
			}
			switch {
			case in && !c.acked:
				c.acked = true
				a.gapAcked++
				acked(c)
			case !in && c.acked:
				// Reneged (6.2.1 D): outstanding again; T3 resends it.
				c.acked = false
				a.gapAcked--
			}
		}
	}
	// Fast retransmit (RFC 9260 7.2.4): a miss indication for each
	// unacknowledged chunk below the highest TSN newly acknowledged; the
	// third one marks it, once.
	if haveHTNA {
		marked := false
		for i := 0; i < a.nsent; i++ {
			c := &a.q[i]
			if !tsnLT(c.tsn, htna) {
				break
			}
			if c.acked || c.rtx || c.fastRtx {
				continue
			}
			c.miss++
			if c.miss >= 3 {
				c.fastRtx = true
				a.markRtx(c)
				a.stats.FastRetransmits++
				marked = true
			}
		}
		if marked {
			if !a.inFastRecovery {
				// Enter Fast Recovery: halve once per loss episode.
				a.inFastRecovery = true
				a.fastRecoveryExit = highestSent
				a.ssthresh = max(a.cwnd/2, 4*mtu)
				a.cwnd = a.ssthresh
				a.pba = 0
			}
			a.fastRtxBurst = true
			if a.q[0].rtx {
				a.startTimer(&a.t3, a.rto, a.t3Expired) // step 4
			}
		}
	}
	if a.inFastRecovery && !tsnLT(cum, a.fastRecoveryExit) {
		a.inFastRecovery = false
	}
	// cwnd: slow start (7.2.1), congestion avoidance (7.2.2), both only
	// when the window was in use and the cumulative point moved.
	if cumAdvanced && !a.inFastRecovery && flightBefore+mtu > a.cwnd {
		if a.cwnd <= a.ssthresh {
			a.cwnd += min(newly, mtu)
		} else {
			a.pba += newly
			if a.pba >= a.cwnd {
				a.pba -= a.cwnd
				a.cwnd += mtu
			}
		}
	}
	if a.flight == 0 {
		a.pba = 0
	}
	if a.probing && counted {
		a.resendProbe(cum, int(s.ARwnd))
	}
	a.rwnd = max(int(s.ARwnd)-a.flight, 0)
	// 8.1: an acknowledgment resets the error counter. 6.1 rule A: so
	// does a SACK that answers a zero window probe with a window still
	// too small for the earliest chunk waiting: the receiver may keep it
	// closed for as long as its consumer does not read, and it is alive.
	if newly > 0 || (counted && len(a.q) > 0 && int(s.ARwnd) < len(a.q[0].data)) {
		a.errCount = 0
	}
	// T3-rtx: stopped when nothing is outstanding, restarted when the
	// earliest outstanding TSN is acknowledged (6.3.2 R2, R3).
	if a.nsent == 0 {
		stopTimer(&a.t3)
	} else if cumAdvanced {
		a.startTimer(&a.t3, a.rto, a.t3Expired)
	}
	if k > 0 {
		a.sendSig.broadcast()
		a.checkShutdown()
	}
}

// resendProbe looks at the outstanding zero window probe in the light of
// a SACK with Cumulative TSN Ack cum and window arwnd. A probe the peer
// had no room for was dropped (RFC 9260 6.2), not lost to congestion:
// once a SACK shows room for it without acknowledging it, it is marked to
// go again at once, cwnd untouched, rather than after three miss
// indications and a halved cwnd (7.2.4) or a timeout.
func (a *Association) resendProbe(cum uint32, arwnd int) {
	if a.nsent == 0 || tsnLTE(a.probeTSN, cum) {
		a.probing = false
		return
	}
	i := int(a.probeTSN - a.q[0].tsn)
	if i < 0 || i >= a.nsent {
		a.probing = false
		return
	}
	c := &a.q[i]
	switch {
	case c.acked || c.rtx:
		a.probing = false
	case arwnd >= len(c.data):
		a.probing = false
		a.markRtx(c)
	}
}

// markRtx marks c to be sent again; it leaves the flight.
func (a *Association) markRtx(c *outChunk) {
	c.rtx = true
	a.rtxPending++
	if c.inFlight {
		a.flight -= len(c.data)
		c.inFlight = false
	}
}

// bufPool recycles message buffers: SendMsg copies each message into one,
// and the message's last chunk returns it when the Cumulative TSN Ack
// passes it (all of the message's chunks are then acknowledged); received
// messages are reassembled into them and come back through Release.
// Power-of-two classes from 4 KiB to 256 KiB; other sizes come from the
// heap. Recycled buffers are warm in the cache, fresh ones are not: on
// loopback that is most of the cost of a copy.
type bufPool struct {
	classes [maxPooledShift - minPooledShift + 1]sync.Pool
}

const (
	minPooledShift = 12
	maxPooledShift = 18
)

func bufClass(n int) int {
	if n < 1<<minPooledShift || n > 1<<maxPooledShift {
		return -1
	}
	return bits.Len(uint(n-1)) - minPooledShift
}

// get returns a buffer of length n holding a copy of data (n >= len(data)).
func (p *bufPool) get(n int, data []byte) []byte {
	if c := bufClass(n); c >= 0 {
		if b, ok := p.classes[c].Get().(*[]byte); ok {
			buf := (*b)[:n]
			copy(buf, data)
			return buf
		}
		// append, not make: no zeroing of what is overwritten.
		buf := append(make([]byte, 0, 1<<(c+minPooledShift)), data...)
		return buf[:n]
	}
	if n == len(data) {
		return append([]byte(nil), data...)
	}
	buf := make([]byte, n)
	copy(buf, data)
	return buf
}

func (p *bufPool) put(b []byte) {
	c := bufClass(cap(b))
	if c < 0 || cap(b) != 1<<(c+minPooledShift) {
		return
	}
	b = b[:cap(b)]
	p.classes[c].Put(&b)
}
