package ddp

import (
	"errors"
	"testing"
)

// StartMSN moves a queue's first MSN (a stream taken over after its RTR);
// it is refused once a buffer is posted.
func TestSinkStartMSN(t *testing.T) {
	s := NewSink(1, 1, NewSTagTable(), 3)
	if err := s.StartMSN(0, 2); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if msn, err := s.Post(0, buf, 7); err != nil || msn != 2 {
		t.Fatalf("Post: MSN %d, %v; want 2", msn, err)
	}
	if err := s.StartMSN(0, 5); err == nil {
		t.Fatal("StartMSN with a buffer posted")
	}
	if err := s.StartMSN(3, 1); err == nil {
		t.Fatal("StartMSN on QN 3 of 3 queues")
	}
	h := Header{DV: Version, Last: true, QN: 0, MSN: 1}
	if _, err := s.Receive(&h, []byte("x"), 0); !errors.Is(err, &Error{Type: TypeUntaggedBuffer, Code: CodeMSNRange}) {
		t.Fatalf("MSN 1 after StartMSN 2: %v", err)
	}
	s = NewSink(1, 1, NewSTagTable(), 3)
	s.StartMSN(0, 2)
	s.Post(0, buf, 7)
	h.MSN = 2
	if d, err := s.Receive(&h, []byte("x"), 0); err != nil || !d.Delivered || d.ID != 7 {
		t.Fatalf("MSN 2: %+v, %v", d, err)
	}
}
