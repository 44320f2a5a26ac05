package index

import (
	"context"
	"slices"
	"testing"
	"time"
)

func BenchmarkBreakdown(b *testing.B) {
	for _, size := range [][2]int{{10000, 0}, {10000, 6}, {10000, 0}, {10000, 6}} {
		expandUpTo = size[1]
		ix := benchIndex(b, size[0], 0)
		qs := benchQueries()
		var lat [5][]time.Duration
		for round := range 3 {
			for i, q := range qs {
				t0 := time.Now()
				if _, err := ix.Search(context.Background(), q); err != nil {
					b.Fatal(err)
				}
				if round > 0 {
					lat[i%5] = append(lat[i%5], time.Since(t0))
				}
			}
		}
		for k := range lat {
			slices.Sort(lat[k])
			l := lat[k]
			b.Logf("%v type %d: p50 %v p90 %v max %v  e.g. %q", size, k, l[len(l)/2], l[len(l)*9/10], l[len(l)-1], qs[k].Text)
		}
	}
}
