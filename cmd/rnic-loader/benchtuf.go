package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/tuf"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// bench --framing tuf: the iWARP sessions run DDP over TUF (iwarp/tuf,
// verbs' QP.EstablishTUF) instead of MPA, and each round (and the warm-up)
// also runs the same sessions over MPA, after the TUF ones in odd rounds
// and before them in even ones (as the raw TCP baseline alternates), so
// that the record has both goodputs from the same run: the figures are TUF's,
// "framing" holds MPA's beside them and the ratio. Every octet of both is
// verified. A server tells the framing from a session's first 16 octets
// (an MPA Request or a TUF Request), so it takes no --framing.

const (
	framingMPA = "mpa"
	framingTUF = "tuf"
)

// FramingFigures is the record's "framing": null for MPA (the default),
// with --framing tuf the framing's own EMSS and MULPDU and the MPA sessions
// that ran beside it: their octets, time, goodput and verified octets, and
// TUF's goodput over MPA's.
type FramingFigures struct {
	Framing           string   `json:"framing"`
	EMSS              *int     `json:"emss"`
	MULPDU            *int     `json:"mulpdu"`
	MPAOctets         int64    `json:"mpa_octets"`
	MPASeconds        float64  `json:"mpa_seconds"`
	MPABitsPerSecond  *float64 `json:"mpa_bits_per_second"`
	MPAVerifiedOctets int64    `json:"mpa_verified_octets"`
	RatioToMPA        *float64 `json:"ratio_to_mpa"`
}

// checkFraming refuses --framing values and combinations it cannot run.
func (o *benchOpts) checkFraming(changed func(string) bool) error {
	switch o.framing {
	case framingMPA:
		return nil
	case framingTUF:
	default:
		return usagef("--framing %q: want mpa (the default) or tuf", o.framing)
	}
	switch {
	case o.sweep:
		return usagef("--framing tuf compares TUF with MPA at one size: give it without -a")
	case o.pcap != "":
		return usagef("--framing tuf: --pcap captures MPA sessions for Wireshark, which does not decode TUF; give it without --pcap")
	case changed("device") || changed("peer-device") || changed("sim") || changed("fst"):
		return usagef("--framing tuf runs on the software stack: the RNIC's receive path takes MPA (hw/rtl/tuf_rx.v is not in it yet); give it without --device and --peer-device")
	}
	return nil
}

// extraSessions is how many more iWARP sessions a size plan takes with the
// framing (the MPA sessions beside TUF's) or with a second transport.
func (o *benchOpts) extraSessions(sessions int) int {
	if o.framing == framingTUF {
		return sessions
	}
	// --transport sctp,tcp: a phase over each (benchtransport.go).
	return sessions * (len(o.transports) - 1)
}

// establishQP runs the startup of the framing on c and starts the queue
// pair's Full Operation.
func establishQP(ctx context.Context, qp *verbs.QP, c net.Conn, role mpa.Role, framing string) error {
	if framing == framingTUF {
		return qp.EstablishTUF(ctx, c, role)
	}
	return qp.Establish(ctx, c, role)
}

// framingOf tells a session's framing from its first 16 octets.
func framingOf(first []byte) string {
	if string(first) == "TUF-DDP-REQ-v001" {
		return framingTUF
	}
	return framingMPA
}

// rejectReply returns the private data of a peer's reject, of either
// framing's startup.
func rejectReply(err error) ([]byte, bool) {
	var mre *mpa.RejectError
	if errors.As(err, &mre) {
		return mre.Reply.PrivateData, true
	}
	var tre *tuf.RejectError
	if errors.As(err, &tre) {
		return tre.Reply.PrivateData, true
	}
	return nil, false
}

// setFraming records the framing's EMSS and MULPDU, once.
func (res *Result) setFraming(emss, mulpdu int) {
	res.mu.Lock()
	defer res.mu.Unlock()
	if res.Framing == nil {
		res.Framing = &FramingFigures{Framing: framingTUF}
	}
	if res.Framing.EMSS == nil {
		res.Framing.EMSS, res.Framing.MULPDU = ptr(emss), ptr(mulpdu)
	}
}

// mpaBeside runs bp's sessions over MPA after a TUF phase and adds them to
// the framing figures when measured. It fails the run on a mismatch or on
// fewer octets verified than the sessions moved.
func mpaBeside(ctx context.Context, addr string, bp benchParams, o *benchOpts, progW io.Writer, label string, res *Result, measured bool) (Stack, error) {
	if o.framing != framingTUF {
		return Stack{}, nil
	}
	mo := *o
	mo.framing = framingMPA
	ph, err := iwarpPhase(ctx, addr, bp, mo.qps, &mo, progW, label+" over MPA", res)
	if err != nil {
		return ph.stack, fmt.Errorf("MPA beside TUF: %w", err)
	}
	want := bp.Total * int64(mo.qps)
	if bp.Bidir {
		want *= 2
	}
	if ph.bad != 0 || bp.Total > 0 && ph.verified != want {
		return ph.stack, fmt.Errorf("MPA beside TUF: %d of %d octets verified, %d mismatches", ph.verified, want, ph.bad)
	}
	if measured {
		res.mu.Lock()
		if res.Framing == nil {
			res.Framing = &FramingFigures{Framing: framingTUF}
		}
		f := res.Framing
		f.MPAOctets += ph.octets()
		f.MPASeconds += ph.elapsed.Seconds()
		f.MPAVerifiedOctets += ph.verified
		if f.MPASeconds > 0 {
			f.MPABitsPerSecond = ptr(float64(f.MPAOctets) * 8 / f.MPASeconds)
		}
		res.mu.Unlock()
	}
	return ph.stack, nil
}

// finishFraming sets TUF's goodput over MPA's once the run's figures are in.
func (r *Result) finishFraming() {
	if r.Framing != nil && r.Framing.MPABitsPerSecond != nil && r.GoodputBitsPerSecond != nil && *r.Framing.MPABitsPerSecond > 0 {
		r.Framing.RatioToMPA = ptr(*r.GoodputBitsPerSecond / *r.Framing.MPABitsPerSecond)
	}
}

// printFraming prints the framing lines of the summary.
func printFraming(w io.Writer, r *Result) {
	f := r.Framing
	if f == nil {
		return
	}
	if f.EMSS != nil {
		fmt.Fprintf(w, "  framing TUF (iWARP figures above), EMSS %d, MULPDU %d; MPA beside it:\n", *f.EMSS, *f.MULPDU)
	}
	if f.MPABitsPerSecond != nil {
		fmt.Fprintf(w, "  MPA goodput     %8.3f Gbit/s  (%.3f s, %d octets verified)\n", *f.MPABitsPerSecond/1e9, f.MPASeconds, f.MPAVerifiedOctets)
	}
	if f.RatioToMPA != nil {
		fmt.Fprintf(w, "  ratio           %8.3f  (TUF / MPA)\n", *f.RatioToMPA)
	}
}
