package mpa

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// deadlineConn records the deadlines set on it. A deadline in the past
// (the one a cancelled context sets) waits, up to a second, for the next
// clearing of the deadline, so that a cancellation racing the end of the
// startup lands in the worst order.
type deadlineConn struct {
	net.Conn
	mu        sync.Mutex
	last      time.Time
	cleared   chan struct{}
	clearOnce sync.Once
	pastSet   chan struct{}
	pastOnce  sync.Once
	read      int
	cancelAt  int
	cancel    context.CancelFunc
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	if !t.IsZero() && t.Before(time.Unix(2, 0)) {
		select {
		case <-c.cleared:
		case <-time.After(time.Second):
		}
		defer c.pastOnce.Do(func() { close(c.pastSet) })
	}
	if t.IsZero() {
		defer c.clearOnce.Do(func() { close(c.cleared) })
	}
	c.mu.Lock()
	c.last = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

// Read cancels the startup's context the moment the whole Reply is in.
func (c *deadlineConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read += n
	if c.read >= c.cancelAt && c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	return n, err
}

// Regression: a cancellation that raced the end of the startup could run
// its "deadline in the past" after the startup had cleared the deadline,
// leaving the connection's deadline in the past: every later read of Full
// Operation then failed at once.
func TestStartupDeadlineNotLeftInThePast(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	var rcfg Config
	reply := rcfg.frame(true)
	rb, err := reply.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dc := &deadlineConn{Conn: a, cleared: make(chan struct{}), pastSet: make(chan struct{}), cancelAt: len(rb), cancel: cancel}
	go func() {
		Respond(context.Background(), b, Config{})
	}()
	if _, err := Initiate(ctx, dc, Config{}); err != nil {
		t.Fatalf("Initiate: %v", err)
	}
	select {
	case <-dc.pastSet:
	case <-time.After(3 * time.Second):
		t.Fatal("the cancellation never set its deadline")
	}
	dc.mu.Lock()
	last := dc.last
	dc.mu.Unlock()
	if !last.IsZero() {
		t.Fatalf("after the startup the connection's deadline is %v; want none", last)
	}
}
