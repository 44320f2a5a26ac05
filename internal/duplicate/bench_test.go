package duplicate

import (
	"fmt"
	"testing"
)

// BenchmarkFind weighs a box of 10k people over a hundred given names: every name has ~100 namesakes.
func BenchmarkFind(b *testing.B) {
	var box []Subject
	for i := 0; i < 10000; i++ {
		title := fmt.Sprintf("Given%d Family%d", i%100, i/100)
		box = append(box, Subject{Name: fmt.Sprintf("entity-given%d-family%d", i%100, i/100), Kind: "person", Title: title,
			Maps: []string{"moc-people"}, Links: []string{fmt.Sprintf("entity-place-%d", i%50)},
			Facts: []string{fmt.Sprintf("%s works with colleague%d on project%d in Lisbon.", title, i%37, i%41)}})
	}
	b.ResetTimer()
	for b.Loop() {
		Find(box)
	}
}
