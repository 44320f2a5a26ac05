package imports

import (
	"errors"
	"strings"
)

// A folder of Markdown (an Obsidian vault, any notes folder) is kept as it is, under
// /_content/imports/<folder name>/: every .md file byte for byte (frontmatter, [[wikilinks]] and all),
// and every other file as an attachment at the same relative path, so links between them still resolve.
// Files over MaxFolderFile are left out (reported); .card files are the box's own format and are
// left out too. Nothing goes to the inbox: tidy files lines, and a vault's notes are documents.

func (r *reader) markdown() error {
	return r.walk(func(f folderFile) error {
		where := r.src.Name + "/" + f.rel
		lower := strings.ToLower(f.rel)
		switch {
		case strings.HasSuffix(lower, ".card"):
			r.skip(where, "a .card file is a box card, not a note; rename it (.md) to import it as a document")
			return nil
		case f.size > MaxFolderFile:
			r.skip(where, "the file is over %d MiB", MaxFolderFile>>20)
			return nil
		}
		data, err := readAll(f)
		if errors.Is(err, errTooBig) {
			r.skip(where, "the file is over %d MiB", MaxFolderFile>>20)
			return nil
		}
		if err != nil {
			return r.jsonFail(where, "it cannot be read", err)
		}
		return r.doc(Doc{Path: f.rel, Data: data, Binary: !strings.HasSuffix(lower, ".md"), File: f.rel, ID: f.rel,
			Key: r.src.Folder + "/" + f.rel, Where: where})
	})
}
