package main

import (
	"fmt"

	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// The RQ engine's oracle (hw/rtl/rnic_rq.v, tests/rq): sq_run's program
// (admin commands, host memory writes) with RQ doorbells and the peer's
// Sends, run through the model device as a driver and a peer would. A Send
// is framed as the peer's transmit half of the QP_RTS's receive parameters
// (markers, CRC, marker base, sequence number, the Send MSN from QP_RTS's
// ARG6 on) and fed to the model over the QP's stream, so the model's
// ulpdu (EventSend) completes it into the oldest posted receive, or finds
// it in error (longer than that buffer, none posted) and fails the QP.
//
// The answer is, per step: the admin status, the RQ entries the model
// posted to its sink (qpn, queue 0, device address, length, WR ID, in
// order: hw/rtl/rnic_rq.v's post_* records), the CQEs (cqn and octets
// 0..30) and the events (octets 0..14). CQs are kept drained as in sq_run.

type rqStep struct {
	Admin []uint32 `json:"admin,omitempty"` // opcode, ARG0..ARG7
	Mem   *struct {
		Addr uint64 `json:"addr"`
		Data string `json:"data"`
	} `json:"mem,omitempty"`
	RQDB *struct {
		QPN   uint32 `json:"qpn"`
		Value uint32 `json:"value"`
	} `json:"rqdb,omitempty"`
	// Send: the peer sends a message of len octets (octet i = i*5+3) with
	// RDMAP opcode op (3 Send, 4 Send with Invalidate, 5 with SE, 6 with SE
	// and Invalidate; RFC 5040 4.2) and, for 4 and 6, the STag inv.
	Send *struct {
		QPN uint16 `json:"qpn"`
		Op  uint8  `json:"op"`
		Len int    `json:"len"`
		Inv uint32 `json:"inv"`
	} `json:"send,omitempty"`
}

type rqPost struct {
	QPN  uint16 `json:"qpn"`
	QN   uint8  `json:"qn"`
	Addr uint64 `json:"addr"`
	Len  uint32 `json:"len"`
	ID   uint64 `json:"id"`
}

type rqStepOut struct {
	Status *uint32  `json:"status,omitempty"`
	Posts  []rqPost `json:"posts"`
	CQEs   []sqCQE  `json:"cqes"`
	Events []string `json:"events"`
}

func init() {
	register("rq_run", "the model device runs a program of admin commands, memory writes, RQ doorbells and peer Sends: "+
		"{config:{qps,cqs,stags,windows,sq_log2,rq_log2,cq_log2}, mem_size, steps:[{admin:[op,a0..a7]} | "+
		"{mem:{addr,data}} | {rqdb:{qpn,value}} | {send:{qpn,op,len,inv}}]} -> {mem_base, steps:[{status?, "+
		"posts:[{qpn,qn,addr,len,id}], cqes:[{cqn,entry}], events:[hex]}]}", runRQProgram)
}

// rqPeer is the peer's transmit half of a QP: its framer, MULPDU and next
// Send MSN.
type rqPeer struct {
	f      *mpa.Framer
	mulpdu int
	msn    uint32
}

func runRQProgram(params []byte) (any, error) {
	var p struct {
		Config  sqConfig `json:"config"`
		MemSize int      `json:"mem_size"`
		Steps   []rqStep `json:"steps"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	pd, err := newProgDev(p.Config, p.MemSize)
	if err != nil {
		return nil, err
	}
	defer pd.d.Close()
	d, base := pd.d, pd.base
	d.RecordRQPosts()
	peer := map[uint16]*rqPeer{}
	out := make([]rqStepOut, 0, len(p.Steps))
	for i, s := range p.Steps {
		var o rqStepOut
		n := 0
		for _, set := range []bool{s.Admin != nil, s.Mem != nil, s.RQDB != nil, s.Send != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("step %d: exactly one of admin, mem, rqdb, send", i)
		}
		switch {
		case s.Admin != nil:
			code, err := pd.admin(i, s.Admin)
			if err != nil {
				return nil, err
			}
			o.Status = &code
			if s.Admin[0] == uint32(hostif.OpQPRTS) && code == 0 {
				a := s.Admin[1:]
				fl := a[1] >> 16
				peer[uint16(a[0])] = &rqPeer{f: mpa.NewFramerAt(fl&2 != 0, fl&8 != 0, a[3], a[5]),
					mulpdu: int(a[1] & 0xffff), msn: a[6]}
			}
		case s.Mem != nil:
			if err := pd.memWrite(i, s.Mem.Addr, s.Mem.Data); err != nil {
				return nil, err
			}
		case s.RQDB != nil:
			if err := d.Write32(regs.DoorbellsBase+0x8000+8*s.RQDB.QPN+4, s.RQDB.Value); err != nil {
				return nil, err
			}
		case s.Send != nil:
			sd := s.Send
			pr := peer[sd.QPN]
			if pr == nil {
				return nil, fmt.Errorf("step %d: send on QP %d, which has had no QP_RTS", i, sd.QPN)
			}
			data := make([]byte, sd.Len)
			for k := range data {
				data[k] = byte(k*5 + 3)
			}
			var m rdmap.Message
			switch rdmap.Opcode(sd.Op) {
			case rdmap.OpSend:
				m = rdmap.NewSend(pr.msn, data)
			case rdmap.OpSendInvalidate:
				m = rdmap.NewSendInvalidate(pr.msn, sd.Inv, data)
			case rdmap.OpSendSE:
				m = rdmap.NewSendSE(pr.msn, data)
			case rdmap.OpSendSEInvalidate:
				m = rdmap.NewSendSEInvalidate(pr.msn, sd.Inv, data)
			default:
				return nil, fmt.Errorf("step %d: send op %d is none of 3..6", i, sd.Op)
			}
			pr.msn++
			if err := peerSend(d, pr.f, sd.QPN, &m, pr.mulpdu); err != nil {
				return nil, fmt.Errorf("step %d: %v", i, err)
			}
		}
		// What the step produced: posts, CQEs, events (the segments,
		// Terminates, are rnic_tx's business: dropped).
		d.TakeSegments()
		for _, ps := range d.TakeRQPosts() {
			o.Posts = append(o.Posts, rqPost{QPN: ps.QPN, QN: 0, Addr: ps.Addr, Len: ps.Len, ID: ps.ID})
		}
		if o.CQEs, o.Events, err = pd.collect(); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return struct {
		MemBase uint64      `json:"mem_base"`
		Steps   []rqStepOut `json:"steps"`
	}{base, out}, nil
}
