package builds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/page"
)

// BundleFile is one version of a connector as kept at VersionPath(KindConnector, id, n): the manifest as
// the sender wrote it and the files (docs/CONNECTORS.md, "Installed connectors"). Its bytes are bound to
// the version's SHA-256 like a page's.
type BundleFile struct {
	Manifest json.RawMessage   `json:"manifest"`
	Files    map[string]string `json:"files"`
}

// EncodeBundle is the bytes of a connector version's file: compact JSON, the manifest as sent.
func EncodeBundle(manifest json.RawMessage, files map[string]string) ([]byte, error) {
	var m bytes.Buffer
	if err := json.Compact(&m, manifest); err != nil {
		return nil, errs.Wrap("builds.bundle", errs.Invalid, err, "The manifest is not JSON")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(BundleFile{Manifest: m.Bytes(), Files: files}); err != nil {
		return nil, errs.Wrap("builds.bundle", errs.Invalid, err, "The connector's files cannot be written")
	}
	return out.Bytes(), nil
}

// DecodeBundle reads a connector version's file into the manifest and files as connector.Validate takes them.
func DecodeBundle(data []byte) (manifest, files []byte, err error) {
	var f struct {
		Manifest json.RawMessage `json:"manifest"`
		Files    json.RawMessage `json:"files"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil || len(f.Manifest) == 0 || len(f.Files) == 0 {
		return nil, nil, errs.E("builds.bundle", errs.Invalid, "The connector's file is not {\"manifest\": {…}, \"files\": {…}}.")
	}
	return f.Manifest, f.Files, nil
}

// Connector is an installed connector by id.
func (r *Builds) Connector(ctx context.Context, id string) (Build, error) {
	if connector.Slug(id) != id || id == "" {
		return Build{}, errs.E("builds.connector", errs.NotFound, "There is no connector %q; `box builds list` shows them.", page.Clip(id))
	}
	b, err := r.read(manifestPath(KindConnector, id))
	if errors.Is(err, fs.ErrNotExist) {
		return Build{}, errs.E("builds.connector", errs.NotFound, "There is no connector %q; `box builds list` shows them.", id)
	}
	return b, err
}

// Connectors are the installed connectors, by id, whatever their status.
func (r *Builds) Connectors(ctx context.Context) ([]Build, error) {
	all, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Build
	for _, b := range all {
		if b.Kind == KindConnector {
			out = append(out, b)
		}
	}
	return out, nil
}

// Bundle is version n of an installed connector, read through Source (its bytes as approved) and
// checked again, so what runs is what the owner approved and still passes the checks.
func (r *Builds) Bundle(b Build, n int) (*connector.Bundle, error) {
	if b.Kind != KindConnector {
		return nil, errs.E("builds.bundle", errs.Invalid, "%s is not a connector.", describe(b))
	}
	data, err := r.Source(b, n)
	if err != nil {
		return nil, err
	}
	sum := Sum(data) // Source checked these bytes against the version's approved SHA-256
	if cached, ok := r.bundles.Load(sum); ok {
		if bundle := cached.(*connector.Bundle); bundle.Manifest.ID == b.ID {
			return bundle, nil
		}
	}
	manifest, files, err := DecodeBundle(data)
	if err != nil {
		return nil, err
	}
	bundle, rep := connector.Validate(manifest, files, connector.Options{BoxCanBuild: true})
	if !rep.OK {
		return nil, errs.E("builds.bundle", errs.Invalid, "Version %d of %s no longer passes the checks (%s); send it again.", n, describe(b), problemList(rep.Problems, 400))
	}
	if bundle.Manifest.ID != b.ID {
		return nil, errs.E("builds.bundle", errs.Invalid, "Version %d of %s names the connector %q; send it again.", n, describe(b), bundle.Manifest.ID)
	}
	r.bundles.Store(sum, bundle)
	return bundle, nil
}

// ConnectorRunner is what the registry needs of the connectors package, which the composition root
// gives it (RunConnectorsWith): the test run of a version on fresh, empty state, and what a removed
// connector leaves outside the tree (its keys, its data) as a "Delete for good" action.
type ConnectorRunner interface {
	Test(ctx context.Context, b Build, n int) Health
	Leftovers(ctx context.Context, b Build) (a gate.Action, any bool, err error)
}

// RunConnectorsWith sets how connectors are tested (on approval, undo and switching on) and what
// removing one offers to delete for good. Without it no connector can pass its tests, so none turns on.
func (r *Builds) RunConnectorsWith(c ConnectorRunner) { r.runner = c }
