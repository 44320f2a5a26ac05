package git

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/boxmem/box/internal/atomicfile"
)

// Blob ids are computed and loose blobs written in process: the write transaction stores every pre- and
// post-image for undo, and a git process per blob would dominate its cost.

var formatCache sync.Map // git dir → "sha1" | "sha256"

// ObjectFormat is "sha1" or "sha256", read from the repository's config.
func (r *Repo) ObjectFormat() string {
	if f, ok := formatCache.Load(r.GitDir()); ok {
		return f.(string)
	}
	f := "sha1"
	if cfg, err := os.ReadFile(filepath.Join(r.GitDir(), "config")); err == nil {
		for _, line := range strings.Split(string(cfg), "\n") {
			k, v, ok := strings.Cut(strings.ReplaceAll(line, " ", ""), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "objectformat") && strings.TrimSpace(v) == "sha256" {
				f = "sha256"
			}
		}
		formatCache.Store(r.GitDir(), f)
	}
	return f
}

// BlobID is the id git gives a blob holding data.
func (r *Repo) BlobID(data []byte) string {
	var h hash.Hash
	if r.ObjectFormat() == "sha256" {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	_, _ = fmt.Fprintf(h, "blob %d\x00", len(data)) // a hash never fails to write
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// WriteBlob stores data as a loose blob (temp file, fsync unless CallerSyncs, rename) unless it is
// already stored loose, and returns its id. A blob already packed is written again loose, which git
// tolerates.
func (r *Repo) WriteBlob(data []byte) (string, error) {
	id := r.BlobID(data)
	dir := filepath.Join(r.GitDir(), "objects", id[:2])
	path := filepath.Join(dir, id[2:])
	if _, err := os.Stat(path); err == nil {
		return id, nil
	}
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	// Into a buffer: a write error stays in the writer and Close returns it.
	_, _ = fmt.Fprintf(zw, "blob %d\x00", len(data))
	_, _ = zw.Write(data)
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, "tmp_obj_box_"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil && !r.CallerSyncs {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("git: store blob %s: %w", id, err)
	}
	return id, nil
}

// LoosePath is where the loose object id lives.
func (r *Repo) LoosePath(id string) string {
	return filepath.Join(r.GitDir(), "objects", id[:2], id[2:])
}

// WriteBlobs stores several blobs and fsyncs their object folders once (unless CallerSyncs).
func (r *Repo) WriteBlobs(ctx context.Context, datas [][]byte) ([]string, error) {
	ids := make([]string, len(datas))
	dirs := map[string]bool{}
	for i, d := range datas {
		id, err := r.WriteBlob(d)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		dirs[filepath.Join(r.GitDir(), "objects", id[:2])] = true
	}
	for d := range dirs {
		if r.CallerSyncs {
			break
		}
		if err := atomicfile.SyncDir(d); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
