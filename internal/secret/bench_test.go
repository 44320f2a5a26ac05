package secret

import (
	"os"
	"strings"
	"testing"
)

func BenchmarkCheckRemember(b *testing.B) {
	text := strings.Repeat("Leo has swim practice Thursdays at 5:30 with Ana. ", 10)[:MaxFactLen]
	for b.Loop() {
		_ = CheckRemember(text)
	}
}

// BenchmarkCheckRememberCorpus checks every line of testdata/corpus.txt once per op: the secrets and the
// facts remember really sees, of every shape the rules read.
func BenchmarkCheckRememberCorpus(b *testing.B) {
	data, err := os.ReadFile("testdata/corpus.txt")
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if _, text, ok := strings.Cut(l, "\t"); ok && !strings.HasPrefix(l, "#") {
			lines = append(lines, text)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lines {
			_ = CheckRemember(l)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/line")
}

// BenchmarkSecretAdversarial checks lines built to make the rules do the most work: nouns after nouns, a
// letter at a time, seed words in a row, groups, base64.
func BenchmarkSecretAdversarial(b *testing.B) {
	lines := []string{
		strings.Repeat("key ", 125),
		strings.Repeat("password is ", 42),
		strings.Repeat("p a s s ", 62),
		strings.Repeat("abandon ", 62),
		strings.Repeat("seed abc ", 55),
		strings.Repeat("code the ", 55),
		strings.Repeat("QUtJQUo3UTJNNFhM", 31),
		strings.Repeat("1 ", 250),
	}
	for b.Loop() {
		for _, l := range lines {
			_, _ = Secret(l)
		}
	}
}
