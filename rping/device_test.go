package rping

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// modelProvider is a Device provider on a fresh model device (the driver's
// in-process model of the RNIC), set up as rnic-loader sets it up.
func modelProvider(t *testing.T) *Device {
	t.Helper()
	m, err := model.New(model.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	d, err := driver.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.InitDataPath(1 << 20); err != nil {
		t.Fatal(err)
	}
	if err := d.EnableVector(1); err != nil {
		t.Fatal(err)
	}
	r := driver.NewRelay(m.Network())
	t.Cleanup(func() {
		r.Close()
		m.Close()
	})
	return &Device{D: d, Relay: r, Vector: 1}
}

// rping with a side (or both) on the model device, the other on the
// software stack, over loopback TCP: every round's data validated on both
// sides, the -v output line for line, what MPA negotiated.
func TestClientServerOnDevice(t *testing.T) {
	for _, side := range []string{"client", "server", "both"} {
		for _, tc := range []struct {
			size, count int
			rev         uint8
			noCRC       bool
			markers     bool
		}{
			{size: MinSize, count: 2, rev: 2},
			{size: 1000, count: 30, rev: 1, markers: true},
			{size: MaxSize, count: 3, rev: 2, noCRC: true},
			{size: 5000, count: 3, rev: 2, markers: true},
		} {
			t.Run(fmt.Sprintf("%s_S%d_rev%d_nocrc%v_markers%v", side, tc.size, tc.rev, tc.noCRC, tc.markers), func(t *testing.T) {
				var cp, sp Provider
				if side != "server" {
					cp = modelProvider(t)
				}
				if side != "client" {
					sp = modelProvider(t)
				}
				var cout, sout strings.Builder
				m := mpa.Config{Rev: tc.rev, NoCRC: tc.noCRC, Markers: tc.markers}
				cs, ss, cerr, serr := pairOn(t, cp, sp,
					Config{Size: tc.size, Count: tc.count, Validate: true, Verbose: &cout, QP: verbs.QPConfig{MPA: m, EMSS: 1460}},
					Config{Size: tc.size, Validate: true, Verbose: &sout, QP: verbs.QPConfig{MPA: m, EMSS: 1460}})
				if cerr != nil || serr != nil {
					t.Fatalf("client: %v; server: %v", cerr, serr)
				}
				want := int64(tc.size * tc.count)
				if cs.Rounds != tc.count || ss.Rounds != tc.count || cs.Verified != want || ss.Verified != want {
					t.Fatalf("client %d rounds %d octets, server %d rounds %d octets; want %d, %d",
						cs.Rounds, cs.Verified, ss.Rounds, ss.Verified, tc.count, want)
				}
				if cs.Params.CRC == tc.noCRC || cs.Params.Local.Rev != tc.rev || cs.Params.TxMarkers != tc.markers {
					t.Errorf("negotiated CRC %v rev %d markers %v", cs.Params.CRC, cs.Params.Local.Rev, cs.Params.TxMarkers)
				}
				var wc, ws strings.Builder
				for i := range tc.count {
					d := string(PingData(i, tc.size)[:tc.size-1])
					fmt.Fprintf(&wc, "ping data: %s\n", d)
					fmt.Fprintf(&ws, "server ping data: %s\n", d)
				}
				if cout.String() != wc.String() || sout.String() != ws.String() {
					t.Errorf("output: client %q, server %q", trunc(cout.String()), trunc(sout.String()))
				}
			})
		}
	}
}

// The overrun knobs on a device server: the software client refuses the
// Read or the Write with a Terminate, and the device completes the server's
// work request with the peer's Terminate (REMOTE) naming it. On a device
// client: the device refuses the software server's overrun itself.
func TestOverrunOnDevice(t *testing.T) {
	for _, tc := range []struct {
		name        string
		read, write int
		want        string
	}{
		{"read", 1, 0, "base or bounds"},
		{"write", 0, 8, "base or bounds"},
	} {
		t.Run("server_"+tc.name, func(t *testing.T) {
			cs, _, cerr, serr := pairOn(t, nil, modelProvider(t), Config{Size: 64, Count: 2},
				Config{Size: 64, ReadOverrun: tc.read, WriteOverrun: tc.write})
			if serr == nil || !strings.Contains(serr.Error(), "the peer terminated the stream") || !strings.Contains(strings.ToLower(serr.Error()), tc.want) {
				t.Fatalf("server: %v, want the client's Terminate (%s)", serr, tc.want)
			}
			if cerr == nil || cs.Rounds != 0 {
				t.Fatalf("client: %v after %d rounds, want its refusal in round 0", cerr, cs.Rounds)
			}
		})
		t.Run("client_"+tc.name, func(t *testing.T) {
			cs, _, cerr, serr := pairOn(t, modelProvider(t), nil, Config{Size: 64, Count: 2},
				Config{Size: 64, ReadOverrun: tc.read, WriteOverrun: tc.write})
			if serr == nil || !strings.Contains(strings.ToLower(serr.Error()), tc.want) {
				t.Fatalf("server: %v, want the device's Terminate (%s)", serr, tc.want)
			}
			// The device's refusal is owned by no work request: the
			// flushed receive says why from the event ring.
			if cerr == nil || cs.Rounds != 0 || !strings.Contains(cerr.Error(), "the device terminated the stream") ||
				!strings.Contains(strings.ToLower(cerr.Error()), tc.want) {
				t.Fatalf("client: %v after %d rounds, want the device's refusal (%s) in round 0", cerr, cs.Rounds, tc.want)
			}
		})
	}
}
