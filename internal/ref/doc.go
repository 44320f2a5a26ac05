// Package ref owns references between box files: extracting them from cards and Markdown, resolving them (fail closed), broken-ref and case-collision findings, and the canonical /-form rewrite.
// It parses what it needs itself and must not touch card schemas, Markdoc validation or any file beyond the refs it rewrites.
package ref
