package main

import (
	"encoding/hex"
	"fmt"

	"github.com/openrnic/rnic/driver"
	"github.com/openrnic/rnic/driver/hostif"
	"github.com/openrnic/rnic/driver/model"
	"github.com/openrnic/rnic/driver/regs"
	"github.com/openrnic/rnic/iwarp/ddp"
	"github.com/openrnic/rnic/iwarp/mpa"
	"github.com/openrnic/rnic/iwarp/rdmap"
)

// The SQ engine's oracle (hw/rtl/rnic_sq.v, tests/sq): a program of admin
// commands, host memory writes, SQ doorbells and Read Responses from the
// peer, run through the driver's model device (driver/model) exactly as a
// driver would issue it (the admin mailbox through the BAR, doorbells as
// register writes). The answer is, for every step, what the model did in
// it: the admin status, the segments it sent (qpn, TCP sequence number,
// octets), the CQEs it wrote (cqn and octets 0..30, the phase octet left
// out as the SQ engine's completion record leaves it out) and the events
// (octets 0..14).
//
// Host memory is one buffer of mem_size octets at mem_base (the model's
// first device address, returned); the program declares its DMA windows,
// rings and MRs with admin steps as the driver does. The oracle keeps
// every CQ's consumer index at its producer index behind the model's back
// (CQ_CI doorbells after each step), so a long program never overruns a
// CQ: the SQ engine has no CQ writer, its completion records are the
// thing compared.
//
// rr_run, the Read responder's oracle (hw/rtl/rnic_rresp.v, tests/rresp),
// is the same program with one more kind of step, the peer's Read Request
// (read_req), fed to the model over the QP's stream as read_resp feeds a
// Read Response. The model answers each one inside the step (rx.go:
// readResponse): a Read Response, or a Terminate and QP_ERROR. Every
// segment of rr_run's answer is decoded through a receiver of the QP's
// transmit half: its RDMAP opcode, and a Terminate's layer/etype and code.
// The model's receive buffer posts are internal (its sink's), not answered.

type sqConfig struct {
	QPs     uint32 `json:"qps"`
	CQs     uint32 `json:"cqs"`
	STags   uint32 `json:"stags"`
	Windows uint32 `json:"windows"`
	SQLog2  uint8  `json:"sq_log2"`
	RQLog2  uint8  `json:"rq_log2"`
	CQLog2  uint8  `json:"cq_log2"`
}

type sqStep struct {
	Admin []uint32 `json:"admin,omitempty"` // opcode, ARG0..ARG7
	Mem   *struct {
		Addr uint64 `json:"addr"`
		Data string `json:"data"`
	} `json:"mem,omitempty"`
	SQDB *struct {
		QPN   uint32 `json:"qpn"`
		Value uint32 `json:"value"`
	} `json:"sqdb,omitempty"`
	// ReadResp: the peer answers the QP's oldest outstanding Read: a Read
	// Response of len octets (octet i = i*7+1) to the sink STag and TO,
	// framed as the peer's transmit half of the QP_RTS's receive
	// parameters (markers, CRC, marker base, sequence number). Bad sends
	// it to the sink STag with its key's top bit flipped: an error the
	// receive side finds in the peer's stream (a Terminate, QP_ERROR, the
	// Read completing with the error's status).
	ReadResp *struct {
		QPN      uint16 `json:"qpn"`
		SinkSTag uint32 `json:"sink_stag"`
		SinkTO   uint64 `json:"sink_to"`
		Len      int    `json:"len"`
		Bad      bool   `json:"bad"`
	} `json:"read_resp,omitempty"`
	// XFail: another engine's local fault on the QP (rnic_sq's xfail
	// input): the model fails it as its own engines' faults do.
	XFail *struct {
		QPN uint16 `json:"qpn"`
	} `json:"xfail,omitempty"`
	// ReadReq (rr_run only): the peer sends an RDMA Read Request (RFC 5040
	// 4.4) on the QP's queue 1 with the next MSN (from the QP_RTS's receive
	// MSN of queue 1), framed as ReadResp's segments are.
	ReadReq *struct {
		QPN      uint16 `json:"qpn"`
		SinkSTag uint32 `json:"sink_stag"`
		SinkTO   uint64 `json:"sink_to"`
		Size     uint32 `json:"size"`
		SrcSTag  uint32 `json:"src_stag"`
		SrcTO    uint64 `json:"src_to"`
	} `json:"read_req,omitempty"`
}

type sqSeg struct {
	QPN    uint16 `json:"qpn"`
	Seq    uint32 `json:"seq"`
	Octets string `json:"octets"`
	// rr_run only: the RDMAP opcode of the FPDU's ULPDU (RFC 5040 4.2;
	// -1 if the segment completed none) and, for a Terminate, its Layer
	// << 4 | EType and Error Code (4.8).
	Op         *int   `json:"op,omitempty"`
	LayerEType *uint8 `json:"layer_etype,omitempty"`
	Code       *uint8 `json:"code,omitempty"`
}

type sqCQE struct {
	CQN   uint16 `json:"cqn"`
	Entry string `json:"entry"`
}

type sqStepOut struct {
	Status *uint32  `json:"status,omitempty"`
	Segs   []sqSeg  `json:"segs"`
	CQEs   []sqCQE  `json:"cqes"`
	Events []string `json:"events"`
}

func init() {
	register("sq_run", "the model device runs a program of admin commands, memory writes, SQ doorbells and peer Read Responses: "+
		"{config:{qps,cqs,stags,windows,sq_log2,rq_log2,cq_log2}, mem_size, steps:[{admin:[op,a0..a7]} | {mem:{addr,data}} | "+
		"{sqdb:{qpn,value}} | {read_resp:{qpn,sink_stag,sink_to,len}} | {xfail:{qpn}}]} -> {mem_base, steps:[{status?, segs:[{qpn,seq,octets}], "+
		"cqes:[{cqn,entry}], events:[hex]}]}", func(params []byte) (any, error) { return runProgram(params, false) })
	register("rr_run", "sq_run's program with the peer's Read Requests too (the Read responder's oracle, tests/rresp): "+
		"steps as sq_run's and {read_req:{qpn,sink_stag,sink_to,size,src_stag,src_to}} -> sq_run's answer, each segment "+
		"with op (its RDMAP opcode) and, for a Terminate, layer_etype and code", func(params []byte) (any, error) {
		return runProgram(params, true)
	})
}

// runProgram runs sq_run's program (rr: rr_run's, with Read Requests, and
// every segment the model sent decoded: opcode, and a Terminate's error).
func runProgram(params []byte, rr bool) (any, error) {
	var p struct {
		Config  sqConfig `json:"config"`
		MemSize int      `json:"mem_size"`
		Steps   []sqStep `json:"steps"`
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
	peer := map[uint16]*mpa.Framer{} // the peer's transmit half, per QP
	mulpdu := map[uint16]int{}
	rrMSN := map[uint16]uint32{}         // the peer's next Read Request MSN, per QP
	decode := map[uint16]*mpa.Receiver{} // rr: the model's transmit half, per QP
	out := make([]sqStepOut, 0, len(p.Steps))
	for i, s := range p.Steps {
		var o sqStepOut
		n := 0
		if s.Admin != nil {
			n++
		}
		if s.Mem != nil {
			n++
		}
		if s.SQDB != nil {
			n++
		}
		if s.ReadResp != nil {
			n++
		}
		if s.XFail != nil {
			n++
		}
		if s.ReadReq != nil {
			if !rr {
				return nil, fmt.Errorf("step %d: read_req is rr_run's", i)
			}
			n++
		}
		if n != 1 {
			return nil, fmt.Errorf("step %d: exactly one of admin, mem, sqdb, read_resp, xfail, read_req", i)
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
				qpn := uint16(a[0])
				fl := a[1] >> 16
				peer[qpn] = mpa.NewFramerAt(fl&2 != 0, fl&8 != 0, a[3], a[5])
				mulpdu[qpn] = int(a[1] & 0xffff)
				rrMSN[qpn] = a[7]
				decode[qpn] = mpa.NewReceiverAt(fl&1 != 0, fl&4 != 0, a[2], a[4])
			}
		case s.Mem != nil:
			if err := pd.memWrite(i, s.Mem.Addr, s.Mem.Data); err != nil {
				return nil, err
			}
		case s.SQDB != nil:
			if err := d.Write32(regs.DoorbellsBase+0x8000+8*s.SQDB.QPN, s.SQDB.Value); err != nil {
				return nil, err
			}
		case s.XFail != nil:
			d.InjectLocalFault(s.XFail.QPN)
		case s.ReadResp != nil:
			r := s.ReadResp
			f := peer[r.QPN]
			if f == nil {
				return nil, fmt.Errorf("step %d: read_resp on QP %d, which has had no QP_RTS", i, r.QPN)
			}
			data := make([]byte, r.Len)
			for k := range data {
				data[k] = byte(k*7 + 1)
			}
			stag := r.SinkSTag
			if r.Bad {
				stag ^= 0x80
			}
			m := rdmap.NewReadResponse(stag, r.SinkTO, data)
			if err := peerSend(d, f, r.QPN, &m, mulpdu[r.QPN]); err != nil {
				return nil, fmt.Errorf("step %d: %v", i, err)
			}
		case s.ReadReq != nil:
			r := s.ReadReq
			f := peer[r.QPN]
			if f == nil {
				return nil, fmt.Errorf("step %d: read_req on QP %d, which has had no QP_RTS", i, r.QPN)
			}
			m := rdmap.NewReadRequest(rrMSN[r.QPN], rdmap.ReadRequest{SinkSTag: r.SinkSTag, SinkTO: r.SinkTO,
				Size: r.Size, SourceSTag: r.SrcSTag, SourceTO: r.SrcTO})
			rrMSN[r.QPN]++
			if err := peerSend(d, f, r.QPN, &m, mulpdu[r.QPN]); err != nil {
				return nil, fmt.Errorf("step %d: %v", i, err)
			}
		}
		// What the step produced: segments, CQEs, events.
		for _, sg := range d.TakeSegments() {
			seg := sqSeg{QPN: sg.QPN, Seq: sg.Seq, Octets: hex.EncodeToString(sg.Octets)}
			if rr {
				if err := decodeSeg(decode[sg.QPN], &seg, sg.Octets); err != nil {
					return nil, fmt.Errorf("step %d: the model's segment on QP %d: %v", i, sg.QPN, err)
				}
			}
			o.Segs = append(o.Segs, seg)
		}
		if o.CQEs, o.Events, err = pd.collect(); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return struct {
		MemBase uint64      `json:"mem_base"`
		Steps   []sqStepOut `json:"steps"`
	}{base, out}, nil
}

// peerSend frames the peer's message m on QP qpn (its transmit half f,
// segments of mulpdu) and feeds the FPDUs to the model, one a segment.
func peerSend(d *model.Device, f *mpa.Framer, qpn uint16, m *rdmap.Message, mulpdu int) error {
	segs, err := m.Segments(mulpdu)
	if err != nil {
		return err
	}
	var hdr [32]byte
	for {
		h, pl, ok := segs.Next()
		if !ok {
			return nil
		}
		seq := f.Seq()
		fp, err := f.AppendFPDU(nil, h.Append(hdr[:0]), pl)
		if err != nil {
			return err
		}
		if err := d.Network().SegIn(driver.Segment{QPN: qpn, Seq: seq, Octets: fp}); err != nil {
			return err
		}
	}
}

// decodeSeg reads one segment the model sent through its QP's receiver
// (the model's transmit half) and notes the opcode of the ULPDU it
// completes and a Terminate's error.
func decodeSeg(r *mpa.Receiver, seg *sqSeg, octets []byte) error {
	op := -1
	seg.Op = &op
	if r == nil {
		return nil
	}
	return r.Feed(octets, func(_ uint32, u []byte) error {
		h, pl, err := ddp.ParseHeader(u)
		if err != nil {
			return err
		}
		_, o := rdmap.ParseControl(h.ULPCtrl)
		op = int(o)
		if o == rdmap.OpTerminate {
			t, err := rdmap.ParseTerminate(pl)
			if err != nil {
				return err
			}
			le, code := uint8(t.Layer)<<4|t.EType&0xf, t.Code
			seg.LayerEType, seg.Code = &le, &code
		}
		return nil
	})
}
