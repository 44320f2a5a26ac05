package imports

import (
	"strings"
)

// A folder of Markdown (an Obsidian vault, any notes folder) is kept as it is, under
// /_content/imports/<folder name>/: every .md file byte for byte (frontmatter, [[wikilinks]] and all),
// and every other file as an attachment at the same relative path, so links between them still resolve.
// Attachments over MaxAttachment are left out (reported); .card files are the box's own format and are
// left out too. Nothing goes to the inbox: tidy files lines, and a vault's notes are documents.

func (r *reader) markdown() error {
	return r.walk(func(f folderFile) error {
		where := r.src.Name + "/" + f.rel
		lower := strings.ToLower(f.rel)
		switch {
		case strings.HasSuffix(lower, ".card"):
			r.skip(where, "a .card file is a box card, not a note; rename it (.md) to import it as a document")
			return nil
		case !strings.HasSuffix(lower, ".md") && f.size > MaxAttachment:
			r.skip(where, "the attachment is over %d MiB", MaxAttachment>>20)
			return nil
		}
		data, err := readAll(f)
		if err != nil {
			return r.jsonFail(where, "it cannot be read", err)
		}
		return r.doc(Doc{Path: f.rel, Data: data, Binary: !strings.HasSuffix(lower, ".md"), File: f.rel, ID: f.rel,
			Key: r.src.Folder + "/" + f.rel, Where: where})
	})
}
