package main

import (
	"fmt"
	"io"
	"strings"
)

// What bench prints for people: a summary for one size, a table for -a.
// Goodput is in Gbit/s, message rates in Mmsg/s (millions of messages a
// second, perftest's Mpps).

func onOff(b *bool) string {
	if *b {
		return "on"
	}
	return "off"
}

// mmsg says a message rate in millions of messages a second.
func mmsg(perSecond float64) string { return fmt.Sprintf("%.4f Mmsg/s", perSecond/1e6) }

// shape says how the run was spread: queue pairs and directions, or
// nothing for one queue pair one way.
func shape(r *Result) string {
	var parts []string
	if r.QPs > 1 {
		parts = append(parts, fmt.Sprintf("%d queue pairs", r.QPs))
	}
	if r.Bidir {
		parts = append(parts, "both directions")
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ") + " (amounts per queue pair and direction)"
}

func mpaLine(w io.Writer, r *Result) {
	if mpaOrSCTPLine(w, r) {
		return
	}
	if r.MPARev == nil {
		fmt.Fprintf(w, "  MPA not negotiated\n")
	} else {
		fmt.Fprintf(w, "  MPA rev %d, markers %s, CRC %s, EMSS %d, MULPDU %d\n", *r.MPARev, onOff(r.Markers), onOff(r.CRC), *r.EMSS, *r.MULPDU)
	}
}

func printResult(w io.Writer, r *Result) {
	warm := ""
	switch {
	case ptrOr(r.WarmupOctets, 0) > 0:
		warm = fmt.Sprintf(", after a warm-up of %s", sayOctets(*r.WarmupOctets))
	case r.WarmupSeconds != nil:
		warm = fmt.Sprintf(", after a warm-up of %.3f s", *r.WarmupSeconds)
	}
	size := sayOctets(*r.MessageOctets)
	if r.TotalOctets != nil {
		fmt.Fprintf(w, "%s: %d messages of %s, %s in %d rounds%s%s\n",
			r.Op, *r.Messages, size, sayOctets(*r.TotalOctets), len(r.Rounds), warm, shape(r))
	} else {
		fmt.Fprintf(w, "%s: messages of %s for %.3f s on each path in %d rounds%s%s\n",
			r.Op, size, *r.DurationSeconds, len(r.Rounds), warm, shape(r))
	}
	mpaLine(w, r)
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted: %d rounds completed, %s measured\n", len(r.Rounds), sayOctets(r.MeasuredOctets))
	}
	if r.GoodputBitsPerSecond == nil {
		fmt.Fprintf(w, "  no round completed: no goodput to report\n")
	} else {
		fmt.Fprintf(w, "  iWARP goodput   %8.3f Gbit/s  (%s, %d messages, %.3f s)\n", *r.GoodputBitsPerSecond/1e9, mmsg(*r.MessagesPerSecond), r.MeasuredMessages, *r.Seconds)
		if len(r.Rounds) > 1 {
			fmt.Fprintf(w, "  iWARP peak      %8.3f Gbit/s  (the best round)\n", *r.PeakBitsPerSecond/1e9)
		}
		if r.Bidir {
			for _, d := range r.Directions {
				fmt.Fprintf(w, "    %-13s %8.3f Gbit/s  (%s; %s to %s)\n", d.Initiator+"'s "+r.Op+"s", *d.GoodputBitsPerSecond/1e9, mmsg(*d.MessagesPerSecond), d.DataFrom, d.DataTo)
			}
		}
		if r.QPs > 1 {
			for _, q := range r.QueuePairs {
				fmt.Fprintf(w, "    queue pair %-3d %8.3f Gbit/s  (%s, %.3f s)\n", q.QP, q.GoodputBitsPerSecond/1e9, mmsg(q.MessagesPerSecond), q.Seconds)
			}
		}
	}
	if r.RawTCPBitsPerSecond != nil {
		fmt.Fprintf(w, "  raw TCP goodput %8.3f Gbit/s  (%s, %.3f s)\n", *r.RawTCPBitsPerSecond/1e9, mmsg(*r.RawTCPMessagesPerSecond), *r.RawTCPSeconds)
		if r.Ratio != nil {
			fmt.Fprintf(w, "  ratio           %8.3f  (iWARP / raw TCP)\n", *r.Ratio)
		}
	}
	printFraming(w, r)
	if len(r.Rounds) > 1 {
		fmt.Fprintf(w, "  per round (Gbit/s; the side named first ran first):\n")
		for _, rd := range r.Rounds {
			iw := fmt.Sprintf("iWARP %.3f (%s)", rd.GoodputBitsPerSecond/1e9, mmsg(rd.MessagesPerSecond))
			if rd.RawTCPBitsPerSecond == nil {
				fmt.Fprintf(w, "    round %d: %s\n", rd.Round, iw)
				continue
			}
			raw := fmt.Sprintf("raw TCP %.3f", *rd.RawTCPBitsPerSecond/1e9)
			if rd.RawFirst {
				iw, raw = raw, iw
			}
			fmt.Fprintf(w, "    round %d: %s, %s, ratio %.3f\n", rd.Round, iw, raw, *rd.Ratio)
		}
	}
	fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedBytes, r.Mismatches)
	if r.Pcap != nil {
		fmt.Fprintf(w, "  pcap written to %s\n", *r.Pcap)
	}
	if r.Note != nil {
		fmt.Fprintf(w, "  note: %s\n", *r.Note)
	}
}

// The -a table: perftest's columns, then the baseline's.
const sweepColumns = " %-10s %-14s %-18s %-21s %-15s %-18s %s\n"

func printSweepHeader(w io.Writer, r *Result) {
	how := ""
	switch {
	case r.Iterations != nil:
		how = fmt.Sprintf("%d messages", *r.Iterations)
	case r.DurationSeconds != nil:
		how = fmt.Sprintf("%.3f s", *r.DurationSeconds)
	}
	rounds := 0
	if len(r.Sizes) > 0 {
		rounds = len(r.Sizes[0].Rounds)
	}
	fmt.Fprintf(w, "%s, sizes %d octets to %s: %s per size and path in %d rounds%s\n", r.Op, sweepMin, shortOctets(sweepMax), how, rounds, shape(r))
	mpaLine(w, r)
	fmt.Fprintf(w, "  BW peak is the best round's goodput, BW average all rounds' octets over their time; Gb/sec are 10^9 bits a second, Mpps 10^6 messages\n")
	fmt.Fprintf(w, sweepColumns, "#bytes", "#iterations", "BW peak[Gb/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]", "raw TCP[Gb/sec]", "ratio")
}

func printSweepRow(w io.Writer, f *Figures) {
	f3 := func(p *float64, scale float64, prec int) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.*f", prec, *p/scale)
	}
	fmt.Fprintf(w, sweepColumns, fmt.Sprint(*f.MessageOctets), fmt.Sprint(f.MeasuredMessages),
		f3(f.PeakBitsPerSecond, 1e9, 3), f3(f.GoodputBitsPerSecond, 1e9, 3), f3(f.MessagesPerSecond, 1e6, 4),
		f3(f.RawTCPBitsPerSecond, 1e9, 3), f3(f.Ratio, 1, 3))
}

func printSweepEnd(w io.Writer, r *Result) {
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted after %d sizes\n", len(r.Sizes))
	}
	fmt.Fprintf(w, "  verified %d octets, %d mismatches\n", r.VerifiedBytes, r.Mismatches)
}
