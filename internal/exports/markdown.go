package exports

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/boxmem/box/internal/errs"
)

// The box's Markdown already opens in Obsidian; the markdown export is a clean copy of /_content/
// (notes, maps, the router, the inbox, to-dos, pages' notes, imported documents and attachments) into
// DIR/_content/, so links written from the box root ("/_content/…") still resolve with DIR as the vault.
// Runtime and box files (.git, .box, _config, _bookkeeping, _tmp, hidden files) stay behind.

func (b *box) markdown(ctx context.Context, dest string, opts Options) (Result, error) {
	const op = "exports.markdown"
	if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
		return Result{}, errs.E(op, errs.Exists, "%s is not empty; export into a new or empty folder.", dest)
	}
	files, err := b.files("_content")
	if err != nil {
		return Result{}, err
	}
	res := Result{Kind: Markdown, Path: dest}
	for i, p := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		src, err := b.open(p)
		if err != nil {
			return res, errs.Wrap(op, errs.Other, err, "A file of the box cannot be read")
		}
		n, err := writeFile(filepath.Join(dest, filepath.FromSlash(p)), func(w io.Writer) error {
			_, err := io.Copy(w, src)
			return err
		})
		_ = src.Close() // read only
		if err != nil {
			return res, err
		}
		res.Files++
		res.Bytes += n
		if isNote(p) {
			res.Notes++
		}
		opts.Progress(i+1, len(files))
	}
	res.Text = fmt.Sprintf("Copied %d files (%d notes) to %s; open it as an Obsidian vault.", res.Files, res.Notes, dest)
	return res, nil
}

// markdownZip is the markdown export as a zip, for a download: the same files as the folder, at the
// same paths (_content/…), each read through the box's os.Root and checked to be the plain file the
// walk listed.
func (b *box) markdownZip(ctx context.Context, out sink, opts Options) (Result, error) {
	const op = "exports.markdown"
	files, err := b.files("_content")
	if err != nil {
		return Result{}, err
	}
	res := Result{Kind: Markdown, Path: out.name}
	n, err := out.write(func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for i, p := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			src, err := b.open(p)
			if err != nil {
				return errs.Wrap(op, errs.Other, err, "A file of the box cannot be read")
			}
			fi, _ := src.Stat()
			h := &zip.FileHeader{Name: p, Method: zip.Deflate, Modified: fi.ModTime()}
			h.SetMode(0o644)
			dst, err := zw.CreateHeader(h)
			if err == nil {
				_, err = io.Copy(dst, src)
			}
			_ = src.Close() // read only
			if err != nil {
				return err
			}
			res.Files++
			if isNote(p) {
				res.Notes++
			}
			opts.Progress(i+1, len(files))
		}
		return zw.Close()
	})
	if err != nil {
		return res, err
	}
	res.Bytes = n
	res.Text = fmt.Sprintf("Zipped %d files (%d notes) as %s; unzip it and open the folder as an Obsidian vault.", res.Files, res.Notes, out.name)
	return res, nil
}
