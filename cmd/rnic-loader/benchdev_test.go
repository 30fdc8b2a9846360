package main

import (
	"strings"
	"testing"
)

func devOpts(device, peer, op string, size int64, changed ...string) *benchOpts {
	o := &benchOpts{op: op, size: newSize(size, 1, maxMessageSize, "message size"), total: newSize(256<<20, 1, maxTotal, "total"),
		mpaRev: 2, seed: 1, peerDevice: peer}
	o.dev.device = device
	set := map[string]bool{}
	for _, c := range changed {
		set[c] = true
	}
	o.changed = func(f string) bool { return set[f] }
	return o
}

// A device run's amount and window: 1 MiB with a sim, 64 MiB with the
// model, a window of about 1 MiB, and a simulated server given at most 16
// Sends at once (rnic_rq's posts in ddp_rx; the 17th finds no buffer).
func TestDevPlan(t *testing.T) {
	for _, c := range []struct {
		device, peer, op string
		size             int64
		total            int64
		window           int
	}{
		{"sim", "soft", "write", 64 << 10, 1 << 20, 16},
		{"model", "soft", "write", 64 << 10, 64 << 20, 16},
		{"soft", "model", "read", 100, 64 << 20, 512},
		{"soft", "sim", "send", 4096, 1 << 20, 16},
		{"sim", "soft", "send", 4096, 1 << 20, 256},
		{"sim", "sim", "read", 1 << 20, 1 << 20, 1},
	} {
		p, err := devOpts(c.device, c.peer, c.op, c.size).devPlan()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if p.total != c.total || p.window != c.window {
			t.Errorf("%+v: total %d, window %d", c, p.total, p.window)
		}
	}
	o := devOpts("soft", "sim", "send", 4096, "window")
	o.window = 16
	if _, err := o.devPlan(); err != nil {
		t.Errorf("a window of 16 Sends into a sim: %v", err)
	}
	o.window = 17
	if _, err := o.devPlan(); err == nil || !strings.Contains(err.Error(), "at most 16 messages") {
		t.Errorf("a window of 17 Sends into a sim: %v", err)
	}
}

// The ends' MPA offers: markers where --markers-to says, and a device end
// offers the IRD it serves.
func TestDevMPAConfig(t *testing.T) {
	o := devOpts("sim", "soft", "read", 4096)
	o.markersTo = "server"
	cli, srv := o.mpaConfigFor("client"), o.mpaConfigFor("server")
	if cli.Markers || !srv.Markers {
		t.Errorf("--markers-to server: client asks %v, server %v", cli.Markers, srv.Markers)
	}
	if cli.IRD != devIRD || srv.IRD != 32 {
		t.Errorf("IRD offered: the sim client %d, the soft server %d", cli.IRD, srv.IRD)
	}
	o = devOpts("soft", "model", "read", 4096)
	o.markers = true
	cli, srv = o.mpaConfigFor("client"), o.mpaConfigFor("server")
	if !cli.Markers || !srv.Markers || cli.IRD != 32 || srv.IRD != devIRD {
		t.Errorf("--markers, model server: client %+v, server %+v", cli, srv)
	}
}
