package validate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchBox is a box of n notes in the shape bench/validate generates (smaller: no documents or lists).
func benchBox(b *testing.B, n int) string {
	b.Helper()
	root := newBox(b)
	for i := range n {
		name := fmt.Sprintf("entity-person-%05d", i)
		a, c := fmt.Sprintf("entity-person-%05d", (i+1)%n), fmt.Sprintf("entity-person-%05d", (i*7+3)%n)
		write(b, root, "_content/memory/notes/"+name+".md", fmt.Sprintf("---\ntitle: Person %d\ndescription: Someone.\nkind: person\naliases: [P%d]\nmaps: [moc-group]\n---\n"+
			"# Person %d\n\n## Snapshot\nWorks with [[%s]] and [[%s|them]].\n\n## Key facts\n- Likes tea. ^k%d\n\n## Links\n- [[%s]]\n- [See](/_content/memory/notes/%s.md)\n",
			i, i, i, a, c, i, a, c))
	}
	write(b, root, "_content/memory/maps/moc-group.md", "---\ntitle: Group\n---\n- [[entity-person-00000]] — the first\n")
	return root
}

func BenchmarkAll1k(b *testing.B) {
	root := benchBox(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		res, err := New(root, Options{}).All(context.Background())
		if err != nil || res.Errors > 0 {
			b.Fatalf("%v %v", err, res.Findings)
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "cards/s")
}

func BenchmarkData(b *testing.B) {
	root := benchBox(b, 50)
	data, err := os.ReadFile(filepath.Join(root, "_content/memory/notes/entity-person-00001.md"))
	if err != nil {
		b.Fatal(err)
	}
	v := New(root, Options{})
	b.ResetTimer()
	for b.Loop() {
		v.Data("/_content/memory/notes/entity-person-00001.md", data, nil)
	}
}

func BenchmarkPreCommit10(b *testing.B) {
	root := benchBox(b, 1000)
	gitIn(b, root, "add", "-A")
	gitIn(b, root, "commit", "-qm", "x", "--no-verify")
	for i := range 10 {
		p := filepath.Join(root, fmt.Sprintf("_content/memory/notes/entity-person-%05d.md", i*7))
		data, _ := os.ReadFile(p)
		os.WriteFile(p, append(data, "- edited\n"...), 0o644)
	}
	gitIn(b, root, "add", "-A")
	b.ResetTimer()
	for b.Loop() {
		res, err := New(root, Options{}).PreCommit(context.Background())
		if err != nil || res.Files != 10 {
			b.Fatalf("%v %d", err, res.Files)
		}
	}
}
