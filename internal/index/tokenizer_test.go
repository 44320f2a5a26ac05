package index

import (
	"database/sql"
	"strings"
	"testing"
	"unicode"
)

// TestWordRunesAreTheTokenizers: at every character Go's tables assign, where the index's tokenizer
// (SQLite's unicode61, whose Unicode tables are older than Go's) breaks a word, the Go readers of text
// (scanWords for documents, Words for a search) break it too: else one word of a search could stand for
// many of the index's. The other way round, the characters unicode61 does not know and keeps inside a
// word are counted, as docs/SEARCH.md ("Words") gives their number.
func TestWordRunesAreTheTokenizers(t *testing.T) {
	args, ok := strings.CutPrefix(tokenizerArgs, "porter ")
	if !ok {
		t.Fatal("the tokenizer is not porter over another: read this test again")
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize="` + args + `")`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO t(rowid, x) VALUES (?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	tried := func(r rune) bool { // every character Go's tables assign, but the ASCII ones
		return r >= 0x80 && unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co)
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if tried(r) {
			if _, err := ins.Exec(int64(r), "z"+string(r)+"z"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// "z" alone is a word of the row only where the tokenizer broke the word at its character.
	breaks := matching(t, db, `"z"`)
	glued := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !tried(r) {
			continue
		}
		text := "z" + string(r) + "z"
		n := 0
		scanWords(text, func([]byte, int, int) bool { n++; return true })
		read, words := n == 2, len(Words(text)) == 2
		switch {
		case read != words:
			t.Errorf("%U: scanWords breaks a word there: %v; Words: %v", r, read, words)
		case breaks[r] && !read:
			t.Errorf("%U: the tokenizer breaks a word there and the readers do not: add it to ftsBreaks", r)
		case !breaks[r] && read:
			glued++
		}
	}
	if glued != 3317 {
		t.Errorf("%d characters the tokenizer keeps inside a word and the readers end one at; docs/SEARCH.md says 3,317", glued)
	}

	// The accents the readers drop inside a word are exactly those the tokenizer drops.
	dropped := matching(t, db, `"zz"`)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Mn, r) && dropped[r] != isDiacritic(r) {
			t.Errorf("%U: the tokenizer drops it from a word: %v; isDiacritic: %v", r, dropped[r], isDiacritic(r))
		}
	}
	if got := Words("a\u19b0a\u19b0a nai\u0308ve The\u0301 \u0301"); strings.Join(got, " ") != "a a a naive the" {
		t.Errorf("Words cut %q, want the tokenizer's a, a, a, naive and the", got)
	}
	var read []string
	scanWords("nai\u0308ve \u0939\u093f\u0928\u094d\u0926\u0940", func(w []byte, _, _ int) bool { read = append(read, string(w)); return true })
	if got := strings.Join(read, " "); got != "naive \u0939 \u0928 \u0926" {
		t.Errorf("scanWords read %q, want the tokenizer's naive and, of Hindi, the letters the vowel signs and virama part", got)
	}
}

// matching is the characters (row ids) of the rows of table t that match the FTS5 query q.
func matching(t *testing.T, db *sql.DB, q string) map[rune]bool {
	t.Helper()
	rows, err := db.Query(`SELECT rowid FROM t WHERE t MATCH ?`, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[rune]bool{}
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		m[rune(r)] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}
