package ref

// Test helpers: what the tests ask of a Resolver that the box never does.

// Resolve resolves a written target ("/_content/x.md#h", "attach/a.png", "../b.md?v=2") from the
// file fromBoxPath, as a frontmatter ref. The error is for a bad fromBoxPath or an unreadable box, never
// for a bad target.
func (rv *Resolver) Resolve(fromBoxPath, target string) (Resolution, error) {
	r := newRef(Frontmatter, target, 0, 0)
	return rv.resolve(fromBoxPath, r.Raw, r.Path)
}
