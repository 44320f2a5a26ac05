package validate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/ref"
)

// blob is one staged file as the index holds it.
type blob struct {
	size    int64
	data    []byte // nil when only the size was asked for
	missing bool
}

// indexBlobs reads staged files from the git index in ONE `git cat-file --batch-command` process:
// the contents of the paths in want, only the size of the paths in sizes.
func (v *Validator) indexBlobs(ctx context.Context, want, sizes []string) (map[string]blob, error) {
	out := map[string]blob{}
	if len(want)+len(sizes) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	var order []string
	for _, p := range want {
		fmt.Fprintf(&in, "contents :%s\n", p)
		order = append(order, p)
	}
	for _, p := range sizes {
		fmt.Fprintf(&in, "info :%s\n", p)
		order = append(order, p)
	}
	raw, err := v.git.Run(ctx, in.Bytes(), "cat-file", "--batch-command")
	if err != nil {
		return nil, errs.Wrap("validate.staged", errs.Other, err, "cannot read the staged files from the git index")
	}
	r := bufio.NewReader(bytes.NewReader(raw))
	for i, p := range order {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, errs.E("validate.staged", errs.Other, "git cat-file stopped early, at %s", p)
		}
		f := strings.Fields(header)
		if len(f) < 3 || f[len(f)-1] == "missing" {
			out[p] = blob{missing: true}
			continue
		}
		size, _ := strconv.ParseInt(f[2], 10, 64)
		b := blob{size: size}
		if i < len(want) {
			b.data = make([]byte, size)
			if _, err := io.ReadFull(r, b.data); err != nil {
				return nil, errs.E("validate.staged", errs.Other, "git cat-file cut %s short", p)
			}
			_, _ = r.ReadByte() // the newline after the contents
		}
		out[p] = b
	}
	return out, nil
}

// staged lists the staged changes with box paths.
func (v *Validator) staged(ctx context.Context) ([]git.Change, error) {
	ch, err := v.git.Staged(ctx)
	if err != nil {
		return nil, errs.Wrap("validate.staged", errs.Other, err, "cannot list the staged changes")
	}
	return ch, nil
}

// stagedCards checks the staged content (not the working tree) of every added, modified or renamed
// card, and the reserved names of every staged path. It also returns the staged blobs it read.
func (v *Validator) stagedCards(ctx context.Context, changes []git.Change, sizesToo bool) (Result, map[string]blob, error) {
	var res Result
	var cards, others, links []string
	for _, c := range changes {
		if c.Status == "D" {
			continue
		}
		bp := "/" + c.Path
		if strings.ContainsAny(c.Path, "\n\r") {
			res.add(finding.Errorf(strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(bp), 0, CodeBadName,
				"the file name holds a line break: rename it (box paths are one line)"))
			continue
		}
		if off, bad := layout.ReservedOffender(bp); bad {
			res.add(reservedFinding(off))
		}
		switch {
		case c.Mode == symlinkMode:
			links = append(links, c.Path)
		case card.IsCard(bp):
			cards = append(cards, c.Path)
		case sizesToo:
			others = append(others, c.Path)
		}
	}
	blobs, err := v.indexBlobs(ctx, append(slices.Clip(cards), links...), others)
	if err != nil {
		return res, nil, err
	}
	// A staged symlink's blob is its target: the commit would carry a link out of the box even when the
	// working tree has since changed.
	for _, p := range links {
		if b := blobs[p]; !b.missing {
			res.add(v.stagedLink("/"+p, string(b.data))...)
		}
	}
	reg, err := v.registry()
	if err != nil {
		return res, nil, err
	}
	rv := ref.NewResolver(v.root)
	dirs := map[string]bool{}
	for _, p := range cards {
		b := blobs[p]
		if b.missing {
			continue
		}
		bp := "/" + p
		res.add(checkData(reg, bp, b.data, rv)...)
		res.Files++
		dirs[path.Dir(bp)] = true
	}
	for d := range dirs {
		res.add(ref.Collisions(v.root, d)...)
	}
	return res, blobs, nil
}

// Staged validates the cards as they are staged in the git index.
func (v *Validator) Staged(ctx context.Context) (Result, error) {
	changes, err := v.staged(ctx)
	if err != nil {
		return Result{}, err
	}
	res, _, err := v.stagedCards(ctx, changes, false)
	if err != nil {
		return res, err
	}
	return res.done(), nil
}

// PreCommit is the whole commit-time suite in one pass: the staged cards (errors block), refs left
// dangling by a staged delete or rename (warnings; only then is the box walked), and staged non-card
// files over 1 MiB that no attachments card lists (errors).
func (v *Validator) PreCommit(ctx context.Context) (Result, error) {
	changes, err := v.staged(ctx)
	if err != nil {
		return Result{}, err
	}
	res, blobs, err := v.stagedCards(ctx, changes, true)
	if err != nil {
		return res, err
	}
	var big []string
	gone := map[string]bool{}
	for _, c := range changes {
		switch c.Status {
		case "D":
			gone["/"+c.Path] = true
		case "R":
			gone["/"+c.OldPath] = true
		}
		if c.Status != "D" && !card.IsCard("/"+c.Path) {
			if b := blobs[c.Path]; !b.missing && b.size > MaxBinary {
				big = append(big, c.Path)
			}
		}
	}
	if len(big) > 0 {
		fs, err := v.unlisted(ctx, big, blobs)
		if err != nil {
			return res, err
		}
		res.add(fs...)
	}
	if len(gone) > 0 {
		fs, err := v.dangling(ctx, gone)
		if err != nil {
			return res, err
		}
		res.add(fs...)
	}
	return res.done(), nil
}

// unlisted reports the big staged files no staged attachments card lists. The attachments cards are
// found in the index (git ls-files), not by walking the box, and read as staged.
func (v *Validator) unlisted(ctx context.Context, big []string, blobs map[string]blob) ([]finding.Finding, error) {
	out, err := v.git.Run(ctx, nil, "ls-files", "-z", "--", "*.attachments.card")
	if err != nil {
		return nil, errs.Wrap("validate.pre-commit", errs.Other, err, "cannot list the attachments cards")
	}
	var lists []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			lists = append(lists, p)
		}
	}
	listed := map[string]bool{}
	if len(lists) > 0 {
		cards, err := v.indexBlobs(ctx, lists, nil)
		if err != nil {
			return nil, err
		}
		for _, p := range lists {
			for _, f := range AttachmentFiles(cards[p].data) {
				listed[f] = true
			}
		}
	}
	var fs []finding.Finding
	for _, p := range big {
		if listed["/"+p] {
			continue
		}
		fs = append(fs, finding.Errorf("/"+p, 0, CodeBinary,
			"a %.1f MiB file is staged but no attachments card lists it: add it to the files: list of a *.attachments.card, or keep it out of the box",
			float64(blobs[p].size)/(1<<20)))
	}
	return fs, nil
}

// AttachmentFiles returns the box paths an attachments card lists in its files: key.
func AttachmentFiles(data []byte) []string {
	c, err := card.Parse("/x.attachments.card", data)
	if err != nil {
		return nil
	}
	var v struct {
		Files []string `yaml:"files"`
	}
	if c.Decode(&v) != nil {
		return nil
	}
	var out []string
	for _, f := range v.Files {
		if bp, err := layout.Clean(f); err == nil {
			out = append(out, bp)
		}
	}
	return out
}

// dangling is the box-wide scan for refs to paths this commit deletes or renames away.
func (v *Validator) dangling(ctx context.Context, gone map[string]bool) ([]finding.Finding, error) {
	w, err := v.walk(ctx, "/")
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for p := range gone {
		b := strings.ToLower(path.Base(p))
		names[b] = true
		names[strings.TrimSuffix(b, ".md")] = true
	}
	fs, _, err := v.parallel(ctx, w.cards, func(rv *ref.Resolver, bp string) []finding.Finding {
		data, f := v.read(bp)
		if f != nil {
			return nil
		}
		refs, _ := ref.Extract(bp, data)
		var out []finding.Finding
		for _, r := range refs {
			if !names[refBase(r)] {
				continue // cannot name a gone file: no need to resolve it
			}
			res, err := rv.ResolveRef(bp, r)
			if err != nil || res.Exists || res.Closed() {
				continue
			}
			hit := gone[res.Target]
			if r.Kind == ref.Wikilink {
				name, _, _ := strings.Cut(r.Path, "|")
				hit = names[strings.ToLower(path.Base(name))]
			}
			if hit {
				target := res.Target
				if target == "" {
					target = "[[" + r.Raw + "]]"
				}
				out = append(out, finding.Warnf(bp, r.Line, CodeDangling,
					"this commit deletes or renames %s, which this file still refers to: update the reference", target))
			}
		}
		return out
	})
	return fs, err
}

// refBase is the lowercased last name a ref points at (percent-decoded for links), the cheap filter
// before resolving it.
func refBase(r ref.Ref) string {
	p := r.Path
	if r.Kind == ref.Wikilink {
		p, _, _ = strings.Cut(p, "|")
	}
	if r.Kind == ref.Link {
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
	}
	return strings.ToLower(path.Base(strings.TrimSpace(p)))
}

// symlinkMode is git's mode of a symbolic link.
const symlinkMode = "120000"

// stagedLink checks a staged symlink's target, relative to the link's folder or absolute, as
// layout.FromHost does for a path on disk: it must stay inside the box, read both ways. As the kernel
// will follow it (the target put after the folder as text, layout.Join, so a ".." after a link in it
// climbs from that link's target), and cleaned as text: the folders on disk now may be links the commit
// does not hold, so neither reading alone is the one a checkout of the commit follows.
func (v *Validator) stagedLink(bp, target string) []finding.Finding {
	host := filepath.Join(v.root, filepath.FromSlash(bp)) // the link itself, as the commit holds it
	dir, t := filepath.Dir(host), filepath.FromSlash(target)
	text := filepath.Join(dir, t)
	if filepath.IsAbs(t) {
		text = filepath.Clean(t)
	}
	for _, p := range []string{layout.Join(dir, t), text} {
		if _, err := layout.FromHost(v.root, p); err != nil {
			return []finding.Finding{finding.Errorf(bp, 0, CodeSymlinkOut, symlinkOut)}
		}
	}
	return nil
}
