package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// dialError says what really went wrong when a client could not reach
// addr, and what to do about it: a name that does not resolve, a host that
// refused (nothing listens on that port), no answer in time, or an
// unreachable network. next is the command that starts a server there.
func dialError(ctx context.Context, addr string, err error, next string) error {
	var dns *net.DNSError
	switch {
	case context.Cause(ctx) != nil && ctx.Err() != nil:
		// The run's end (an interrupt or --timeout) is reported as such by
		// the caller, which checks the cause.
		return fmt.Errorf("connecting to %s: %w", addr, err)
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return fmt.Errorf("cannot resolve the host of %s: no such host (%v); check the name, or give an IP address", addr, err)
		}
		return fmt.Errorf("cannot resolve the host of %s: the name lookup failed (%v); check the name and the resolver, or give an IP address", addr, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s refused the connection: nothing listens on that port; start a server there (%s) or check the port", addr, next)
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) || isTimeout(err):
		return fmt.Errorf("no answer from %s: the connection timed out (%v); is the host up, and does a firewall drop the port?", addr, err)
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return fmt.Errorf("%s is unreachable (%v): check the address and the route to it", addr, err)
	}
	return fmt.Errorf("connecting to %s: %w", addr, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
