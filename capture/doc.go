// Package capture reads and writes packet captures of TCP conversations.
//
// Reading: [ReadTCPStreams] and [ReadTCPStreamsFrom] take a pcap or pcapng
// capture (Ethernet, 802.1Q, Linux cooked v1 and v2, BSD loopback or raw IP
// link types; IPv4 and IPv6) and return every TCP conversation in it, with
// the byte stream of each direction reassembled by sequence number from
// ISN+1: retransmitted, duplicated, overlapping and out-of-order segments
// land where their sequence numbers put them, modulo 2^32, and a hole that
// no segment fills is reported as a [*GapError].
//
// Writing: a [Writer] produces a pcap (Ethernet link type, nanosecond
// timestamps) of one synthetic but valid TCP conversation between two
// addresses: a three-way handshake with MSS and window-scale options, data
// segments with correct sequence and acknowledgement numbers and IP and TCP
// checksums, an acknowledgement from the receiver after each call, and a
// FIN exchange from [Writer.Close]. Wireshark and tshark open it and, when
// the bytes are MPA/DDP/RDMAP, decode them as iWARP. [Writer.Tap] wraps a
// real net.Conn so that what flows through it is recorded as it happens.
//
// The package uses only pure-Go parts of github.com/gopacket/gopacket
// (layers, pcapgo) and builds with CGO_ENABLED=0.
package capture
