package imports

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// emptyRecords is a zip of n central-directory records that all point at one empty local file: 47
// bytes on disk each, about 190 in archive/zip's memory. The directory's end claims declared entries,
// in a zip64 end when zip64 is set.
func emptyRecords(n int, declared uint64, zip64 bool) []byte {
	var b bytes.Buffer
	lh := make([]byte, 30)
	binary.LittleEndian.PutUint32(lh[0:], 0x04034b50)
	binary.LittleEndian.PutUint16(lh[4:], 20)
	binary.LittleEndian.PutUint16(lh[26:], 1)
	b.Write(lh)
	b.WriteString("a")
	cdStart := b.Len()
	h := make([]byte, 46)
	binary.LittleEndian.PutUint32(h[0:], 0x02014b50)
	binary.LittleEndian.PutUint16(h[4:], 20)
	binary.LittleEndian.PutUint16(h[6:], 20)
	binary.LittleEndian.PutUint16(h[28:], 1)
	for range n {
		b.Write(h)
		b.WriteString("a")
	}
	cdSize := b.Len() - cdStart
	end := make([]byte, 22)
	binary.LittleEndian.PutUint32(end[0:], 0x06054b50)
	if zip64 {
		z64 := b.Len()
		e64 := make([]byte, 56)
		binary.LittleEndian.PutUint32(e64[0:], 0x06064b50)
		binary.LittleEndian.PutUint64(e64[4:], 44)
		binary.LittleEndian.PutUint16(e64[12:], 45)
		binary.LittleEndian.PutUint16(e64[14:], 45)
		binary.LittleEndian.PutUint64(e64[24:], declared)
		binary.LittleEndian.PutUint64(e64[32:], declared)
		binary.LittleEndian.PutUint64(e64[40:], uint64(cdSize))
		binary.LittleEndian.PutUint64(e64[48:], uint64(cdStart))
		b.Write(e64)
		loc := make([]byte, 20)
		binary.LittleEndian.PutUint32(loc[0:], 0x07064b50)
		binary.LittleEndian.PutUint64(loc[8:], uint64(z64))
		binary.LittleEndian.PutUint32(loc[16:], 1)
		b.Write(loc)
		binary.LittleEndian.PutUint16(end[8:], 0xffff)
		binary.LittleEndian.PutUint16(end[10:], 0xffff)
		binary.LittleEndian.PutUint32(end[12:], 0xffffffff)
		binary.LittleEndian.PutUint32(end[16:], 0xffffffff)
	} else {
		binary.LittleEndian.PutUint16(end[8:], uint16(declared))
		binary.LittleEndian.PutUint16(end[10:], uint16(declared))
		binary.LittleEndian.PutUint32(end[12:], uint32(cdSize))
		binary.LittleEndian.PutUint32(end[16:], uint32(cdStart))
	}
	b.Write(end)
	return b.Bytes()
}

// A zip whose directory alone would fill memory (a million empty records, or records past the count its
// end claims modulo 65,536) is refused as a limit before archive/zip keeps them, by every reader of
// zips and by Detect; the heap stays small.
func TestZipDirectoryBomb(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		zip  []byte
		why  string
	}{
		{"a million entries claimed", emptyRecords(1_000_000, 1_000_000, true), "the zip lists 1000000 entries; a zip may hold at most 100000"},
		{"records past the claim", emptyRecords(400_000, 400_000%65536, false), "its directory of entries is larger than 16 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".zip")
			must(t, os.WriteFile(p, c.zip, 0o600))
			for _, kind := range []string{ChatGPT, Markdown} {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				began := time.Now()
				_, err := read(t, kind, p, Options{})
				runtime.ReadMemStats(&m1)
				if !errs.Is(err, errs.Limited) || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "Split it into smaller zips") {
					t.Fatalf("%s: %v", kind, err)
				}
				grew := int64(m1.TotalAlloc - m0.TotalAlloc)
				t.Logf("%s: %v in %s, %d MiB allocated", kind, err, time.Since(began), grew>>20)
				if grew > 128<<20 {
					t.Errorf("%s: reading the refused zip allocated %d MiB", kind, grew>>20)
				}
			}
			if k := Detect(p); k != "" {
				t.Errorf("Detect read the bomb as %q", k)
			}
		})
	}
	// A zip just under the entry limit still opens.
	p := filepath.Join(dir, "fine.zip")
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range 2000 {
		w, err := zw.Create(fmt.Sprintf("notes/n%04d.md", i))
		must(t, err)
		fmt.Fprintf(w, "# n%d\n", i)
	}
	must(t, zw.Close())
	must(t, os.WriteFile(p, b.Bytes(), 0o600))
	if c, err := read(t, Markdown, p, Options{}); err != nil || len(c.docs) != 2000 {
		t.Fatalf("%v, %d documents", err, len(c.docs))
	}
}

// An archive of thousands of unsafe names lists the first MaxSkips and counts the rest in one line.
func TestSkipsAreBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "names.zip")
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range MaxSkips + 500 {
		_, err := zw.Create(fmt.Sprintf("../x%d.md", i))
		must(t, err)
	}
	w, err := zw.Create("ok.md")
	must(t, err)
	fmt.Fprint(w, "# ok\n")
	must(t, zw.Close())
	must(t, os.WriteFile(p, b.Bytes(), 0o600))
	c, err := read(t, Markdown, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.skips) != MaxSkips+1 || c.skips[MaxSkips].Why != "500 more entries were left out as well; only the first 1000 are listed" {
		t.Fatalf("%d skips, last %+v", len(c.skips), c.skips[len(c.skips)-1])
	}
	if len(c.docs) != 1 {
		t.Errorf("documents %v", c.docs)
	}
}
