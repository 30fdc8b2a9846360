package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/openrnic/rnic/iwarp/ddpsctp"
	"github.com/openrnic/rnic/iwarp/sctp"
	"github.com/openrnic/rnic/rping"
)

// runSCTP runs rping over DDP/SCTP (--transport sctp): the client's
// association goes to addr over UDP, the server listens there, one session
// per association.
func (o *rpingOpts) runSCTP(ctx context.Context, addr string, stdout, stderr, verbose, info io.Writer) error {
	scfg := sctp.Config{}
	if o.client {
		c, err := ddpsctp.Dial(ctx, addr, scfg, ddpsctp.Config{})
		if err != nil {
			if c := endCause(ctx); c != nil {
				if wasInterrupted(ctx) {
					return nil
				}
				return c
			}
			return fmt.Errorf("rping: DDP/SCTP association with %s (UDP): %w (is a server there: rnic-loader rping -s --transport sctp?)", addr, err)
		}
		res, err := o.session(ctx, rping.SCTPConn(c, nil), true, verbose, info)
		return o.report(ctx, stdout, info, res, err)
	}
	ln, err := ddpsctp.Listen(addr, scfg, ddpsctp.Config{})
	if err != nil {
		return fmt.Errorf("rping: listening for DDP/SCTP on UDP %s: %w (is another server on that port? choose another with -p)", addr, err)
	}
	defer ln.Close()
	fmt.Fprintf(info, "rping server listening for DDP/SCTP on UDP %s\n", ln.Addr())
	served := 0
	for {
		err := o.serveSCTP(ctx, ln, stdout, stderr, verbose, info)
		if err == nil || !errors.Is(err, errNotServed) {
			served++
		}
		switch {
		case wasInterrupted(ctx):
			fmt.Fprintf(info, "rping server: interrupted after %d associations\n", served)
			return nil
		case endCause(ctx) != nil:
			return endCause(ctx)
		case errors.Is(err, errNotServed):
			fmt.Fprintln(stderr, "rnic-loader:", err)
			continue
		case !o.persistent:
			return err
		case err != nil:
			fmt.Fprintln(stderr, "rnic-loader:", err)
		}
	}
}

// errNotServed marks an association the server dropped before a session:
// no DDP indication, or no session request.
var errNotServed = errors.New("rping: association dropped")

// serveSCTP serves the next association's first session.
func (o *rpingOpts) serveSCTP(ctx context.Context, ln *ddpsctp.Listener, stdout, stderr, verbose, info io.Writer) error {
	c, err := ln.Accept(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", errNotServed, err)
	}
	req, err := c.Listen(ctx)
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: no DDP Stream Session request: %v", errNotServed, err)
	}
	res, err := o.session(ctx, rping.SCTPConn(c, req), false, verbose, info)
	return o.report(ctx, stdout, info, res, err)
}
