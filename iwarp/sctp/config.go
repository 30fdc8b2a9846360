package sctp

import (
	"fmt"
	"log/slog"
	"time"
)

// DefaultUDPPort is the UDP port IANA assigned to SCTP over UDP (RFC 6951
// section 5.1 and 9): Linux's net.sctp.udp_port is commonly set to it.
const DefaultUDPPort = 9899

// DefaultMTU is the default largest SCTP packet (common header and chunks,
// the payload of one UDP datagram). 1200 octets fit any IPv4 or IPv6 path
// with room for IP and UDP headers; on loopback, where nothing is lost to
// an MTU, set MTU up to MaxMTU for fewer, larger packets.
const DefaultMTU = 1200

// MaxMTU is the largest SCTP packet one UDP datagram over IPv4 carries.
const MaxMTU = maxPacket

// MinMTU is the smallest MTU accepted: an INIT ACK with its cookie and a
// DATA chunk header with a useful payload must fit.
const MinMTU = 512

// Config sets up an endpoint and the associations it makes. The zero
// value is usable: every zero field takes the default its comment gives.
type Config struct {
	// AdaptationIndication, if not nil, is sent as the Adaptation Layer
	// Indication parameter (type 0xC006, RFC 5061 4.2.7) in this end's
	// INIT and INIT ACK. DDP over SCTP sends 1 (ddp-over-sctp draft 5.1,
	// 11.1). The peer's indication is Association.PeerAdaptation.
	AdaptationIndication *uint32

	// OutboundStreams is the number of outbound streams asked for (OS);
	// MaxInboundStreams the most inbound streams accepted (MIS). Default
	// 16 each. The association uses min(own OS, peer's MIS) outbound and
	// min(peer's OS, own MIS) inbound (RFC 9260 5.1.1).
	OutboundStreams   uint16
	MaxInboundStreams uint16

	// RTOInitial, RTOMin, RTOMax: the retransmission timeout's initial
	// value and bounds (RFC 9260 6.3 and 16: 1 s, 1 s, 60 s). Tests on
	// loopback use smaller values.
	RTOInitial time.Duration
	RTOMin     time.Duration
	RTOMax     time.Duration

	// MaxRetransmissions is Association.Max.Retrans (default 10): after
	// that many timeouts in a row without an answer the peer is
	// unreachable and the association fails (RFC 9260 8.1).
	MaxRetransmissions int
	// MaxInitRetransmissions is Max.Init.Retransmits (default 8): INIT and
	// COOKIE ECHO resent that often before Dial gives up (RFC 9260 5.1).
	MaxInitRetransmissions int

	// MTU is the largest SCTP packet sent: common header and chunks, the
	// UDP payload (default DefaultMTU; MinMTU..MaxMTU). User messages
	// larger than what one DATA chunk carries (MTU - 28) are fragmented.
	MTU int

	// ReceiveBuffer is the receive window in octets (default 4 MiB): the
	// a_rwnd this end advertises, and the most octets of received user
	// data it holds for reassembly and for RecvMsg. SendMsg refuses
	// messages larger than the peer's.
	ReceiveBuffer int
	// SendBuffer is the most octets of user data queued for sending and
	// not yet acknowledged (default 4 MiB); SendMsg waits for room.
	SendBuffer int

	// SACKDelay is the delayed acknowledgement timer (default 200 ms, RFC
	// 9260 6.2); a SACK also goes out at once for every second packet
	// with DATA and whenever a gap or a duplicate is seen.
	SACKDelay time.Duration

	// HeartbeatInterval is HB.interval (default 30 s): a HEARTBEAT is sent
	// when the association has been idle for it plus the RTO (RFC 9260
	// 8.3). Negative turns heartbeats off.
	HeartbeatInterval time.Duration

	// CookieLifetime is Valid.Cookie.Life (default 60 s, RFC 9260 16):
	// a COOKIE ECHO arriving later is refused with a Stale Cookie Error.
	CookieLifetime time.Duration
	// CookieSecret keys the cookie's HMAC-SHA-256; nil means 32 random
	// octets chosen when the endpoint starts.
	CookieSecret []byte

	// Port is this end's SCTP port (in the common header, RFC 6951 5.1);
	// 0 means the local UDP port. PeerPort is the SCTP port Dial sends to;
	// 0 means the remote UDP port. Linux's kernel SCTP listens on its
	// socket's SCTP port behind the one UDP port net.sctp.udp_port.
	Port     uint16
	PeerPort uint16

	// AcceptBacklog is how many established associations wait for Accept
	// (default 16); a COOKIE ECHO beyond it is answered with an ABORT
	// carrying Out of Resource.
	AcceptBacklog int

	// SocketBuffer is asked of the PacketConn's receive and send buffers
	// when it has SetReadBuffer/SetWriteBuffer (default 4 MiB; the kernel
	// caps it at net.core.rmem_max/wmem_max). Negative leaves them alone.
	SocketBuffer int

	// Logger receives debug events (association state changes, timeouts,
	// refused packets); nil logs nothing.
	Logger *slog.Logger
}

// ConfigError names a Config field whose value cannot be used.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return "sctp: Config." + e.Field + ": " + e.Reason }

// withDefaults returns the config with defaults filled in, or the first
// field that is out of range.
func (c Config) withDefaults() (Config, error) {
	if c.OutboundStreams == 0 {
		c.OutboundStreams = 16
	}
	if c.MaxInboundStreams == 0 {
		c.MaxInboundStreams = 16
	}
	if c.RTOInitial == 0 {
		c.RTOInitial = time.Second
	}
	if c.RTOMin == 0 {
		c.RTOMin = time.Second
		if c.RTOInitial < c.RTOMin {
			c.RTOMin = c.RTOInitial
		}
	}
	if c.RTOMax == 0 {
		c.RTOMax = 60 * time.Second
	}
	if c.MaxRetransmissions == 0 {
		c.MaxRetransmissions = 10
	}
	if c.MaxInitRetransmissions == 0 {
		c.MaxInitRetransmissions = 8
	}
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if c.ReceiveBuffer == 0 {
		c.ReceiveBuffer = 4 << 20
	}
	if c.SendBuffer == 0 {
		c.SendBuffer = 4 << 20
	}
	if c.SACKDelay == 0 {
		c.SACKDelay = 200 * time.Millisecond
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = 30 * time.Second
	}
	if c.CookieLifetime == 0 {
		c.CookieLifetime = 60 * time.Second
	}
	if c.AcceptBacklog == 0 {
		c.AcceptBacklog = 16
	}
	if c.SocketBuffer == 0 {
		c.SocketBuffer = 4 << 20
	}
	switch {
	case c.RTOMin < 0 || c.RTOInitial < 0 || c.RTOMax < 0:
		return c, &ConfigError{"RTOMin", "RTO values must be positive"}
	case c.RTOMin > c.RTOMax:
		return c, &ConfigError{"RTOMin", fmt.Sprintf("%v is more than RTOMax %v", c.RTOMin, c.RTOMax)}
	case c.RTOInitial < c.RTOMin || c.RTOInitial > c.RTOMax:
		return c, &ConfigError{"RTOInitial", fmt.Sprintf("%v is outside RTOMin..RTOMax (%v..%v)", c.RTOInitial, c.RTOMin, c.RTOMax)}
	case c.MTU < MinMTU || c.MTU > MaxMTU:
		return c, &ConfigError{"MTU", fmt.Sprintf("%d is outside %d..%d octets", c.MTU, MinMTU, MaxMTU)}
	case c.ReceiveBuffer < 1500:
		return c, &ConfigError{"ReceiveBuffer", fmt.Sprintf("%d octets; RFC 9260 3.3.2 asks for an a_rwnd of at least 1500", c.ReceiveBuffer)}
	case c.SendBuffer < 0:
		return c, &ConfigError{"SendBuffer", "negative"}
	case c.MaxRetransmissions < 0 || c.MaxInitRetransmissions < 0:
		return c, &ConfigError{"MaxRetransmissions", "negative"}
	case c.SACKDelay < 0 || c.SACKDelay > 500*time.Millisecond:
		return c, &ConfigError{"SACKDelay", fmt.Sprintf("%v; RFC 9260 6.2 allows at most 500 ms", c.SACKDelay)}
	case c.CookieLifetime < 0:
		return c, &ConfigError{"CookieLifetime", "negative"}
	case c.AcceptBacklog < 0:
		return c, &ConfigError{"AcceptBacklog", "negative"}
	}
	return c, nil
}

// maxDataPayload is the user data one DATA chunk carries in one packet.
func (c *Config) maxDataPayload() int { return (c.MTU - commonHeaderLen - dataHeaderLen) &^ 3 }
