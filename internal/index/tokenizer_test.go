package index

import (
	"database/sql"
	"strings"
	"testing"
	"unicode"
)

// TestWordRunesAreTheTokenizers: every character Go's tables call a letter, a number or private use is
// a word character to the index's tokenizer (SQLite's unicode61, with older tables) unless it is one of
// ftsBreaks. A query word the tokenizer cuts into many would otherwise be counted as one (docs/SEARCH.md,
// "Words"), and snippets would mark words the index does not hold.
func TestWordRunesAreTheTokenizers(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2')`); err != nil {
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
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) {
			if _, err := ins.Exec(int64(r), "z"+string(r)+"z"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT rowid FROM t WHERE t MATCH '"z"' ORDER BY rowid`)
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
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if breaks[r] && isWordRune(r) {
			t.Errorf("%U is a word character to Go's tables and a break to the tokenizer: add it to ftsBreaks", r)
		}
		if !breaks[r] && unicode.Is(ftsBreaks, r) {
			t.Errorf("%U is in ftsBreaks, but the tokenizer keeps it in a word", r)
		}
	}
	if got := Words("a\u19b0a\u19b0a cello"); strings.Join(got, " ") != "a a a cello" {
		t.Errorf("Words cut %q, want the tokenizer's a a a cello", got)
	}
}
