package rdmap

import (
	"errors"

	"github.com/openrnic/rnic/iwarp/ddp"
)

// The checks RDMAP itself makes against the STag table, at the Data Source
// of an RDMA Read and at the Data Sink of a Send with Invalidate. Their
// errors are RDMAP's own (RFC 5040 section 7), not DDP's: the STag in
// question is not one that DDP placed through.

// ReadSource checks a received Read Request's Data Source STag, TO and
// size on the stream (pd, stream) and returns the octets to send back in
// the Read Response, a sub-slice of the registered memory (the caller
// copies or segments it before the region can change). A zero-size Read
// checks nothing and returns nil (RFC 5041 5.2: zero-length transfers
// check neither STag nor TO). Errors are RDMAP Remote Protection Errors
// with the Read Request header (R) and, if h is not nil, the DDP header
// (D): Invalid STag, STag not associated with RDMAP Stream, Access rights
// violation (no RemoteRead), TO wrap, Base or bounds violation.
func ReadSource(t *ddp.STagTable, pd uint32, stream uint64, h *ddp.Header, rr *ReadRequest) ([]byte, error) {
	if rr.Size == 0 {
		return nil, nil
	}
	r, err := t.Check(rr.SourceSTag, pd, stream, rr.SourceTO, uint64(rr.Size), ddp.RemoteRead)
	if err != nil {
		e := protectionError(err)
		e.RDMAHeader = rr.Append(nil)
		if h != nil {
			e.DDPHeader = h.Append(nil)
			e.SegmentLen = h.Len() + ReadRequestLen
		}
		return nil, e
	}
	data, _ := r.Slice(rr.SourceTO, uint64(rr.Size))
	return data, nil
}

// protectionError maps an STagTable check error to RDMAP's Remote
// Protection Error codes: the DDP tagged buffer codes have RDMAP
// counterparts with other numbers.
func protectionError(err error) *Error {
	var (
		de *ddp.Error
		ae *ddp.AccessError
	)
	e := &Error{Layer: LayerRDMAP, Type: ETypeRemoteProtection, Code: CodeUnspecified, Err: err}
	switch {
	case errors.As(err, &ae):
		e.Code, e.Detail = CodeAccessRights, ae.Error()
	case errors.As(err, &de):
		e.Detail = de.Detail
		switch de.Code {
		case ddp.CodeInvalidSTag:
			e.Code = CodeInvalidSTag
		case ddp.CodeBaseBounds:
			e.Code = CodeBaseBounds
		case ddp.CodeSTagNotAssociated:
			e.Code = CodeSTagNotAssociated
		case ddp.CodeTOWrap:
			e.Code = CodeTOWrap
		}
	}
	return e
}

// Invalidate carries out the invalidation a delivered Send with Invalidate
// or Send with SE and Invalidate asks for: the STag in its RsvdULP[8:39]
// must be valid and associated with the stream (pd, stream). If not, the
// error is an RDMAP Remote Protection Error, STag cannot be Invalidated,
// with the Send's DDP header.
func Invalidate(t *ddp.STagTable, pd uint32, stream uint64, h *ddp.Header) error {
	if err := t.InvalidateRemote(h.ULPInfo, pd, stream); err != nil {
		e := &Error{Layer: LayerRDMAP, Type: ETypeRemoteProtection, Code: CodeCannotInvalidate, DDPHeader: h.Append(nil), Err: err}
		var de *ddp.Error
		if errors.As(err, &de) {
			e.Detail = de.Detail
		}
		return e
	}
	return nil
}
