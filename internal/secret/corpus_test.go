package secret

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// corpusLine is one labelled line of testdata/corpus.txt.
type corpusLine struct {
	secret bool
	text   string
	line   int
}

func readCorpus(t testing.TB) []corpusLine {
	t.Helper()
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		label, text, ok := strings.Cut(l, "\t")
		if !ok || label != "secret" && label != "fact" {
			t.Fatalf("corpus.txt:%d: want \"secret<TAB>text\" or \"fact<TAB>text\"", n)
		}
		out = append(out, corpusLine{label == "secret", text, n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpus holds the secret rules to the labelled corpus: every secret refused (by Secret and by
// CheckRemember, whose sentence never quotes it), every ordinary fact kept.
func TestCorpus(t *testing.T) {
	lines := readCorpus(t)
	var secrets, facts int
	for _, c := range lines {
		reason, found := Secret(c.text)
		switch {
		case c.secret && !found:
			t.Errorf("corpus.txt:%d: secret kept: %q", c.line, c.text)
		case !c.secret && found:
			t.Errorf("corpus.txt:%d: fact refused (%s): %q", c.line, reason, c.text)
		}
		if c.secret {
			secrets++
			if err := CheckRemember(c.text); err == nil {
				t.Errorf("corpus.txt:%d: CheckRemember took a secret", c.line)
			} else if echoes(err.Error(), c.text) {
				t.Errorf("corpus.txt:%d: the refusal %q quotes the secret", c.line, err)
			}
		} else {
			facts++
		}
	}
	if secrets < 200 || facts < 200 {
		t.Errorf("the corpus has %d secrets and %d facts; it needs at least 200 of each", secrets, facts)
	}
}

// echoes reports whether msg repeats a word of text that looks like a value (a digit in it, or 6+ characters
// that are not in the fixed reasons).
func echoes(msg, text string) bool {
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, ".,;:!?\"'()")
		if len(w) >= 4 && strings.ContainsAny(w, "0123456789") && strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
