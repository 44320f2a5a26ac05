package connector

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// GlobalName is the global the bundled script sets to the entry's exports; the sandbox reads tools from it.
const GlobalName = "connectorExports"

const namespace = "bundle"

// bundle turns the files into one script with esbuild: imports resolve only to files of the bundle, the
// syntax is lowered to what the sandbox's engine runs (ES2017), and the entry must export tools. Problems
// go on the report with their file, line and column.
func (c *checker) bundle(files map[string]string, entry string) string {
	// An ES module build first, for the entry's export names; then the script itself.
	esm := build(files, entry, api.FormatESModule)
	if c.buildProblems(esm) {
		return ""
	}
	var meta struct {
		Outputs map[string]struct {
			Exports []string `json:"exports"`
		} `json:"outputs"`
	}
	_ = json.Unmarshal([]byte(esm.Metafile), &meta) // esbuild writes it; an unreadable one shows as no exports
	exported := false
	for _, o := range meta.Outputs {
		exported = exported || slices.Contains(o.Exports, "tools")
	}
	if !exported {
		c.add("files/"+entry, "exports no tools; write export const tools = { %s: async (args, ctx) => … }", "name")
		return ""
	}
	iife := build(files, entry, api.FormatIIFE)
	if c.buildProblems(iife) || len(iife.OutputFiles) != 1 {
		return ""
	}
	return string(iife.OutputFiles[0].Contents)
}

func (c *checker) buildProblems(r api.BuildResult) bool {
	for _, m := range r.Errors {
		where := "files"
		if l := m.Location; l != nil {
			where = fmt.Sprintf("files/%s:%d:%d", strings.TrimPrefix(l.File, namespace+":"), l.Line, l.Column+1)
		}
		why := m.Text
		if len(m.Notes) > 0 && m.PluginName == "" {
			why += " (" + m.Notes[0].Text + ")"
		}
		c.add(where, "%s", why)
	}
	return len(r.Errors) > 0
}

func build(files map[string]string, entry string, format api.Format) api.BuildResult {
	return api.Build(api.BuildOptions{
		EntryPoints:   []string{entry},
		Bundle:        true,
		Write:         false,
		Outfile:       "connector.js",
		Format:        format,
		GlobalName:    GlobalName,
		Target:        api.ES2017,
		Platform:      api.PlatformNeutral,
		Charset:       api.CharsetUTF8,
		LegalComments: api.LegalCommentsNone,
		Metafile:      format == api.FormatESModule,
		LogLevel:      api.LogLevelSilent,
		Plugins:       []api.Plugin{inMemory(files)},
		// An ES module is strict code; the script keeps it so (a frozen ctx stays frozen, and so on).
		Banner: map[string]string{"js": `"use strict";`},
	})
}

// inMemory serves the bundle's own files to esbuild and refuses every other import: no packages, no
// Node built-ins, no URLs, nothing from the disk.
func inMemory(files map[string]string) api.Plugin {
	return api.Plugin{Name: "box-bundle", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			p := a.Path
			if a.Kind != api.ResolveEntryPoint {
				if !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") {
					return api.OnResolveResult{}, fmt.Errorf("%q is not a file of the bundle: a connector imports only its own files (./name.mjs), never packages, Node built-ins or URLs", a.Path)
				}
				p = path.Join(path.Dir(a.Importer), p)
			}
			if _, ok := files[p]; !ok || strings.HasPrefix(p, "../") {
				return api.OnResolveResult{}, fmt.Errorf("%q is not a file of the bundle", a.Path)
			}
			return api.OnResolveResult{Path: p, Namespace: namespace}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: namespace}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			text := files[a.Path]
			loader := api.LoaderJS
			if path.Ext(a.Path) == ".json" {
				loader = api.LoaderJSON
			}
			return api.OnLoadResult{Contents: &text, Loader: loader}, nil
		})
	}}
}
