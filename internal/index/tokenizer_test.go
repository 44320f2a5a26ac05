package index

import (
	"database/sql"
	"strings"
	"testing"
	"unicode"
)

// TestWordRunesAreTheTokenizers: the Go readers of text (scanWords for documents, Words for a search) break
// words exactly where the index's tokenizer (SQLite's unicode61, whose Unicode tables are older than Go's,
// given ftsSeparators) does, at every character Go's tables assign. A query word the tokenizer cuts into
// many would otherwise be counted as one, and a word the tokenizer glues to a newer emoji would not be
// found (docs/SEARCH.md, "Words").
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
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !tried(r) {
			continue
		}
		text := "z" + string(r) + "z"
		n := 0
		scanWords(text, func([]byte, int, int) bool { n++; return true })
		if read, words := n == 2, len(Words(text)) == 2; read != breaks[r] || words != breaks[r] {
			t.Errorf("%U: the tokenizer breaks a word there: %v; scanWords %v, Words %v (ftsBreaks, ftsSeparators)", r, breaks[r], read, words)
		}
	}
	if got := Words("love🥰"); len(got) != 1 || got[0] != "love" {
		t.Errorf("Words read %q, want love", got)
	}
	if _, err := db.Exec(`INSERT INTO t(rowid, x) VALUES (-1, 'so much love🥰 here')`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t WHERE t MATCH 'love'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("love glued to an emoji: %d found, %v; want 1", n, err)
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
