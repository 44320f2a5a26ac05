package secret

import (
	"strings"
	"testing"
)

func BenchmarkCheckRemember(b *testing.B) {
	text := strings.Repeat("Leo has swim practice Thursdays at 5:30 with Ana. ", 10)[:MaxFactLen]
	for b.Loop() {
		_ = CheckRemember(text)
	}
}
