package interop

import (
	"strings"
	"testing"

	"github.com/openrnic/rnic/capture"
	"github.com/openrnic/rnic/rping"
)

// TestTeardownRaceSignature checks that only the exact output of rdma-core
// 44 rping's teardown race passes as that race: any other output or exit
// status of the guest's rping client is a failure.
func TestTeardownRaceSignature(t *testing.T) {
	ping := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("ping data: rdma-ping-" + string(rune('0'+i)) + ": ABCDEFG\n")
		}
		return b.String()
	}
	const (
		disc  = "client DISCONNECT EVENT...\n"
		ebadf = "rdma_get_cm_event: Bad file descriptor\n"
	)
	for _, c := range []struct {
		name  string
		guest string
		rc    int
		count int
		want  bool
	}{
		// The race as it happened in session 1000 of a repeated
		// server-rev2-nocrc-S65535-C2 (the console's blank line after
		// the BEGIN marker, rping's full 65534-character lines).
		{"race", "\n" + "ping data: " + string(rping.PingData(0, 65535)[:65534]) + "\n" +
			"ping data: " + string(rping.PingData(1, 65535)[:65534]) + "\n" + disc + ebadf, 255, 2, true},
		{"race, short lines", "\n" + ping(2) + disc + ebadf, 255, 2, true},
		{"race, CRLF", strings.ReplaceAll("\n"+ping(2)+disc+ebadf, "\n", "\r\n"), 255, 2, true},
		{"race, one round", ping(1) + disc + ebadf, 255, 1, true},
		// Anything else fails.
		{"clean exit", ping(2) + disc, 0, 2, false},
		{"other status", ping(2) + disc + ebadf, 1, 2, false},
		{"a round missing", ping(1) + disc + ebadf, 255, 2, false},
		{"disconnect before the last round", ping(1) + disc + "ping data: rdma-ping-1: ABCDEFG\n" + ebadf, 255, 2, false},
		{"no disconnect event", ping(2) + ebadf, 255, 2, false},
		{"order swapped", ping(2) + ebadf + disc, 255, 2, false},
		{"data mismatch", ping(2) + "data mismatch!\n" + disc + ebadf, 255, 2, false},
		{"completion error", ping(2) + "cq completion failed status 5\n" + disc + ebadf, 255, 2, false},
		{"client failed", ping(2) + "rping client failed: -1\n" + disc + ebadf, 255, 2, false},
		{"other errno", ping(2) + disc + "rdma_get_cm_event: Invalid argument\n", 255, 2, false},
		{"server side", "server ping data: x\nserver ping data: y\n" + disc + ebadf, 255, 2, false},
		{"kernel message", ping(2) + disc + "siw: something\n" + ebadf, 255, 2, false},
	} {
		if got := teardownRace(c.guest, c.rc, c.count); got != c.want {
			t.Errorf("%s: teardownRace = %v, want %v\n%s", c.name, got, c.want, c.guest)
		}
	}
}

// raceCapture is the guest NIC's capture of the one connection that ended in
// rping's teardown race on its own (no shim), in session 1000 of 1000 of
// server-rev2-nocrc-S65535-C2 (-siw.repeat 40, 25 runs).
const raceCapture = "../docs/captures/siw-rping-teardown-race.pcap"

// TestOrderlyClose checks orderlyClose on that capture, where our server's
// last Send is followed 334 ms later by the guest's FIN (rping's
// rdma_disconnect), and ours 1.06 ms after that, with no RST; and that any
// other close fails.
func TestOrderlyClose(t *testing.T) {
	convs, err := capture.ReadTCPStreams(raceCapture)
	if err != nil || len(convs) != 1 {
		t.Fatalf("%s: %d connections, %v", raceCapture, len(convs), err)
	}
	cv := convs[0]
	if err := orderlyClose(cv); err != nil {
		t.Fatalf("the race's own capture: %v", err)
	}
	if d := cv.ServerToClient.FINTime.Sub(cv.ClientToServer.FINTime); d.Microseconds() != 1061 {
		t.Errorf("our FIN %v after the guest's, tshark says 1.061 ms", d)
	}
	for name, spoil := range map[string]func(c *capture.Conversation){
		"guest RST":          func(c *capture.Conversation) { c.ClientToServer.RST = true },
		"our RST":            func(c *capture.Conversation) { c.ServerToClient.RST = true },
		"no guest FIN":       func(c *capture.Conversation) { c.ClientToServer.FIN = false },
		"no FIN from us":     func(c *capture.Conversation) { c.ServerToClient.FIN = false },
		"our FIN came first": func(c *capture.Conversation) { c.ServerToClient.FINTime = c.ClientToServer.FINTime.Add(-1) },
	} {
		c := *cv
		spoil(&c)
		if err := orderlyClose(&c); err == nil {
			t.Errorf("%s: orderlyClose accepted it", name)
		}
	}
}
