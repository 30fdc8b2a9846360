package model_test

import (
	"testing"

	"github.com/openrnic/rnic/driver/hostif"
)

// BenchmarkBackToBackWrite: 64 KiB RDMA Writes from one model device to
// another (markers and CRCs on, MULPDU 1000), every octet framed, checked
// and placed: the model's speed as an oracle, not a device's.
func BenchmarkBackToBackWrite(b *testing.B) {
	l := pair(b, 4, 4)
	a := l.a
	const n = 64 << 10
	fill(a.data[:n], 1)
	b.SetBytes(n)
	b.ResetTimer()
	for i := range b.N {
		a.post(hostif.SQE{Op: hostif.OpWrite, Length: n, ID: uint64(i), LKey: stag(1, fullKey), LocalTO: dataTO,
			RKey: stag(1, fullKey), RemoteTO: dataTO + n})
		for _, s := range a.m.TakeSegments() {
			if err := l.b.m.Network().SegIn(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if a.counters()["tx_octets"] == 0 || l.b.data[n+100] != a.data[100] {
		b.Fatal("nothing placed")
	}
}
