package imports

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/boxmem/box/internal/errs"
)

// A zip's central directory is read whole by archive/zip, which keeps every record in memory (about 190
// bytes each, whatever the entry holds) and makes room for as many as the directory's end claims. A zip
// of millions of empty records would fill memory before any entry limit applies, so the claim is checked
// first and the directory's reading is held to a byte budget (docs/IMPORTS.md, "Limits").
const (
	MaxZipEntries   = 100_000
	MaxZipDirectory = 16 << 20
)

// zipReader is an open zip: its entries, and the file under them.
type zipReader struct {
	*zip.Reader
	f *os.File
}

func (z *zipReader) Close() error { return z.f.Close() }

// bigZip is a zip whose directory is past the limits; why says which.
type bigZip struct{ why string }

func (e *bigZip) Error() string { return e.why }

// openZip opens the zip at p once its directory is known to fit the limits.
func openZip(p string) (*zipReader, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close() // read only
		return nil, err
	}
	if n, ok := zipEntries(f, fi.Size()); ok && n > MaxZipEntries {
		_ = f.Close() // read only
		return nil, &bigZip{fmt.Sprintf("the zip lists %d entries; a zip may hold at most %d", n, MaxZipEntries)}
	}
	// The end's count is kept only modulo 65,536 by some writers, and archive/zip reads records until the
	// directory ends whatever it claims: the budget on the bytes it reads is what bounds the records kept.
	b := &budget{r: f, left: MaxZipDirectory + 128<<10}
	zr, err := zip.NewReader(b, fi.Size())
	b.left = -1
	if errors.Is(err, errBudget) {
		err = &bigZip{fmt.Sprintf("its directory of entries is larger than %d MiB", MaxZipDirectory>>20)}
	}
	if err != nil {
		_ = f.Close() // read only
		return nil, err
	}
	if len(zr.File) > MaxZipEntries {
		_ = f.Close() // read only
		return nil, &bigZip{fmt.Sprintf("the zip holds %d entries; a zip may hold at most %d", len(zr.File), MaxZipEntries)}
	}
	return &zipReader{Reader: zr, f: f}, nil
}

// zipBad is the error for a zip that cannot be opened: past the limits (Limited), or not a zip at all.
func (r *reader) zipBad(err error, notZip string) error {
	var big *bigZip
	if errors.As(err, &big) {
		return errs.E("imports."+r.src.Kind, errs.Limited, "%s: %s. Split it into smaller zips, or unpack it and import what you need.", r.src.Name, big.why)
	}
	return r.bad(r.src.Name, "%s (%v)", notZip, err)
}

var errBudget = errors.New("zip directory budget spent")

// budget is a file read with a byte allowance while the directory is read; left < 0 lifts it.
type budget struct {
	r    io.ReaderAt
	left int64
}

func (b *budget) ReadAt(p []byte, off int64) (int, error) {
	if b.left >= 0 {
		if int64(len(p)) > b.left {
			return 0, errBudget
		}
		b.left -= int64(len(p))
	}
	return b.r.ReadAt(p, off)
}

// zipEntries is the entry count the end of the central directory claims (the zip64 end's when the
// plain one defers to it); ok is false when no end is found, and archive/zip then says what is wrong.
func zipEntries(r io.ReaderAt, size int64) (uint64, bool) {
	const endLen, locLen, end64Len = 22, 20, 56
	n := min(size, endLen+65535)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return 0, false
	}
	at := -1
	for i := len(buf) - endLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == 0x06054b50 && i+endLen+int(binary.LittleEndian.Uint16(buf[i+20:])) <= len(buf) {
			at = i
			break
		}
	}
	if at < 0 {
		return 0, false
	}
	e := buf[at:]
	count := uint64(binary.LittleEndian.Uint16(e[10:]))
	if count != 0xffff && binary.LittleEndian.Uint32(e[12:]) != 0xffffffff && binary.LittleEndian.Uint32(e[16:]) != 0xffffffff {
		return count, true
	}
	endAt := size - n + int64(at)
	if endAt < locLen {
		return count, true
	}
	loc := make([]byte, locLen)
	if _, err := r.ReadAt(loc, endAt-locLen); err != nil || binary.LittleEndian.Uint32(loc) != 0x07064b50 {
		return count, true
	}
	off := binary.LittleEndian.Uint64(loc[8:])
	if size < end64Len || off > uint64(size-end64Len) {
		return count, true
	}
	e64 := make([]byte, end64Len)
	if _, err := r.ReadAt(e64, int64(off)); err != nil || binary.LittleEndian.Uint32(e64) != 0x06064b50 {
		return count, true
	}
	return max(count, binary.LittleEndian.Uint64(e64[32:])), true
}
