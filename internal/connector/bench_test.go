package connector

import "testing"

// BenchmarkValidateBusTimes is one validate_build of the seed's connector: parse, checks, two esbuild passes.
func BenchmarkValidateBusTimes(b *testing.B) {
	m, f := args(b, "bus-times.json")
	for b.Loop() {
		if _, rep := Validate(m, f, Options{}); !rep.OK {
			b.Fatal(rep.Problems)
		}
	}
}
