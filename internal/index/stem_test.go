package index

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// sqliteTerms returns, for each text, the terms SQLite's FTS5 table (the index's own tokenizer) makes of
// it, in order, read back through an fts5vocab table.
func sqliteTerms(t *testing.T, texts []string) [][]string {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{
		`CREATE VIRTUAL TABLE f USING fts5(body, tokenize='` + tokenizerArgs + `')`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(f, instance)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tx, _ := db.Begin()
	for i, s := range texts {
		if _, err := tx.Exec(`INSERT INTO f(rowid, body) VALUES(?, ?)`, i+1, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT doc, term FROM v ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := make([][]string, len(texts))
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		out[doc-1] = append(out[doc-1], term)
	}
	return out
}

func goTerms(s string) []string {
	var out []string
	scanWords(s, func(w []byte, _, _ int) bool {
		out = append(out, stem(string(w)))
		return true
	})
	return out
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "stem", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestStemsMatchSQLite: the Go tokenizer and stemmer turn every word of the word list, and every line of
// mixed-script text, into exactly the terms the FTS5 table indexes.
func TestStemsMatchSQLite(t *testing.T) {
	texts := append(readLines(t, "words.txt"), readLines(t, "texts.txt")...)
	want := sqliteTerms(t, texts)
	bad := 0
	for i, s := range texts {
		if got := goTerms(s); strings.Join(got, " ") != strings.Join(want[i], " ") {
			bad++
			if bad <= 20 {
				t.Errorf("%q: Go %q, SQLite %q", s, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ", bad, len(texts))
	}
}
