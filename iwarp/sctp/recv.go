package sctp

import (
	"encoding/binary"
	"io"
)

// handlePacket processes a packet from the association's address.
func (a *Association) handlePacket(h commonHeader, chunks []chunk) {
	a.mu.Lock()
	if a.state == stateClosed {
		a.mu.Unlock()
		return
	}
	switch chunks[0].Type {
	case ctInit:
		// RFC 9260 8.5.1 A: tag 0, INIT alone; then 5.2.1 (collision) or
		// 5.2.2 (the peer restarts): an INIT ACK with a cookie, no change
		// here until a COOKIE ECHO proves the peer.
		if h.VTag == 0 && len(chunks) == 1 {
			if ic, err := parseInit(chunks[0]); err == nil {
				a.stats.PacketsReceived++
				a.ep.answerInit(h, &ic, a.key, a.raddr, a)
			}
		}
		a.mu.Unlock()
		return
	case ctCookieEcho:
		a.stats.PacketsReceived++
		a.mu.Unlock()
		a.ep.cookieEcho(h, chunks, a.key, a.raddr, a)
		return
	}
	a.stats.PacketsReceived++
	a.processChunks(h, chunks)
	a.mu.Unlock()
}

// tagOK applies the Verification Tag rules (RFC 9260 8.5 and 8.5.1) to
// every chunk of the packet before any is processed.
func (a *Association) tagOK(h commonHeader, chunks []chunk) bool {
	for _, c := range chunks {
		switch c.Type {
		case ctAbort, ctShutdownComplete:
			// 8.5.1 B and C: the T bit says the tag is the peer's own.
			want := a.localTag
			if c.Flags&flagT != 0 {
				want = a.peerTag
			}
			if h.VTag != want || want == 0 {
				return false
			}
		case ctInit:
			return false // INIT must be alone (8.5.1 A)
		default:
			if h.VTag != a.localTag {
				return false
			}
		}
	}
	return true
}

// processChunks handles the chunks of a packet in order, then sends what
// they call for. Called with a.mu held.
func (a *Association) processChunks(h commonHeader, chunks []chunk) {
	if len(chunks) == 0 {
		a.transmit()
		return
	}
	if !a.tagOK(h, chunks) {
		a.stats.BadVerificationTags++
		return
	}
	hadData := false
	immediate := false
loop:
	for _, c := range chunks {
		if a.state == stateClosed {
			return
		}
		switch c.Type {
		case ctData:
			if a.state < stateEstablished {
				continue
			}
			d, err := parseData(c)
			if err != nil {
				a.abortWith(ProtocolViolation(err.Error()))
				return
			}
			if !a.handleData(&d) {
				return
			}
			hadData = true
			if d.Flags&flagImmediate != 0 {
				immediate = true
			}
		case ctSack:
			if a.state < stateEstablished {
				continue
			}
			if err := parseSack(c, &a.sack); err != nil {
				a.abortWith(ProtocolViolation(err.Error()))
				return
			}
			a.handleSack(&a.sack, true)
		case ctInitAck:
			a.handleInitAck(c)
		case ctCookieAck:
			a.handleCookieAck()
		case ctHeartbeat:
			if info, err := parseHeartbeat(c); err == nil && a.state >= stateEstablished {
				a.queueCtrl(func(b []byte) []byte { return appendHeartbeat(b, ctHeartbeatAck, info) })
			}
		case ctHeartbeatAck:
			a.handleHeartbeatAck(c)
		case ctAbort:
			causes, _ := parseCauses(c)
			owned := make([]ErrorCause, len(causes))
			for i, x := range causes {
				owned[i] = ErrorCause{Code: x.Code, Info: append([]byte(nil), x.Info...)}
			}
			a.finish(&AbortError{Remote: true, Causes: owned})
			return
		case ctShutdown:
			cum, err := parseShutdown(c)
			if err == nil {
				a.handleShutdown(cum)
			}
		case ctShutdownAck:
			a.handleShutdownAck()
		case ctShutdownComplete:
			if a.state == stateShutdownAckSent {
				a.finish(io.EOF)
				return
			}
		case ctError:
			a.stats.ErrorsReceived++
			causes, _ := parseCauses(c)
			for _, x := range causes {
				a.ep.log.Debug("sctp: ERROR from peer", "peer", a.key, "cause", x.String())
				if x.Code == CauseStaleCookie && a.state == stateCookieEchoed {
					a.handleStaleCookie(x.Info)
					return
				}
			}
		case ctCookieEcho, ctInit:
			// Only first in a packet (handled by handlePacket).
		default:
			// RFC 9260 3.2: the upper two bits of an unknown type say
			// whether to go on with the packet and whether to report.
			if c.Type&0x40 != 0 {
				a.reportUnrecognizedChunk(c)
			}
			if c.Type&0x80 == 0 {
				break loop
			}
		}
	}
	if hadData {
		a.dataPackets++
		if a.sackNow || immediate || a.dataPackets >= 2 || a.state == stateShutdownSent {
			a.sackNow = true
		} else {
			a.sackDue = true
			if !a.sackTimer.armed {
				a.startTimer(&a.sackTimer, a.cfg.SACKDelay, a.sackTimerExpired)
			}
		}
		if a.state == stateShutdownSent {
			// RFC 9260 9.2: each DATA in SHUTDOWN-SENT is answered with a
			// SACK and a SHUTDOWN, and T2 restarts.
			a.sendShutdown()
			return
		}
	}
	a.transmit()
}

func (a *Association) sackTimerExpired() {
	if a.sackDue {
		a.sackNow = true
		a.transmit()
	}
}

func (a *Association) queueCtrl(f func([]byte) []byte) { a.ctrl = f(a.ctrl) }

// reportUnrecognizedChunk queues an ERROR with Unrecognized Chunk Type
// carrying the chunk (RFC 9260 3.3.10.6), cut to fit a packet.
func (a *Association) reportUnrecognizedChunk(c chunk) {
	whole := make([]byte, 4, 4+len(c.Value))
	whole[0], whole[1] = c.Type, c.Flags
	binary.BigEndian.PutUint16(whole[2:], uint16(4+len(c.Value)))
	whole = append(whole, c.Value...)
	if room := a.cfg.MTU - commonHeaderLen - 8 - 64; len(whole) > room {
		whole = whole[:room]
	}
	a.queueCtrl(func(b []byte) []byte {
		return appendCauseChunk(b, ctError, 0, []ErrorCause{{Code: CauseUnrecognizedChunk, Info: whole}})
	})
}

// handleData takes one DATA chunk (RFC 9260 6.2); false means the
// association ended.
func (a *Association) handleData(d *dataChunk) bool {
	if len(d.Data) == 0 {
		// RFC 9260 6.2: ABORT with No User Data.
		a.abortWith(ErrorCause{Code: CauseNoUserData, Info: binary.BigEndian.AppendUint32(nil, d.TSN)})
		return false
	}
	tsn := d.TSN
	if tsnLTE(tsn, a.rcvCum) || a.inGaps(tsn) {
		a.stats.DuplicateTSNs++
		if len(a.dups) < 64 {
			a.dups = append(a.dups, tsn)
		}
		a.sackNow = true // 6.2: a duplicate is answered at once
		return true
	}
	// 6.2: with no room, drop chunks beyond the highest TSN received; a
	// chunk filling a hole is taken (its octets are counted already by
	// the sender's window). Gap offsets are 16 bits: nothing further.
	if (tsnGT(tsn, a.highestRecv) && a.held+len(d.Data) > a.cfg.ReceiveBuffer) || tsn-a.rcvCum > 0xffff {
		a.stats.DroppedChunks++
		a.sackNow = true
		return true
	}
	a.recordTSN(tsn)
	if len(a.gaps) > 0 {
		a.sackNow = true // 6.7: a gap is reported at once
	}
	if tsnGT(tsn, a.highestRecv) {
		a.highestRecv = tsn
	}
	a.stats.DataChunksReceived++
	if d.Stream >= a.inStreams {
		// 6.5: acknowledge it, drop it, report Invalid Stream Identifier.
		info := binary.BigEndian.AppendUint16(nil, d.Stream)
		info = append(info, 0, 0)
		a.queueCtrl(func(b []byte) []byte {
			return appendCauseChunk(b, ctError, 0, []ErrorCause{{Code: CauseInvalidStream, Info: info}})
		})
		return true
	}
	a.held += len(d.Data)
	if d.Flags&(flagBegin|flagEnd) == flagBegin|flagEnd {
		data := a.ep.bufs.get(len(d.Data), d.Data)
		a.deliver(Message{Stream: d.Stream, PPID: d.PPID, Unordered: d.Flags&flagUnordered != 0, Data: data}, d.SSN)
		return true
	}
	a.addFragment(d)
	return true
}

func (a *Association) inGaps(tsn uint32) bool {
	for _, g := range a.gaps {
		if tsnLTE(g.start, tsn) && tsnLTE(tsn, g.end) {
			return true
		}
	}
	return false
}

// recordTSN marks tsn received: the cumulative point moves on, or the
// sorted list of received runs above it grows.
func (a *Association) recordTSN(tsn uint32) {
	if tsn == a.rcvCum+1 {
		a.rcvCum = tsn
		for len(a.gaps) > 0 && a.gaps[0].start == a.rcvCum+1 {
			a.rcvCum = a.gaps[0].end
			a.gaps = a.gaps[1:]
		}
		if len(a.gaps) == 0 {
			a.gaps = a.gaps[:0:0]
		}
		return
	}
	i := len(a.gaps)
	for i > 0 && tsnGT(a.gaps[i-1].start, tsn) {
		i--
	}
	if i > 0 && a.gaps[i-1].end+1 == tsn {
		a.gaps[i-1].end = tsn
		if i < len(a.gaps) && a.gaps[i].start == tsn+1 {
			a.gaps[i-1].end = a.gaps[i].end
			a.gaps = append(a.gaps[:i], a.gaps[i+1:]...)
		}
		return
	}
	if i < len(a.gaps) && a.gaps[i].start == tsn+1 {
		a.gaps[i].start = tsn
		return
	}
	a.gaps = append(a.gaps, tsnRange{})
	copy(a.gaps[i+1:], a.gaps[i:])
	a.gaps[i] = tsnRange{tsn, tsn}
}

// run is a stretch of consecutive TSNs of one message's fragments, their
// octets already in one buffer (RFC 9260 6.9: a message's fragments carry
// consecutive TSNs from the B fragment to the E one).
type run struct {
	first, last uint32
	flags       uint8 // B if it starts a message, E if it ends one; U
	stream, ssn uint16
	ppid        uint32
	data        []byte
}

// addFragment files a fragment into the runs: appended to the run that
// ends just before it, joined with the run that starts just after it. In
// order, each fragment's octets are copied once, into the buffer the
// message is delivered in; a run from B to E is delivered at once.
func (a *Association) addFragment(d *dataChunk) {
	tsn := d.TSN
	var r *run
	if prev := a.runEnd[tsn-1]; prev != nil && prev.flags&flagEnd == 0 && d.Flags&flagBegin == 0 {
		delete(a.runEnd, prev.last)
		prev.data = append(prev.data, d.Data...)
		prev.last = tsn
		prev.flags |= d.Flags & flagEnd
		r = prev
	} else {
		r = &run{first: tsn, last: tsn, flags: d.Flags & (flagBegin | flagEnd | flagUnordered), stream: d.Stream, ssn: d.SSN, ppid: d.PPID}
		if d.Flags&flagBegin != 0 {
			// Room for the whole message if it is the size of the last
			// one reassembled: one buffer, no regrowth.
			hint := max(min(a.fragHint, a.cfg.ReceiveBuffer), len(d.Data))
			r.data = a.ep.bufs.get(hint, d.Data)[:len(d.Data)]
		} else {
			r.data = append([]byte(nil), d.Data...)
		}
		a.runStart[tsn] = r
	}
	if next := a.runStart[tsn+1]; next != nil && next.flags&flagBegin == 0 && r.flags&flagEnd == 0 {
		delete(a.runStart, next.first)
		delete(a.runEnd, next.last)
		r.data = append(r.data, next.data...)
		r.last = next.last
		r.flags |= next.flags & flagEnd
	}
	a.runEnd[r.last] = r
	if r.flags&(flagBegin|flagEnd) == flagBegin|flagEnd {
		delete(a.runStart, r.first)
		delete(a.runEnd, r.last)
		a.fragHint = len(r.data)
		a.deliver(Message{Stream: r.stream, PPID: r.ppid, Unordered: r.flags&flagUnordered != 0, Data: r.data}, r.ssn)
	}
}

// deliver queues a whole message for RecvMsg: at once if unordered, in
// SSN order within its stream otherwise (RFC 9260 6.6).
func (a *Association) deliver(m Message, ssn uint16) {
	if m.Unordered {
		a.push(m)
		return
	}
	s := m.Stream
	if ssn != a.inSSN[s] {
		a.pendingOrd[uint32(s)<<16|uint32(ssn)] = m
		return
	}
	a.push(m)
	a.inSSN[s]++
	for {
		k := uint32(s)<<16 | uint32(a.inSSN[s])
		next, ok := a.pendingOrd[k]
		if !ok {
			return
		}
		delete(a.pendingOrd, k)
		a.push(next)
		a.inSSN[s]++
	}
}

func (a *Association) push(m Message) {
	a.readQ = append(a.readQ, m)
	a.stats.MessagesReceived++
	a.stats.BytesReceived += uint64(len(m.Data))
	a.recvSig.broadcast()
}

// handleShutdown takes the peer's SHUTDOWN (RFC 9260 9.2).
func (a *Association) handleShutdown(cum uint32) {
	if a.state < stateEstablished {
		return
	}
	// Its Cumulative TSN Ack acknowledges like a SACK without gaps.
	s := sackChunk{CumTSN: cum, ARwnd: uint32(a.rwnd + a.flight)}
	a.handleSack(&s, false)
	if a.state == stateClosed {
		return
	}
	a.peerShutdown = true
	a.recvSig.broadcast()
	switch a.state {
	case stateEstablished, stateShutdownPending:
		a.state = stateShutdownReceived
		a.sendSig.broadcast()
		a.checkShutdown()
	case stateShutdownSent:
		stopTimer(&a.t2)
		a.state = stateShutdownAckSent
		a.sendShutdownAck()
	}
}

func (a *Association) handleShutdownAck() {
	switch a.state {
	case stateShutdownSent, stateShutdownAckSent:
		b := appendCommonHeader(a.txbuf[:0], a.localPort, a.peerPort, a.peerTag)
		b = appendEmpty(b, ctShutdownComplete, 0)
		a.writePacket(b)
		a.finish(io.EOF)
	}
}
