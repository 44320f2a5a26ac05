package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/todo"
)

// todoListOutput is the --json shape of box todo list.
type todoListOutput struct {
	Lists []todo.List `json:"lists"`
}

func todoCmd(g *Global) *cobra.Command {
	c := &cobra.Command{Use: "todo", Short: "The owner's to-do lists: add, done, list"}
	c.AddCommand(todoAddCmd(g), todoDoneCmd(g), todoListCmd(g))
	return c
}

type todoAddOptions struct{ list string }

func todoAddCmd(g *Global) *cobra.Command {
	var o todoAddOptions
	c := &cobra.Command{
		Use:   "add TEXT [--list NAME]",
		Short: "Add a to-do (to the list todo, or --list; a new list is made when named)",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runTodoAdd(cmd.Context(), g, o, args) },
	}
	c.Flags().StringVar(&o.list, "list", "", "the list, lower-case with dashes (default todo)")
	return c
}

func runTodoAdd(ctx context.Context, g *Global, o todoAddOptions, args []string) error {
	return g.change(ctx, "box todo add", func(a *app.App) error {
		it, err := a.Todos.Add(ctx, owner(""), o.list, strings.Join(args, " "))
		if err != nil {
			return err
		}
		return g.emit(it, func(w io.Writer) { _, _ = fmt.Fprintf(w, "%s  %s\n", it.ID, it.Text) })
	})
}

func todoDoneCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "done ID",
		Short: "Tick off a to-do by its id (t-…), or by its exact text",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runTodoDone(cmd.Context(), g, args) },
	}
}

func runTodoDone(ctx context.Context, g *Global, args []string) error {
	return g.change(ctx, "box todo done", func(a *app.App) error {
		it, err := a.Todos.Done(ctx, owner(""), strings.Join(args, " "))
		if err != nil {
			return err
		}
		return g.emit(it, func(w io.Writer) { _, _ = fmt.Fprintf(w, "done: %s\n", it.Text) })
	})
}

type todoListOptions struct {
	list string
	all  bool
}

func todoListCmd(g *Global) *cobra.Command {
	var o todoListOptions
	c := &cobra.Command{
		Use:   "list",
		Short: "The lists and their open items (--all: the ticked ones too)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runTodoList(cmd.Context(), g, o) },
	}
	c.Flags().StringVar(&o.list, "list", "", "only this list")
	c.Flags().BoolVar(&o.all, "all", false, "also items already ticked off")
	return c
}

func runTodoList(ctx context.Context, g *Global, o todoListOptions) error {
	return g.read(ctx, func(a *app.App) error {
		lists, err := a.Todos.Lists(ctx)
		if err != nil {
			return err
		}
		out := todoListOutput{Lists: []todo.List{}}
		for _, l := range lists {
			if o.list != "" && l.Name != o.list {
				continue
			}
			items := []todo.Item{}
			for _, it := range l.Items {
				if o.all || !it.Done {
					items = append(items, it)
				}
			}
			l.Items = items
			out.Lists = append(out.Lists, l)
		}
		return g.emit(out, func(w io.Writer) {
			for _, l := range out.Lists {
				_, _ = fmt.Fprintf(w, "%s\n", l.Title)
				for _, it := range l.Items {
					mark := " "
					if it.Done {
						mark = "x"
					}
					_, _ = fmt.Fprintf(w, "  [%s] %s  %s\n", mark, it.ID, it.Text)
				}
			}
		})
	})
}
