package index

import (
	"database/sql"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestWordRunesAreTheTokenizers: the Go readers of text (scanWords for documents, Words for a search) break
// words where the index's tokenizer (SQLite's unicode61, whose Unicode tables are older than Go's) does,
// at every character Go calls a letter, a number, private use or a combining mark, but for newer marks. A query word the
// tokenizer cuts into many would otherwise be counted as one (docs/SEARCH.md, "Words"), and snippets
// would mark words the index does not hold.
func TestWordRunesAreTheTokenizers(t *testing.T) {
	m := regexp.MustCompile(`tokenize='porter ([^']+)'`).FindStringSubmatch(schema)
	if m == nil {
		t.Fatal("the schema's tokenizer is not porter over another: read this test again")
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize='` + m[1] + `')`); err != nil {
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
	tried := func(r rune) bool {
		return r >= 0x80 && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.In(r, unicode.Co, unicode.Mn))
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
	rows, err := db.Query(`SELECT rowid FROM t WHERE t MATCH '"z"'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	breaks := map[rune]bool{}
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		breaks[rune(r)] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Where the tokenizer breaks a word the readers must too: else one word of a search could stand for
	// many of the index's. The other way round, only at a combining mark: the readers break at every one but
	// the accents unicode61 drops, and unicode61 keeps in a word the marks newer than its tables (a search
	// holding one finds less, and costs no more).
	lenient := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !tried(r) {
			continue
		}
		text := "z" + string(r) + "z"
		n := 0
		scanWords(text, func([]byte, int, int) bool { n++; return true })
		read, words := n == 2, len(Words(text)) == 2
		switch {
		case breaks[r] && (!read || !words):
			t.Errorf("%U: the tokenizer breaks a word there and the readers do not (scanWords %v, Words %v)", r, read, words)
		case !breaks[r] && (read || words) && !unicode.Is(unicode.Mn, r):
			t.Errorf("%U: the readers break a word there (scanWords %v, Words %v) and the tokenizer does not", r, read, words)
		case !breaks[r] && (read || words):
			lenient++
		}
	}
	t.Logf("%d combining marks the tokenizer keeps in a word and the readers break at", lenient)
	// The accents the readers drop inside a word are exactly those the tokenizer drops.
	rows, err = db.Query(`SELECT rowid FROM t WHERE t MATCH '"zz"'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	dropped := map[rune]bool{}
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		dropped[rune(r)] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
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
