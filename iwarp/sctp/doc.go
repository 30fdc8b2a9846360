// Package sctp is a userspace SCTP association (RFC 9260, which obsoletes
// RFC 4960) over UDP encapsulation (RFC 6951), written for DDP over SCTP
// (RFC 5043, the ddp-over-sctp draft in shared/spec): the subset DDP
// needs, but real.
//
// # Wire
//
// Each SCTP packet (common header and chunks, CRC32c through iwarp/crc32c)
// is the payload of one UDP datagram (RFC 6951 5.1; port 9899 by
// convention, DefaultUDPPort). The UDP source port of a received packet is
// the peer's encapsulation port and the UDP destination of what is sent
// back (5.4). The UDP checksum is the kernel's: a UDP socket computes it
// for IPv4 and IPv6 (5.3 leaves it to UDP's rules). The SCTP ports in the
// common header are separate from the UDP ports: Config.Port and
// Config.PeerPort, defaulting to the UDP ports.
//
// # Association
//
// Four-way handshake with a State Cookie signed by HMAC-SHA-256 under a
// per-endpoint secret and refused after Config.CookieLifetime (Stale
// Cookie Error); Verification Tags checked on every packet, with the T
// bit rules of ABORT and SHUTDOWN COMPLETE (8.5.1); out-of-the-blue
// packets answered as 8.4 says; inbound and outbound stream counts
// negotiated; the Adaptation Layer Indication (parameter 0xC006) sent when
// Config.AdaptationIndication is set and the peer's returned by
// PeerAdaptation (nil when absent: what to do then is the caller's).
// DATA with TSNs, stream, SSN, PPID, the U bit, and B/E fragmentation of
// messages larger than a chunk; reassembly; SACK with gap blocks and
// duplicate TSNs, delayed (Config.SACKDelay, or every second packet, at
// once on a gap or duplicate); retransmission on the RTO of 6.3 (SRTT,
// RTTVAR, Karn, backoff, RTO.Min/Max); fast retransmit on the third miss
// indication (7.2.4); congestion control (cwnd, ssthresh, slow start,
// congestion avoidance, fast recovery, 7.2); the peer's receive window;
// HEARTBEAT on idle; graceful SHUTDOWN that delivers everything first;
// ABORT with error causes; ERROR for unrecognized chunks and parameters by
// their upper two bits. Unordered delivery (what DDP uses) and ordered
// delivery per stream are both implemented.
//
// Not implemented: multi-homing (one address per association), PR-SCTP,
// AUTH, ADD-IP, stream reconfiguration, I-DATA, ECN, PMTU discovery (the
// MTU is configured), association restart with state kept (a restarting
// peer's COOKIE ECHO ends the old association).
//
// # API
//
//	ep, _ := sctp.Listen(pc, cfg)            // owns pc
//	a, _ := ep.Accept(ctx)                   // ESTABLISHED
//	b, _ := sctp.Dial(ctx, pc2, raddr, cfg)  // one association owning pc2
//	b.SendMsg(ctx, stream, ppid, true, data) // unordered
//	m, _ := a.RecvMsg(ctx)                   // Message{Stream, PPID, Unordered, Data}
//	a.Release(m.Data)                        // optional: recycle the buffer
//	a.PeerAdaptation()                       // *uint32, nil if absent
//	b.WaitAcked(ctx)                         // everything sent is acknowledged
//	b.Close(ctx)                             // SHUTDOWN; a.RecvMsg then returns io.EOF
//	b.Abort(sctp.UserAbort("reason"))        // peer's calls fail with *AbortError
//
// Every blocking call takes a context. SendMsg copies the message and
// returns once it is queued; it refuses messages larger than the peer's
// receive window or Config.SendBuffer (*MessageTooLargeError) and streams
// beyond the negotiated count (*StreamError). MaxChunkData is the largest
// message that is not fragmented (the DDP layer's MULPDU bound).
// WaitAcked waits for the peer to acknowledge everything sent so far.
//
// See docs/sctp.md for the RFC sections each part follows, the tests and
// the figures.
package sctp
