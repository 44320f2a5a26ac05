package index

import (
	"context"
	"testing"
	"time"
)

func BenchmarkSlowest(b *testing.B) {
	ix := benchIndex(b, 10000, 0)
	for _, me := range []int{6, 2} {
		maxExpand = me
		var tot [5]time.Duration
		for i, q := range benchQueries()[:50] {
			best := time.Hour
			for range 3 {
				start := time.Now()
				_, err := ix.Search(context.Background(), q)
				if err != nil {
					b.Fatal(err)
				}
				best = min(best, time.Since(start))
			}
			tot[i%5] += best
		}
		b.Logf("maxExpand %d: per type total of 10: %v", me, tot)
	}
}
