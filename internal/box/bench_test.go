package box

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDo measures acknowledged (committed) writes per second with 1, 8 and 32 writers in one
// process; each write appends one line to an inbox day, as remember does.
func BenchmarkDo(b *testing.B) {
	for _, writers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			bx := mustInit(b, Options{})
			var n atomic.Int64
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n.Add(1) <= int64(b.N) {
						p := fmt.Sprintf("/_content/inbox/w%02d.md", w)
						_, err := bx.Do(context.Background(), Change{Actor: owner, Op: "remember", Summary: "a line",
							Apply: func(tx *Tx) error {
								d, _ := tx.Read(p)
								return tx.Write(p, append(d, fmt.Sprintf("- line %d\n", len(d))...))
							}})
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
		})
	}
}

// BenchmarkProcesses measures acknowledged writes per second with separate writer processes (each
// writes one file after another through the spool), so cross-process group commit is what is measured.
func BenchmarkProcesses(b *testing.B) {
	for _, procs := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			bx := mustInit(b, Options{})
			each := max(1, b.N/procs)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for i := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := child(nil, bx.Root, fmt.Sprintf("b%d", i), each)
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Errorf("child: %v\n%s", err, out)
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(each*procs)/time.Since(start).Seconds(), "writes/s")
			b.ReportMetric(float64(each*procs)/float64(commits(b, bx)-1), "writes/commit")
		})
	}
}
