package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"github.com/openrnic/rnic/iwarp/rdmap"
	"github.com/openrnic/rnic/iwarp/verbs"
)

// The stack's counters (verbs.QP.Stats) of a bench run, summed over its
// sessions: the client's own, and the server's as it reports them in its
// last control message (ctlStats).

// statsWireLen is the length of the counters in a ctlStats message: tx and
// rx octets and FPDUs, tx and rx messages by opcode, CRC and marker
// errors, as big-endian 64-bit numbers. A session that sends them ended
// well, so it has no Terminate to report.
const statsWireLen = (4 + 2*rdmap.NumOpcodes + 2) * 8

func encodeStats(s verbs.Stats) []byte {
	b := make([]byte, 0, statsWireLen)
	for _, v := range []int64{s.TxOctets, s.RxOctets, s.TxFPDUs, s.RxFPDUs} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	for _, m := range [][rdmap.NumOpcodes]int64{s.TxMessages, s.RxMessages} {
		for _, v := range m {
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		}
	}
	b = binary.BigEndian.AppendUint64(b, uint64(s.CRCErrors))
	return binary.BigEndian.AppendUint64(b, uint64(s.MarkerErrors))
}

func decodeStats(b []byte) (verbs.Stats, error) {
	var s verbs.Stats
	if len(b) != statsWireLen {
		return s, fmt.Errorf("bench: the server's counters are %d octets, want %d (a bench of another version?)", len(b), statsWireLen)
	}
	next := func() int64 {
		v := int64(binary.BigEndian.Uint64(b))
		b = b[8:]
		return v
	}
	s.TxOctets, s.RxOctets, s.TxFPDUs, s.RxFPDUs = next(), next(), next(), next()
	for i := range s.TxMessages {
		s.TxMessages[i] = next()
	}
	for i := range s.RxMessages {
		s.RxMessages[i] = next()
	}
	s.CRCErrors, s.MarkerErrors = next(), next()
	return s, nil
}

// StackCounters are one side's counters summed over the sessions of a
// run (JSON "stack.client", "stack.server").
type StackCounters struct {
	// Sessions is how many queue pairs' counters are summed here.
	Sessions int   `json:"sessions"`
	TxOctets int64 `json:"tx_octets"`
	RxOctets int64 `json:"rx_octets"`
	TxFPDUs  int64 `json:"tx_fpdus"`
	RxFPDUs  int64 `json:"rx_fpdus"`
	// Messages by RDMAP opcode name (rdmap.Opcode.String), every opcode
	// present.
	TxMessages   map[string]int64 `json:"tx_messages"`
	RxMessages   map[string]int64 `json:"rx_messages"`
	CRCErrors    int64            `json:"crc_errors"`
	MarkerErrors int64            `json:"marker_errors"`
	// Terminates by kind: the layer and the spec's name of the error
	// (rdmap.ErrorName), e.g. "DDP: Tagged Buffer Error: Base or bounds
	// violation"; empty when there were none.
	TerminatesSent     map[string]int64 `json:"terminates_sent"`
	TerminatesReceived map[string]int64 `json:"terminates_received"`
}

// Stack is the "stack" object of a bench record. Server is null when the
// server reported no counters (a session that failed before its end).
type Stack struct {
	Client *StackCounters `json:"client"`
	Server *StackCounters `json:"server"`
}

func newStackCounters() *StackCounters {
	c := &StackCounters{TxMessages: map[string]int64{}, RxMessages: map[string]int64{},
		TerminatesSent: map[string]int64{}, TerminatesReceived: map[string]int64{}}
	for op := rdmap.Opcode(0); op < rdmap.NumOpcodes; op++ {
		c.TxMessages[op.String()] = 0
		c.RxMessages[op.String()] = 0
	}
	return c
}

// terminateKind names a Terminate by its layer and error.
func terminateKind(t *rdmap.Terminate) string {
	return fmt.Sprintf("%s: %s", t.Layer, rdmap.ErrorName(t.Layer, t.EType, t.Code))
}

// add adds one queue pair's counters.
func (c *StackCounters) add(s verbs.Stats) {
	c.Sessions++
	c.TxOctets += s.TxOctets
	c.RxOctets += s.RxOctets
	c.TxFPDUs += s.TxFPDUs
	c.RxFPDUs += s.RxFPDUs
	for op := rdmap.Opcode(0); op < rdmap.NumOpcodes; op++ {
		c.TxMessages[op.String()] += s.TxMessages[op]
		c.RxMessages[op.String()] += s.RxMessages[op]
	}
	c.CRCErrors += s.CRCErrors
	c.MarkerErrors += s.MarkerErrors
	if s.TerminateSent != nil {
		c.TerminatesSent[terminateKind(s.TerminateSent)]++
	}
	if s.TerminateReceived != nil {
		c.TerminatesReceived[terminateKind(s.TerminateReceived)]++
	}
}

// merge adds another sum.
func (c *StackCounters) merge(o *StackCounters) {
	if o == nil {
		return
	}
	c.Sessions += o.Sessions
	c.TxOctets += o.TxOctets
	c.RxOctets += o.RxOctets
	c.TxFPDUs += o.TxFPDUs
	c.RxFPDUs += o.RxFPDUs
	for k, v := range o.TxMessages {
		c.TxMessages[k] += v
	}
	for k, v := range o.RxMessages {
		c.RxMessages[k] += v
	}
	c.CRCErrors += o.CRCErrors
	c.MarkerErrors += o.MarkerErrors
	for k, v := range o.TerminatesSent {
		c.TerminatesSent[k] += v
	}
	for k, v := range o.TerminatesReceived {
		c.TerminatesReceived[k] += v
	}
}

// addStats adds a session's counters to st: the client's always, the
// server's when it reported them.
func (st *Stack) addStats(client verbs.Stats, server *verbs.Stats) {
	if st.Client == nil {
		st.Client = newStackCounters()
	}
	st.Client.add(client)
	if server != nil {
		if st.Server == nil {
			st.Server = newStackCounters()
		}
		st.Server.add(*server)
	}
}

// merge adds another record's counters.
func (st *Stack) merge(o Stack) {
	if o.Client != nil {
		if st.Client == nil {
			st.Client = newStackCounters()
		}
		st.Client.merge(o.Client)
	}
	if o.Server != nil {
		if st.Server == nil {
			st.Server = newStackCounters()
		}
		st.Server.merge(o.Server)
	}
}

// printStack prints the counters as a table, client and server side by
// side (--stats).
func printStack(w io.Writer, st Stack) {
	if st.Client == nil {
		fmt.Fprintf(w, "  stack counters: no session\n")
		return
	}
	srv := func(f func(*StackCounters) int64) string {
		if st.Server == nil {
			return "-"
		}
		return fmt.Sprint(f(st.Server))
	}
	sessions := fmt.Sprint(st.Client.Sessions)
	if st.Server != nil {
		sessions += fmt.Sprintf(", server %d", st.Server.Sessions)
	}
	fmt.Fprintf(w, "  stack counters (sessions: client %s; the server's as of its last message):\n", sessions)
	fmt.Fprintf(w, "    %-44s %16s %16s\n", "", "client", "server")
	row := func(name string, f func(*StackCounters) int64) {
		fmt.Fprintf(w, "    %-44s %16d %16s\n", name, f(st.Client), srv(f))
	}
	row("tx octets", func(c *StackCounters) int64 { return c.TxOctets })
	row("rx octets", func(c *StackCounters) int64 { return c.RxOctets })
	row("tx FPDUs", func(c *StackCounters) int64 { return c.TxFPDUs })
	row("rx FPDUs", func(c *StackCounters) int64 { return c.RxFPDUs })
	for op := rdmap.Opcode(0); op < rdmap.NumOpcodes; op++ {
		name := op.String()
		tx := func(c *StackCounters) int64 { return c.TxMessages[name] }
		rx := func(c *StackCounters) int64 { return c.RxMessages[name] }
		if tx(st.Client)+rx(st.Client) == 0 && (st.Server == nil || tx(st.Server)+rx(st.Server) == 0) {
			continue
		}
		row("tx "+name, tx)
		row("rx "+name, rx)
	}
	row("CRC errors", func(c *StackCounters) int64 { return c.CRCErrors })
	row("marker errors", func(c *StackCounters) int64 { return c.MarkerErrors })
	terms := func(label string, f func(*StackCounters) map[string]int64) {
		kinds := map[string]bool{}
		for k := range f(st.Client) {
			kinds[k] = true
		}
		if st.Server != nil {
			for k := range f(st.Server) {
				kinds[k] = true
			}
		}
		if len(kinds) == 0 {
			row(label, func(*StackCounters) int64 { return 0 })
			return
		}
		names := make([]string, 0, len(kinds))
		for k := range kinds {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(w, "    %s\n", label+": "+k)
			row("", func(c *StackCounters) int64 { return f(c)[k] })
		}
	}
	terms("Terminates sent", func(c *StackCounters) map[string]int64 { return c.TerminatesSent })
	terms("Terminates received", func(c *StackCounters) map[string]int64 { return c.TerminatesReceived })
}
