package mcp

import (
	"context"
	"encoding/json"
	"net/url"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/gate"
)

// The connector tools of "Can build for my box" (docs/CONNECTORS.md, "Cards"): validate_build checks a
// bundle and answers every problem (never isError for a bad bundle); propose_connector and update_build
// check it the same way and hand it to the gate, which makes the card.

type (
	// bundleIn is a connector as sent. Its fields are read again from the raw arguments, so the manifest
	// is checked as the client wrote it (a key written twice is refused, not merged).
	bundleIn struct {
		Manifest map[string]any `json:"manifest" jsonschema:"name, what, emoji, egress (hosts, at most 10), credentials, tools (each with inputSchema and effect read or write), test, limits; docs in build_guide"`
		Files    map[string]any `json:"files" jsonschema:"the connector's files by name, e.g. {\"index.mjs\": \"export const tools = {…}\"}; ctx.fetch is its only way out"`
	}
	updateBundleIn struct {
		ID       string         `json:"id" jsonschema:"the connector to update, from list_builds"`
		Manifest map[string]any `json:"manifest"`
		Files    map[string]any `json:"files"`
	}
)

// rawBundle reads the manifest and files from the call's own bytes.
func rawBundle(req *sdk.CallToolRequest) builds.ConnectorInput {
	var raw struct {
		Manifest json.RawMessage `json:"manifest"`
		Files    json.RawMessage `json:"files"`
	}
	if req != nil && req.Params != nil {
		_ = json.Unmarshal(req.Params.Arguments, &raw) // arguments that are not an object were refused by their schema
	}
	return builds.ConnectorInput{Manifest: raw.Manifest, Files: raw.Files}
}

// checkOptions are the connector checks' options for this box: its own names include the host of the
// address it is served at.
func (ss *session) checkOptions(ctx context.Context) connector.Options {
	var hosts []string
	if u, err := url.Parse(ss.svc.Address); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	if ss.svc.Connectors == nil {
		return connector.Options{BoxHosts: hosts}
	}
	return ss.svc.Connectors.CheckOptions(ctx, hosts...)
}

// canBuild refuses a proposal on a box whose machine cannot run connectors.
func canBuild(opts connector.Options) error {
	if !opts.BoxCanBuild {
		return refusal("Not proposed: this box can't run connectors (its sandbox needs Linux); tell the owner that connectors need the box on a Linux machine.")
	}
	return nil
}

const connectorNote = " The owner sees who sent it, every host, the keys it needs and whether each tool reads or writes; approved, its tests run boxed on empty state and it turns on only if they pass (build_status)."

func connectorTools() []tool {
	return []tool{
		define(build, sdk.Tool{Name: "validate_build", Annotations: readOnly,
			Description: "Check a connector (manifest + files) without proposing it: {ok, boxCanBuild, problems: [{where, why}]} with every problem at once. A bad bundle is an answer, not an error."},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, _ bundleIn) (connector.Report, error) {
				in := rawBundle(req)
				_, rep := builds.CheckConnector(in, ss.checkOptions(ctx))
				return rep, nil
			}),
		define(build, sdk.Tool{Name: "propose_connector", Annotations: additive,
			Description: "Propose a connector: code that reaches one more site for the box, run boxed (ctx.fetch to its declared hosts only; keys as {{key:NAME}} placeholders the box fills in). Always a card the owner approves (Add a connector); refusals say \"Not proposed: <why>\"." + connectorNote},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, _ bundleIn) (proposeOut, error) {
				return sendBundle(ctx, ss, req, (*builds.Builds).ProposeConnector)
			}),
		define(build, sdk.Tool{Name: "update_build", Annotations: additive,
			Description: "Send a new version of an installed connector (the whole manifest and files again, same id): another card, \"Let a connector reach more\" when it reaches further. A version that fails its tests puts the previous one back." + connectorNote},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, in updateBundleIn) (proposeOut, error) {
				return sendBundle(ctx, ss, req, func(r *builds.Builds, ctx context.Context, b builds.ConnectorInput, o connector.Options, who gate.Asker) (builds.Proposal, error) {
					return r.UpdateConnector(ctx, in.ID, b, o, who)
				})
			}),
	}
}

// sendBundle is propose_connector and update_build: refused at once on a box that cannot run
// connectors, else the bundle as the client wrote it goes to send, which checks it and makes the card.
func sendBundle(ctx context.Context, ss *session, req *sdk.CallToolRequest,
	send func(*builds.Builds, context.Context, builds.ConnectorInput, connector.Options, gate.Asker) (builds.Proposal, error)) (proposeOut, error) {
	r, err := ss.builds()
	if err != nil {
		return proposeOut{}, err
	}
	opts := ss.checkOptions(ctx)
	if err := canBuild(opts); err != nil {
		return proposeOut{}, err
	}
	p, err := send(r, ctx, rawBundle(req), opts, ss.asker(req))
	return proposed(p), notProposed(err)
}
