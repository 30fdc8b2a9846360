package driver

import (
	"sort"
	"strings"

	"github.com/openrnic/rnic/driver/hostif"
)

// What an operator lists (`rnic-loader stag list`, `qp list`): the objects
// this driver created on the device. The device has no command that reads
// its MR or QP tables back (docs/device.md, admin commands), so the lists
// are the driver's bookkeeping of what it wrote there: a region a peer's
// Send with Invalidate invalidated stays listed until it is deregistered,
// and a QP's state is the one the driver saw (its QP_RTS, an error event
// Events returned).

// QPState is a QP's state as the driver knows it.
type QPState uint8

const (
	QPStateCreated QPState = iota // CREATE_QP done, not yet handed a connection
	QPStateRTS                    // QP_RTS done: the device runs the connection
	QPStateError                  // a QP_ERROR or TERMINATE_RECEIVED event was read
)

func (s QPState) String() string {
	switch s {
	case QPStateCreated:
		return "created"
	case QPStateRTS:
		return "rts"
	case QPStateError:
		return "error"
	}
	return "unknown"
}

// MRInfo describes a registered region.
type MRInfo struct {
	Index  uint16
	STag   uint32
	PD     uint16
	TO     uint64 // the region's first tagged offset (its device address)
	Len    uint64
	Access uint8 // hostif.Access* bits
}

// AccessString spells access bits as rdma-core's tools do: LR, LW, RR, RW
// (local read and write, remote read and write), comma-separated.
func AccessString(a uint8) string {
	var p []string
	for _, x := range []struct {
		bit  uint8
		name string
	}{{hostif.AccessLocalRead, "LR"}, {hostif.AccessLocalWrite, "LW"}, {hostif.AccessRemoteRead, "RR"}, {hostif.AccessRemoteWrite, "RW"}} {
		if a&x.bit != 0 {
			p = append(p, x.name)
		}
	}
	if len(p) == 0 {
		return "-"
	}
	return strings.Join(p, ",")
}

// QPInfo describes a queue pair.
type QPInfo struct {
	QPN            uint16
	PD             uint16
	State          QPState
	SQLog2, RQLog2 uint8
	SendCQ, RecvCQ uint16
	SQPI, RQPI     uint16 // the producer indices the driver rang last
	SQOutstanding  int    // send entries posted and not yet completed
	RQOutstanding  int    // receives posted and not yet completed
}

// MRs lists the registered regions by index.
func (d *Device) MRs() []MRInfo {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]MRInfo, 0, len(v.mrs))
	for _, mr := range v.mrs {
		out = append(out, MRInfo{Index: mr.Index, STag: mr.STag, PD: mr.pd.ID, TO: mr.TO, Len: mr.Len, Access: mr.Access})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// QPs lists the queue pairs by number.
func (d *Device) QPs() []QPInfo {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]QPInfo, 0, len(v.qps))
	for _, qp := range v.qps {
		out = append(out, QPInfo{QPN: qp.N, PD: qp.pd.ID, State: qp.state, SQLog2: qp.sqLog2, RQLog2: qp.rqLog2,
			SendCQ: qp.sendCQ, RecvCQ: qp.recvCQ, SQPI: qp.sqPI, RQPI: qp.rqPI,
			SQOutstanding: len(qp.sqOut), RQOutstanding: qp.rqOut})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].QPN < out[j].QPN })
	return out
}

// MR returns the registered region named by stag (nil: none).
func (d *Device) MR(stag uint32) *MR {
	v := &d.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if mr := v.mrs[uint16(stag>>8)]; mr != nil && mr.STag == stag {
		return mr
	}
	return nil
}
