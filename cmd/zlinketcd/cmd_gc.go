package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/internal/inspect"
)

// gcCommand removes the rows of owners whose lease is gone.
func gcCommand() command {
	return command{
		name:    "gc",
		summary: "remove the rows of owners whose lease is gone (dry run unless --apply)",
		help: `Rows outlive their owner's lease until they are taken over or removed
(decision E-1). gc lists, from the owner index, every owner id that holds
rows but no owner lease, with what it holds, and then runs the store's
garbage collector: the location rows of those owners (descriptors, peers,
spots, actors, routes, with their entry-spot claims), stale owner-index
entries, expired creation terminals and reservation terminals older than
--terminal-age. Authority records never expire and are kept.

Without --apply nothing is removed: the summary says what would be.`,
		flags: func(fs *flag.FlagSet) runFunc {
			apply := fs.Bool("apply", false, "remove what the dry run reports")
			age := fs.Duration("terminal-age", etcdstore.DefaultReservationTerminalAge, "purge reservation terminals older than this (negative keeps them)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 0 {
					return usageErrorf("gc takes no arguments, got %q", strings.Join(args, " "))
				}
				s, err := open(ctx, e.conn, e.stderr, e.log)
				if err != nil {
					return err
				}
				defer s.close()
				return runGC(ctx, e.stdout, s, etcdstore.GCOptions{DryRun: !*apply, ReservationTerminalAge: *age})
			}
		},
	}
}

// runGC prints the dead owners' holdings, collects and prints a summary.
func runGC(ctx context.Context, w io.Writer, s *session, opts etcdstore.GCOptions) error {
	mode := "dry run: nothing is removed (--apply removes)"
	if !opts.DryRun {
		mode = "applying"
	}
	fmt.Fprintf(w, "gc: %s under %s on %s\n", mode, s.cfg.Prefix, s.describe)
	fmt.Fprintln(w, "gc: reading the owner index…")
	holdings, err := inspect.NewReader(s.client, s.store).Holdings(ctx)
	if err != nil {
		return err
	}
	var dead []inspect.Holdings
	for _, h := range holdings {
		if !h.Live {
			dead = append(dead, h)
		}
	}
	fmt.Fprintf(w, "gc: %d owner(s) hold rows, %d of them without a lease\n", len(holdings), len(dead))
	if len(dead) > 0 {
		writeHoldings(w, dead)
	}
	fmt.Fprintln(w, "gc: collecting…")
	began := time.Now()
	rep, err := s.store.CollectGarbage(ctx, opts)
	if err != nil {
		return fmt.Errorf("collect garbage: %w", err)
	}
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	owners := "none"
	if len(rep.DeadOwners) > 0 {
		owners = strings.Join(rep.DeadOwners, ", ")
	}
	fmt.Fprintf(w, "\nSUMMARY (%s, %s)\n", verb, time.Since(began).Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  dead owners\t%d\t%s\n", len(rep.DeadOwners), owners)
	fmt.Fprintf(tw, "  location rows\t%d\n", rep.Rows)
	fmt.Fprintf(tw, "  stale owner-index entries\t%d\n", rep.StaleIndexEntries)
	fmt.Fprintf(tw, "  expired creation terminals\t%d\n", rep.OperationTerminals)
	fmt.Fprintf(tw, "  old reservation terminals\t%d\n", rep.ReservationTerminals)
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.DryRun && rep.Rows+rep.StaleIndexEntries+rep.OperationTerminals+rep.ReservationTerminals > 0 {
		fmt.Fprintln(w, "gc: dry run; run again with --apply to remove these")
	}
	return nil
}

// writeHoldings prints one line per dead owner with its entries per table.
func writeHoldings(w io.Writer, dead []inspect.Holdings) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  OWNER\tENTRIES\tBY TABLE")
	for _, h := range dead {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(h.Tables)) {
			note := ""
			if t == "authority" {
				note = " (kept)"
			}
			parts = append(parts, fmt.Sprintf("%s %d%s", t, h.Tables[t], note))
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", h.OwnerID, h.Total, strings.Join(parts, ", "))
	}
	_ = tw.Flush()
}
